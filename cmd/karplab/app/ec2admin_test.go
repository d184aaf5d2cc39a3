package app

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/karplab/karplab/fakeec2"
)

// run runs the CLI in-process and returns exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := Run(append([]string{"karplab"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestEC2AdminCommands drives the emulator's admin commands against a real emulator, and
// checks their effect through the EC2 API as a client would see it.
func TestEC2AdminCommands(t *testing.T) {
	t.Setenv("KARPLAB_HOME", t.TempDir()) // no running lab: --endpoint is what counts
	t.Setenv("AWS_ENDPOINT_URL", "")
	srv, err := fakeec2.New(fakeec2.Options{BootDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	client := ec2.New(ec2.Options{Region: "eu-west-2", BaseEndpoint: aws.String(ts.URL), HTTPClient: fakeec2.NewHTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIATESTLEARNER00000", "secret", ""), RetryMaxAttempts: 1})
	ctx := context.Background()
	ep := "--endpoint=" + ts.URL

	// A capacity fault makes the matching launch fail the way AWS does.
	if code, _, errOut := run(t, "ec2", "fault", "add", ep, "--kind", "insufficient-capacity", "--type", "m6i.large", "--zone", "eu-west-2a"); code != 0 {
		t.Fatalf("fault add: exit %d: %s", code, errOut)
	}
	_, out, _ := run(t, "ec2", "fault", "list", ep)
	if !strings.Contains(out, "insufficient-capacity") || !strings.Contains(out, "type=m6i.large") {
		t.Errorf("fault list:\n%s", out)
	}
	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	if err != nil || len(images.Images) == 0 {
		t.Fatalf("images: %v", err)
	}
	launch := func() error {
		_, err := client.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, InstanceType: ec2types.InstanceTypeM6iLarge,
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1), Placement: &ec2types.Placement{AvailabilityZone: aws.String("eu-west-2a")}})
		return err
	}
	var apiErr smithy.APIError
	if err := launch(); err == nil || !errorsAs(err, &apiErr) || apiErr.ErrorCode() != "InsufficientInstanceCapacity" {
		t.Fatalf("launch under the fault: %v, want InsufficientInstanceCapacity", err)
	}
	if code, _, errOut := run(t, "ec2", "fault", "clear", ep); code != 0 {
		t.Fatalf("fault clear: %s", errOut)
	}
	if err := launch(); err != nil {
		t.Fatalf("launch after clearing: %v", err)
	}

	// A policy from YAML denies what it does not allow, and the denial is decodable.
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(policy, []byte("statements:\n  - sid: no-m6i\n    deniedInstanceTypes: [\"m6i.*\"]\n"), 0o644)
	if code, _, errOut := run(t, "ec2", "policy", "set", ep, policy); code != 0 {
		t.Fatalf("policy set: %s", errOut)
	}
	if _, out, _ := run(t, "ec2", "policy", "get", ep); !strings.Contains(out, "no-m6i") {
		t.Errorf("policy get:\n%s", out)
	}
	err = launch()
	if !errorsAs(err, &apiErr) || apiErr.ErrorCode() != "UnauthorizedOperation" {
		t.Fatalf("launch under the policy: %v, want UnauthorizedOperation", err)
	}
	encoded := apiErr.ErrorMessage()[strings.LastIndex(apiErr.ErrorMessage(), " ")+1:]
	if code, out, errOut := run(t, "ec2", "decode", ep, encoded); code != 0 || !strings.Contains(out, "no-m6i") {
		t.Errorf("decode: exit %d, %q %q; want the statement named", code, out, errOut)
	}
	if code, _, _ := run(t, "ec2", "policy", "set", ep, filepath.Join(t.TempDir(), "missing.yaml")); code != ExitError {
		t.Errorf("policy set of a missing file: exit %d, want %d", code, ExitError)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("statements:\n  - sid: x\n    allowedZone: [eu-west-2a]\n"), 0o644)
	if code, _, errOut := run(t, "ec2", "policy", "set", ep, bad); code != ExitError || !strings.Contains(errOut, "allowedZone") {
		t.Errorf("policy with an unknown field: exit %d, %q; want exit 2 naming the field", code, errOut)
	}

	// The audit trail and the ledger show all of it.
	_, out, _ = run(t, "ec2", "audit", ep, "--action", "RunInstances")
	for _, want := range []string{"InsufficientInstanceCapacity", "created i-", "UnauthorizedOperation", "AKIATESTLEARNER00000"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = run(t, "ec2", "billing", ep)
	if !strings.Contains(out, "m6i.large on-demand") || !strings.Contains(out, "total") {
		t.Errorf("billing:\n%s", out)
	}
	if code, _, errOut := run(t, "ec2", "audit"); code != ExitError || !strings.Contains(errOut, "karplab start") {
		t.Errorf("audit without an emulator: exit %d, %q", code, errOut)
	}
}

func errorsAs(err error, target *smithy.APIError) bool { return errors.As(err, target) }
