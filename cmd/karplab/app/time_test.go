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

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/fakeec2"
)

// TestTimeSkipCommand skips a day of lab time over five tagged nodes with the CLI: it
// prints the span, its cost by NodePool and the budget alert that fired on the way, and
// karplab time shows the account a day ahead of the wall clock.
func TestTimeSkipCommand(t *testing.T) {
	t.Setenv("KARPLAB_HOME", t.TempDir())
	t.Setenv("AWS_ENDPOINT_URL", "")
	clock := fakeec2.NewFakeClock(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	srv, err := fakeec2.New(fakeec2.Options{BootDelay: -1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	ep := "--endpoint=" + ts.URL

	if code, _, errOut := run(t, "ec2", "budget", "set", "ziba-general", ep, "--limit", "5.00", "--alert", "80%",
		"--tag", "karpenter.sh/nodepool=ziba-general"); code != 0 {
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

	code, out, errOut := run(t, "time", "skip", "1d", ep) // 5 x 0.111 $/h: 80% of 5 $ after about 7.2h
	if code != 0 {
		t.Fatalf("time skip 1d: exit %d: %s", code, errOut)
	}
	for _, want := range [][]string{{"skipped 24h0m0s: 2026-11-02 00:00:00 UTC -> 2026-11-03 00:00:00 UTC"},
		{"  ziba-general ", " 13.3200"}, {"(no karpenter.sh/nodepool tag)"},
		{"ziba-general ", " ACTUAL ", " > 80% (4.00 USD) ", " 4.0053 ", " 2026-11-02 07:13:00 UTC"}} {
		if !hasLine(out, want...) {
			t.Errorf("time skip lacks a line with %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "Karpenter is not part of this emulator: only the account's clock moved") {
		t.Errorf("time skip on the emulator alone does not say Karpenter did not move:\n%s", out)
	}
	_, out, _ = run(t, "time", ep)
	if !strings.Contains(out, "lab time   2026-11-03 00:00:00 UTC") || !strings.Contains(out, "offset     24h0m0s ahead") {
		t.Errorf("karplab time:\n%s", out)
	}
	_, out, _ = run(t, "time", ep, "--json")
	if !strings.Contains(out, `"offsetText": "24h0m0s"`) {
		t.Errorf("karplab time --json:\n%s", out)
	}
	_, out, _ = run(t, "time", "skip", "--help")
	for _, want := range []string{"AWS Budgets", "EventBridge", "Karpenter's controllers", "consolidateAfter, expireAfter", "registration timeout", "wall clock", "karplab reset"} {
		if !strings.Contains(out, want) {
			t.Errorf("time skip --help does not say %q:\n%s", want, out)
		}
	}
}

// TestTimeSkipUsage refuses what is no skip before looking for a lab.
func TestTimeSkipUsage(t *testing.T) {
	t.Setenv("KARPLAB_HOME", t.TempDir()) // no lab: the arguments fail first
	t.Setenv("AWS_ENDPOINT_URL", "")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{name: "no duration", args: []string{"time", "skip"}, want: "name one duration"},
		{name: "not a duration", args: []string{"time", "skip", "soon"}, want: `duration "soon": want a Go duration or days`},
		{name: "zero", args: []string{"time", "skip", "0s"}, want: "duration 0s: skip at least 1s (e.g. 5m, 2h, 720h)"},
		{name: "backwards", args: []string{"time", "skip", "--", "-5m"}, want: "duration -5m0s: skip at least 1s"},
		{name: "too far", args: []string{"time", "skip", "401d"}, want: "skip at most 9600h"},
		{name: "no lab", args: []string{"time", "skip", "30d"}, want: "no EC2 emulator"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := run(t, tt.args...)
			if code != ExitError || !strings.Contains(errOut, tt.want) {
				t.Errorf("karplab %v: exit %d, stderr %q; want exit 2 containing %q", tt.args, code, errOut, tt.want)
			}
		})
	}
	for v, want := range map[string]time.Duration{"30d": 720 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseSkip(v); err != nil || got != want {
			t.Errorf("parseSkip(%q) = %s, %v; want %s", v, got, err, want)
		}
	}
}

// hasLine reports whether one line of out holds every part, in order.
func hasLine(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := line, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}

// TestPrintDueNamesWhatKeepsANodeBusy: a consolidatable NodeClaim whose node still runs
// pods is said not to be empty, with the pods and where Karpenter says why it stays; an
// empty one gets how long Karpenter takes, and so does one that was consolidatable before
// the skip and is empty now.
func TestPrintDueNamesWhatKeepsANodeBusy(t *testing.T) {
	at := time.Date(2026, 12, 4, 21, 9, 53, 0, time.UTC)
	due := func(pods ...string) *cluster.LabTimeSkip {
		return &cluster.LabTimeSkip{KarpenterFollowed: true, Due: []karpenter.Due{{Kind: karpenter.DueConsolidatable,
			NodeClaim: "ziba-general-q4d5b", NodePool: "ziba-general", At: at, What: "consolidateAfter 5m0s since its last pod event", Pods: pods}}}
	}
	tests := []struct {
		name      string
		skip      *cluster.LabTimeSkip
		want, not []string
	}{
		{name: "empty", skip: due(), want: []string{"ziba-general-q4d5b", "an empty node goes about 30 s after the skip"}, not: []string{"not empty", "Unconsolidatable"}},
		{name: "one pod", skip: due("ziba/ziba-render-worker-example"),
			want: []string{"not empty, its node still runs 1 pod: ziba/ziba-render-worker-example", "--field-selector reason=Unconsolidatable"}, not: []string{"an empty node goes"}},
		{name: "many pods", skip: due("a/p1", "a/p2", "a/p3", "a/p4", "a/p5"), want: []string{"5 pods: a/p1, a/p2, a/p3 and 2 more"}},
		{name: "nothing came due, but a node was consolidatable already and is empty now",
			skip: &cluster.LabTimeSkip{KarpenterFollowed: true, Empty: []karpenter.Due{{Kind: karpenter.DueConsolidatable,
				NodeClaim: "ziba-general-q4d5b", NodePool: "ziba-general", At: at}}},
			want: []string{"no NodeClaim decision came due",
				"ziba-general-q4d5b (NodePool ziba-general) was consolidatable before the skip", "Karpenter removes it at its next look"},
			not: []string{"NODECLAIM"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := printDue(&b, tt.skip); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in:\n%s", w, b.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("unexpected %q in:\n%s", n, b.String())
				}
			}
		})
	}
}
