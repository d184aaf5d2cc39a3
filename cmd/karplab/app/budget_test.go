package app

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
)

// TestEC2BudgetCommands sets a cost alert with the CLI, runs up spend through the EC2 API
// on the emulator's clock, and reads the alerts back from budget list and the audit trail.
func TestEC2BudgetCommands(t *testing.T) {
	t.Setenv("KARPLAB_HOME", t.TempDir())
	t.Setenv("AWS_ENDPOINT_URL", "")
	clock := fakeec2.NewFakeClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	srv, err := fakeec2.New(fakeec2.Options{BootDelay: -1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	ep := "--endpoint=" + ts.URL

	code, _, errOut := run(t, "ec2", "budget", "set", "ziba-general", ep, "--limit", "5.00", "--alert", "80%", "--forecast", "100%",
		"--tag", "karpenter.sh/nodepool=ziba-general", "--email", "platform@ziba.example")
	if code != 0 || !strings.Contains(errOut, "budget ziba-general set: 5.00 USD daily, 2 alerts") {
		t.Fatalf("budget set: exit %d: %s", code, errOut)
	}
	client := ec2.New(ec2.Options{Region: "eu-west-2", BaseEndpoint: aws.String(ts.URL), HTTPClient: fakeec2.NewHTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIATESTLEARNER00000", "secret", ""), RetryMaxAttempts: 1})
	images, err := client.DescribeImages(context.Background(), &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	if err != nil || len(images.Images) == 0 {
		t.Fatalf("images: %v", err)
	}
	_, err = client.RunInstances(context.Background(), &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, InstanceType: ec2types.InstanceTypeM6iLarge,
		MinCount: aws.Int32(5), MaxCount: aws.Int32(5), TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance,
			Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("ziba-general")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(8 * time.Hour) // 5 x 0.111 $/h: 4.44 $

	_, out, _ := run(t, "ec2", "budget", "list", ep)
	for _, want := range []string{"ziba-general  daily   5.00   4.4400", "FORECASTED>100% ALARM", "ACTUAL>80% ALARM",
		"ziba-general fired: FORECASTED > 100% (5.00 USD): actual 0.0000", "ziba-general fired: ACTUAL > 80% (4.00 USD): actual 4.4400"} {
		if !strings.Contains(out, want) {
			t.Errorf("budget list lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = run(t, "ec2", "audit", ep, "--service", "budgets", "--action", "BudgetAlert")
	if !strings.Contains(out, "budgets.amazonaws.com") || !strings.Contains(out, "ziba-general ACTUAL > 80%: actual 4.44, forecast") {
		t.Errorf("audit of the alerts:\n%s", out)
	}
	_, out, _ = run(t, "ec2", "budget", "list", ep, "--json")
	if !strings.Contains(out, `"notificationType": "FORECASTED"`) || !strings.Contains(out, `"time": "2026-11-02T09:00:00Z"`) {
		t.Errorf("budget list --json:\n%s", out)
	}
	_, out, _ = run(t, "ec2", "budget", "--help")
	if !strings.Contains(out, "aws budgets describe-budgets --account-id 123456789012") || !strings.Contains(out, "FORECASTED") {
		t.Errorf("budget --help does not teach the alert and the API:\n%s", out)
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{name: "bad threshold", args: []string{"set", "x", ep, "--limit", "1", "--alert", "eighty"}, want: "--alert"},
		{name: "bad period", args: []string{"set", "x", ep, "--limit", "1", "--period", "yearly"}, want: "daily or monthly"},
		{name: "bad tag", args: []string{"set", "x", ep, "--limit", "1", "--tag", "nodepool"}, want: "KEY=VALUE"},
		{name: "refused by the service", args: []string{"set", "a:b", ep, "--limit", "1"}, want: "InvalidParameterException"},
		{name: "delete a missing one", args: []string{"delete", "none", ep}, want: "no such budget"},
	} {
		if code, _, errOut := run(t, append([]string{"ec2", "budget"}, tt.args...)...); code != ExitError || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, %q; want exit %d naming %q", tt.name, code, errOut, ExitError, tt.want)
		}
	}
	if code, _, errOut := run(t, "ec2", "budget", "delete", "ziba-general", ep); code != 0 {
		t.Fatalf("budget delete: exit %d: %s", code, errOut)
	}
	if _, out, _ := run(t, "ec2", "budget", "list", ep); strings.Contains(out, "ziba-general") {
		t.Errorf("budget list after delete:\n%s", out)
	}
}
