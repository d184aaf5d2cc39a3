package labs

import (
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/labs/evidence"
)

// A consolidation replacement launches while the machine it replaces still drains: Karpenter
// stopped counting that one when it marked it for disruption, so the overlap is within the
// limits. The same two machines with no disruption are over them.
func TestLimitsCountUntilKarpenterLetsGo(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	pool := karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: generalPool, UID: "np"},
		Spec: karpv1.NodePoolSpec{Limits: karpv1.Limits{corev1.ResourceCPU: resource.MustParse("200")}}}
	claim := func(name string, created int, disrupted *int) *evidence.Versions[karpv1.NodeClaim] {
		nc := karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at(created)),
			Labels: map[string]string{karpv1.NodePoolLabelKey: generalPool}}}
		nc.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("128"), corev1.ResourceMemory: resource.MustParse("512Gi")}
		if disrupted != nil {
			nc.Status.Conditions = append(nc.Status.Conditions, status.Condition{Type: karpv1.ConditionTypeDisruptionReason,
				Status: metav1.ConditionTrue, Reason: "Underutilized", LastTransitionTime: metav1.NewTime(at(*disrupted))})
		}
		return &evidence.Versions[karpv1.NodeClaim]{UID: name, States: []karpv1.NodeClaim{nc}, Seen: []time.Time{at(created)}}
	}
	instance := func(id, claim string, launched, terminated int) evidence.InstanceRow {
		end := at(terminated)
		return evidence.InstanceRow{ID: id, Type: "m6i.32xlarge", State: "terminated", NodeClaim: claim, NodePool: generalPool,
			LaunchTime: at(launched), TerminatedAt: &end}
	}
	five := 5
	tests := []struct {
		name      string
		disrupted *int
		want      bool
	}{
		{name: "the old one marked for disruption before its replacement", disrupted: &five, want: true},
		{name: "no disruption: two machines of 128 vCPU at once", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := evidence.DecodeHistory(nil)
			h.NodePools["np"] = &evidence.Versions[karpv1.NodePool]{UID: "np", States: []karpv1.NodePool{pool}, Seen: []time.Time{t0}}
			h.NodeClaims["old"], h.NodeClaims["new"] = claim("old", 0, tt.disrupted), claim("new", 6, nil)
			g := &Grading{hist: h, Evidence: &evidence.Evidence{Instances: []evidence.InstanceRow{
				instance("i-old", "old", 0, 9), instance("i-new", "new", 6, 20)}}}
			for _, c := range []Check{checkPeakWithinLimits(g, generalPool), checkWithinLimits(g, generalPool)} {
				if c.Passed != tt.want {
					t.Errorf("%s passed %t, want %t: %s", c.ID, c.Passed, tt.want, c.Reason)
				}
			}
		})
	}
}
