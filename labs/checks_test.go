package labs

import (
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/labs/evidence"
)

// TestChainOrder: the order check orders only what causality does. The scheduler may bind
// to a Ready node before Karpenter marks its NodeClaim initialized; a NodeClaim not
// initialized yet is in flight, not out of order; a pod that started before its node
// registered is out of order.
func TestChainOrder(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	chain := func(initialized, scheduled *time.Time) *evidence.Evidence {
		return &evidence.Evidence{
			Pods: []evidence.PodRow{{Name: "w-1", Phase: "Running", NodeClaim: "nc-1", InstanceID: "i-1", Node: "n-1",
				PendingSince: at(0), ScheduledAt: scheduled, StartedAt: at(9)}},
			NodeClaims: []evidence.NodeClaimRow{{Name: "nc-1", ProviderID: "aws:///z/i-1", Created: *at(1), Launched: at(2),
				Registered: at(5), Initialized: initialized}},
			Instances: []evidence.InstanceRow{{ID: "i-1", NodeClaim: "nc-1", LaunchTime: *at(2)}},
			Nodes:     []evidence.NodeRow{{Name: "n-1", ProviderID: "aws:///z/i-1", Registered: *at(4)}},
		}
	}
	tests := []struct {
		name       string
		ev         *evidence.Evidence
		pass       bool
		wantReason string
	}{
		{name: "scheduled before initialized", ev: chain(at(8), at(6)), pass: true, wantReason: "all 1 chains in order"},
		{name: "not initialized yet", ev: chain(nil, at(6)), wantReason: "still in flight: the NodeClaims of 1 pod are not initialized yet"},
		{name: "scheduled before its node registered", ev: chain(at(8), at(2)), wantReason: "1 chains out of order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, order := checkChains(&Grading{Evidence: tt.ev, hist: evidence.DecodeHistory(nil)}, tt.ev.Pods)
			if order.Passed != tt.pass || !strings.Contains(order.Reason, tt.wantReason) {
				t.Errorf("order check passed %t (%q %v), want %t with %q", order.Passed, order.Reason, order.Evidence, tt.pass, tt.wantReason)
			}
		})
	}
}
