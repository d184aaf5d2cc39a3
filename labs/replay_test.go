package labs

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The first acceptance test of karplab replay: a bundle with no pending pods and nothing to
// consolidate, captured from a lab whose happy path ran, replayed into a fresh lab on
// another home. Karpenter adopts the replayed nodes and does nothing: no launch,
// termination, drift or garbage collection, through ten minutes of lab time. The lab's own
// cluster node (not an EC2 instance) and its pods are left out, saying so.
func TestIntegrationReplayAdoptsALab(t *testing.T) {
	e := freshLab(t)
	l, _ := Get("happy-path")
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "incident")
	if out, err := runShell(t, "/usr/bin", `karplab capture --aws "$2"`, bundle); err != nil {
		t.Fatalf("karplab capture: %v\n%s", err, out)
	}
	home := filepath.Join(t.TempDir(), "replay-home")
	replayed := func(script string, args ...string) (string, error) {
		return runShell(t, "/usr/bin", `export KARPLAB_HOME="$2"; eval "$(karplab env 2>/dev/null)"; `+script, append([]string{home}, args...)...)
	}
	t.Cleanup(func() {
		// Not runShell: the test's context is done by now, and the lab must still stop.
		stop := exec.Command(binary.exe, "stop")
		stop.Env = append(os.Environ(), "KARPLAB_HOME="+home)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("karplab stop in the replay's home: %v\n%s", err, out)
		}
	})
	begin := time.Now()
	// A port of its own: the pool's labs start at once, and the default may be anybody's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out, err := replayed(`karplab replay --ec2-addr "$4" --watch 20s "$3"`, bundle, addr)
	logPhase(t, "replay", time.Since(begin))
	if err != nil {
		t.Fatalf("karplab replay: %v\n%s", err, out)
	}
	t.Logf("karplab replay:\n%s", out)
	for _, want := range []string{"left out: 1 Nodes that are not EC2 instances", "Deployments whose pods all ran on nodes the lab does not run", "Karpenter adopted the replayed nodes and did nothing", "Pods pending:\n  none"} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay's report does not say %q", want)
		}
	}
	claims := func() []string {
		out, err := replayed(`karplab kubectl get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}={.status.providerID}{"\n"}{end}'`)
		if err != nil {
			t.Fatalf("listing NodeClaims in the replay: %v\n%s", err, out)
		}
		lines := strings.Fields(out)
		slices.Sort(lines)
		return lines
	}
	instances := func() []string {
		out, err := replayed(`aws ec2 describe-instances --filters Name=instance-state-name,Values=pending,running,stopping,shutting-down --query 'Reservations[].Instances[].InstanceId' --output text`)
		if err != nil {
			t.Fatalf("aws ec2 describe-instances in the replay: %v\n%s", err, out)
		}
		ids := strings.Fields(out)
		slices.Sort(ids)
		return ids
	}
	wantClaims, wantInstances := claims(), instances()
	orig, err := runShell(t, "/usr/bin", `karplab kubectl get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}={.status.providerID}{"\n"}{end}'`)
	if err != nil {
		t.Fatal(err)
	}
	o := strings.Fields(orig)
	slices.Sort(o)
	if !slices.Equal(o, wantClaims) || len(o) == 0 {
		t.Errorf("the replay's NodeClaims %v, the captured lab's %v", wantClaims, o)
	}

	if out, err := replayed(`karplab time skip 10m`); err != nil {
		t.Fatalf("karplab time skip 10m: %v\n%s", err, out)
	}
	time.Sleep(45 * time.Second) // Karpenter's controllers act on the new lab time
	if got := claims(); !slices.Equal(got, wantClaims) {
		t.Errorf("NodeClaims after 10m of lab time: %v, want them as replayed %v", got, wantClaims)
	}
	if got := instances(); !slices.Equal(got, wantInstances) {
		t.Errorf("instances after 10m of lab time: %v, want them as replayed %v", got, wantInstances)
	}
	// The evidence dates the replayed NodeClaims by their creation in the captured lab.
	capturedCreated := map[string]string{}
	out, err = runShell(t, "/usr/bin", `karplab kubectl get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.creationTimestamp}{"\n"}{end}'`)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Fields(out) {
		name, created, _ := strings.Cut(line, "=")
		capturedCreated[name] = created
	}
	evOut, err := replayed(`karplab evidence --json`)
	if err != nil {
		t.Fatalf("karplab evidence in the replay: %v\n%s", err, evOut)
	}
	var ev struct {
		Replay *struct {
			LoadedAt time.Time `json:"loadedAt"`
		} `json:"replay"`
		NodeClaims []struct {
			Name    string    `json:"name"`
			Created time.Time `json:"created"`
		} `json:"nodeClaims"`
	}
	if err := json.Unmarshal([]byte(evOut), &ev); err != nil || ev.Replay == nil || len(ev.NodeClaims) == 0 {
		t.Errorf("the replay's evidence names no replay or no NodeClaim (%v):\n%.2000s", err, evOut)
	} else {
		for _, c := range ev.NodeClaims {
			if got := c.Created.UTC().Format(time.RFC3339); got != capturedCreated[c.Name] || !c.Created.Before(ev.Replay.LoadedAt) {
				t.Errorf("NodeClaim %s dated %s; created in the captured lab %q, before the load (%s)", c.Name, got, capturedCreated[c.Name], ev.Replay.LoadedAt)
			}
		}
	}
	report, err := replayed(`karplab replay --report`)
	if err != nil {
		t.Fatalf("karplab replay --report: %v\n%s", err, report)
	}
	if !strings.Contains(report, "did nothing") || regexp.MustCompile(`(?m)^Launched:\n  NodeClaim`).MatchString(report) {
		t.Errorf("the report after 10m of lab time:\n%s", report)
	}
	logs, _ := os.ReadFile(filepath.Join(home, "karpenter.log"))
	for _, line := range strings.Split(string(logs), "\n") {
		var entry struct{ Message string }
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		msg := strings.ToLower(entry.Message)
		for _, bad := range []string{"garbage collect", "launched nodeclaim", "created nodeclaim", "deleted nodeclaim", "disrupting node", "terminating"} {
			if strings.Contains(msg, bad) {
				t.Errorf("Karpenter acted on the replayed cluster: %s", line)
			}
		}
	}
}
