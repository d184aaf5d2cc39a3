package kubelet

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
)

func TestKwokStages(t *testing.T) {
	stages, err := kwokStages()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for ref, list := range stages {
		for _, s := range list {
			got[ref.APIGroup+"/"+ref.Kind] = append(got[ref.APIGroup+"/"+ref.Kind], s.Name)
		}
	}
	want := map[string][]string{
		"v1/Node": {"node-initialize", "node-heartbeat-with-lease"},
		"v1/Pod":  {"pod-ready", "pod-complete", "pod-delete"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}

func TestKwokLogger(t *testing.T) {
	tests := []struct {
		name     string
		level    slog.Level
		logInfo  bool // kwok Info line expected (demoted to Debug)
		logError bool // kwok Error line expected (demoted to Warn)
	}{
		{name: "debug handler sees kwok's info lines", level: slog.LevelDebug, logInfo: true, logError: true},
		{name: "info handler sees only kwok's errors", level: slog.LevelInfo, logError: true},
		{name: "error handler sees nothing", level: slog.LevelError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level})
			l := newKwokLogger(h).With("node", "ip-10-0-1-23")
			l.Info("Syncing lease")
			l.Error("Failed to sync lease", "err", "boom")
			l.Error("failed to apply stage", "err", `pods "worker" not found`)
			out := buf.String()
			if got := strings.Contains(out, `level=DEBUG msg="kwok: Syncing lease" node=ip-10-0-1-23`); got != tt.logInfo {
				t.Errorf("info line logged = %v, want %v; output:\n%s", got, tt.logInfo, out)
			}
			if got := strings.Contains(out, `level=WARN msg="kwok: Failed to sync lease" err=boom node=ip-10-0-1-23`); got != tt.logError {
				t.Errorf("error line logged = %v, want %v; output:\n%s", got, tt.logError, out)
			}
			// A benign race is only Debug detail.
			if got := strings.Contains(out, `level=DEBUG msg="kwok: failed to apply stage"`); got != tt.logInfo {
				t.Errorf("not-found line logged at Debug = %v, want %v; output:\n%s", got, tt.logInfo, out)
			}
		})
	}
}

func TestBootstrapFaultMatches(t *testing.T) {
	inst := ec2types.Instance{
		InstanceId: aws.String("i-1"),
		Tags: []ec2types.Tag{
			{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("ziba-general")},
			{Key: aws.String("kubernetes.io/cluster/karplab"), Value: aws.String("owned")},
		},
	}
	tests := []struct {
		name  string
		fault BootstrapFault
		want  bool
	}{
		{name: "empty selects all", want: true},
		{name: "by ID", fault: BootstrapFault{InstanceIDs: []string{"i-0", "i-1"}}, want: true},
		{name: "other ID", fault: BootstrapFault{InstanceIDs: []string{"i-2"}}},
		{name: "by tag", fault: BootstrapFault{Tags: map[string]string{"karpenter.sh/nodepool": "ziba-general"}}, want: true},
		{name: "tag value differs", fault: BootstrapFault{Tags: map[string]string{"karpenter.sh/nodepool": "other"}}},
		{name: "ID and missing tag", fault: BootstrapFault{InstanceIDs: []string{"i-1"}, Tags: map[string]string{"team": "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fault.matches(inst); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBreakAndRepairBootstrap(t *testing.T) {
	k := &Kubelet{instances: map[string]*instanceState{}}
	inst := ec2types.Instance{InstanceId: aws.String("i-1")}
	if _, ok := k.faultFor(inst); ok {
		t.Fatal("fault before BreakBootstrap")
	}
	ids := []string{"i-1"}
	k.BreakBootstrap(BootstrapFault{InstanceIDs: ids})
	ids[0] = "i-changed" // the fault keeps its own copy
	f, ok := k.faultFor(inst)
	if !ok || f.Reason != "bootstrap broken by fault injection" {
		t.Fatalf("faultFor = %+v, %v; want the default-reason fault", f, ok)
	}
	if got := len(k.BootstrapFaults()); got != 1 {
		t.Fatalf("BootstrapFaults has %d faults, want 1", got)
	}
	k.RepairBootstrap()
	if _, ok := k.faultFor(inst); ok {
		t.Fatal("fault after RepairBootstrap")
	}
}

func TestNewValidates(t *testing.T) {
	_, err := New(Options{})
	if err == nil || !strings.Contains(err.Error(), "RESTConfig is required") {
		t.Fatalf("New(Options{}) error = %v", err)
	}
}
