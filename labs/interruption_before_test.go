package labs

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/labs/evidence"
)

// Before EC2's warning nothing of the interruption can pass, but every check says why in a ✗
// line, and the first moves a learner makes are judged for what the warning will find: the
// workers packed on one machine, a NodePool with no fallback from spot.
func TestBeforeTheWarningMovesAreJudged(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	pool := func(types ...string) *evidence.Versions[karpv1.NodePool] {
		np := karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: generalPool}}
		np.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: types}}
		return &evidence.Versions[karpv1.NodePool]{UID: "np", States: []karpv1.NodePool{np}, Seen: []time.Time{t0}}
	}
	worker := func(name, node string) *evidence.Versions[corev1.Pod] {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: renderWorker + "-" + name, Namespace: zibaNamespace}, Spec: corev1.PodSpec{NodeName: node}}
		return &evidence.Versions[corev1.Pod]{UID: name, States: []corev1.Pod{p}, Seen: []time.Time{t0}}
	}
	tests := []struct {
		name          string
		pool          *evidence.Versions[karpv1.NodePool]
		nodes         []string
		blast, spotly bool // the ✗ lines expected beyond "no warning yet"
	}{
		{name: "the untouched exercise: one machine, spot only", pool: pool("spot"), nodes: []string{"n1", "n1", "n1"}, blast: true, spotly: true},
		{name: "spread, spot only", pool: pool("spot"), nodes: []string{"n1", "n2", "n3"}, spotly: true},
		{name: "two on one machine, with on-demand", pool: pool("spot", "on-demand"), nodes: []string{"n1", "n1", "n2"}, blast: true},
		{name: "the fix", pool: pool("spot", "on-demand"), nodes: []string{"n1", "n2", "n3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := evidence.DecodeHistory(nil)
			h.NodePools["np"] = tt.pool
			for i, n := range tt.nodes {
				h.Pods[string(rune('a'+i))] = worker(string(rune('a'+i)), n)
			}
			g := &Grading{hist: h, Evidence: &evidence.Evidence{}, Snapshot: &evidence.Snapshot{TakenAt: t0}}
			for _, c := range gradeInterruption(g) {
				if x := c.contradictions(); len(x) > 0 {
					t.Error(x)
				}
				if c.ID == "no-leaks" {
					continue
				}
				if c.Passed || !slices.Contains(c.Problems, "no spot interruption warning was sent yet") {
					t.Errorf("%s: passed %t, problems %q", c.ID, c.Passed, c.Problems)
				}
				extra := len(c.Problems) > 1
				switch c.ID {
				case "blast-radius":
					if extra != tt.blast {
						t.Errorf("blast-radius problems %q, want a packed machine named: %t", c.Problems, tt.blast)
					}
				case "capacity-replaced":
					if extra != tt.spotly {
						t.Errorf("capacity-replaced problems %q, want spot only named: %t", c.Problems, tt.spotly)
					}
				}
			}
		})
	}
}
