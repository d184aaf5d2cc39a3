package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A public case as a test: kubernetes-sigs/karpenter#2227, reproduced in
// aws/karpenter-provider-aws#8637, as its reporter could have written the bundle by hand
// (us-east-1, six zones; its README says what it holds). Another team's
// NodePool lists zones no subnet covers; Karpenter v1.15.0 counts them as topology domains,
// cannot meet the workload's preferred zonal spread (maxSkew 1, ScheduleAnyway) and drops
// it: the six one-per-node replicas land unevenly over the three zones that have subnets.
// With that NodePool narrowed to those zones (the report's own fix), the spread holds.
func TestIntegrationReplayKarpenter2227(t *testing.T) {
	src := filepath.Join("..", "..", "labs", "replay", "testdata", "karpenter-2227")
	for _, tc := range []struct {
		name    string
		narrow  bool
		uneven  bool
		explain string
	}{
		{name: "as reported", uneven: true, explain: "the zonal spread is dropped"},
		{name: "misconfigured pool narrowed", narrow: true, explain: "the spread holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bundle := t.TempDir()
			for _, f := range []string{"cluster.yaml", "karpenter.yaml"} {
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if tc.narrow {
					for _, z := range []string{"us-east-1d", "us-east-1e", "us-east-1f"} {
						b = []byte(strings.ReplaceAll(string(b), "        - "+z+"\n", ""))
					}
				}
				if err := os.WriteFile(filepath.Join(bundle, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			l := newLab(t)
			r := l.run("replay", "--ec2-addr", l.ec2Addr, "--watch", "50s", bundle)
			if r.code != 0 {
				t.Fatalf("karplab replay: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			zones := l.mustRun("kubectl", "get", "nodeclaims", "-o", `jsonpath={range .items[*]}{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}`).stdout
			count := map[string]int{}
			for _, z := range strings.Fields(zones) {
				count[z]++
			}
			var n []int
			for _, z := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
				n = append(n, count[z])
			}
			spread := slices.Max(n) - slices.Min(n)
			t.Logf("%s: NodeClaims per zone 1a/1b/1c %v (%s expected)", tc.name, n, tc.explain)
			if total := n[0] + n[1] + n[2]; total != 6 {
				t.Fatalf("%d NodeClaims in us-east-1a..c (%v), want one per replica (6); report:\n%s", total, count, r.stdout)
			}
			if tc.uneven != (spread > 1) {
				t.Errorf("%s: zones %v (skew %d), want %s; report:\n%s", tc.name, n, spread, tc.explain, r.stdout)
			}
			// The bundle's LOG_LEVEL=debug is carried over: Karpenter says what it relaxed.
			logs, _ := os.ReadFile(filepath.Join(l.home, "karpenter.log"))
			if relaxed := strings.Contains(string(logs), "relaxing soft constraints"); tc.uneven && !relaxed {
				t.Errorf("%s: Karpenter's debug log never says it relaxed the spread", tc.name)
			}
			l.mustRun("stop")
		})
	}
}

// A replay whose load the API server refuses (a pod name Kubernetes does not allow) fails
// naming the object, and leaves no half-loaded lab: nothing runs, and the home holds none of
// the lab's data.
func TestIntegrationReplayFailedLoadLeavesNothing(t *testing.T) {
	bundle := t.TempDir()
	src := filepath.Join("..", "..", "labs", "replay", "testdata", "karpenter-2227")
	for _, f := range []string{"cluster.yaml", "karpenter.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "cluster.yaml" {
			b = append(b, []byte("---\napiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name, namespace: repro}\nspec: {containers: [{name: c, image: busybox}]}\n")...)
		}
		if err := os.WriteFile(filepath.Join(bundle, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l := newLab(t)
	r := l.run("replay", "--ec2-addr", l.ec2Addr, "--watch", "1s", bundle)
	if r.code == 0 || !strings.Contains(r.stderr, "Pod repro/Bad_Name") {
		t.Fatalf("a replay the API server refuses: exit %d, want an error naming the pod\n%s", r.code, r.stderr)
	}
	if pid := l.pid(); pid > 0 {
		t.Errorf("daemon %d still runs after a failed replay", pid)
	}
	for _, left := range []string{"controlplane", "ec2", "account.json", "replay.json", "kubeconfig"} {
		if _, err := os.Stat(filepath.Join(l.home, left)); err == nil {
			t.Errorf("a failed replay left %s in the home", left)
		}
	}
}
