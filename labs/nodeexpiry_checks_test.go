package labs

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/labs/evidence"
)

// Case 3 of the issue: the PDB left at 100% let the first month's drain take every worker;
// the learner fixes it to minAvailable 2 and skips another month, which never falls below
// three. The first month's dip is fixed context; the check judges the drain since the fix,
// and until a machine has been drained since, it says the fix is untested and how to test it.
func TestExpiryAvailabilityJudgedSinceThePDBFix(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	labels := map[string]string{"app.kubernetes.io/name": renderWorker}
	pod := func(name string, ready int, gone int) *evidence.Versions[corev1.Pod] {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: renderWorker + "-" + name, Namespace: zibaNamespace, Labels: labels, CreationTimestamp: metav1.NewTime(at(ready))}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		v := &evidence.Versions[corev1.Pod]{UID: name, States: []corev1.Pod{p}, Seen: []time.Time{at(ready)}}
		if gone >= 0 {
			d := at(gone)
			v.Deleted = &d
		}
		return v
	}
	claim := func(name string, created, deleted int) *evidence.Versions[karpv1.NodeClaim] {
		nc := karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at(created)), Labels: map[string]string{karpv1.NodePoolLabelKey: generalPool}}}
		v := &evidence.Versions[karpv1.NodeClaim]{UID: name, States: []karpv1.NodeClaim{nc}, Seen: []time.Time{at(created)}}
		if deleted >= 0 {
			gone := nc
			gone.DeletionTimestamp = &metav1.Time{Time: at(deleted)}
			v.States, v.Seen = append(v.States, gone), append(v.Seen, at(deleted))
		}
		return v
	}
	two := intstr.FromInt32(2)
	pdb := policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: renderWorker, Namespace: zibaNamespace,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Time: &metav1.Time{Time: at(20)}}}},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	// The first month: four workers, all evicted at once at minute 10, back at 11.
	firstMonth := []*evidence.Versions[corev1.Pod]{pod("a", 0, 10), pod("b", 0, 10), pod("c", 0, 10), pod("d", 0, 10),
		pod("e", 11, -1), pod("f", 11, -1), pod("g", 11, -1), pod("h", 11, 30)}
	tests := []struct {
		name    string
		claims  []*evidence.Versions[karpv1.NodeClaim]
		extra   []*evidence.Versions[corev1.Pod]
		pass    bool
		want    string // the reason (pass) or a ✗ line (fail)
		context string // an evidence line
	}{
		{name: "fixed, not yet tested", claims: []*evidence.Versions[karpv1.NodeClaim]{claim("m1", 0, 10), claim("m2", 11, -1)},
			want:    "no machine of ziba-general was drained since PodDisruptionBudget ziba-render-worker took its spec (minAvailable 2) at " + hms(at(20)) + ": the fix has not met an expiry yet",
			context: "fixed: 0 available at " + hms(at(10)) + " (fewer than 2), before PodDisruptionBudget ziba-render-worker took its spec (minAvailable 2) at " + hms(at(20))},
		{name: "fixed, and the next month's drain kept three", claims: []*evidence.Versions[karpv1.NodeClaim]{claim("m1", 0, 10), claim("m2", 11, 30), claim("m3", 30, -1)},
			extra: []*evidence.Versions[corev1.Pod]{pod("i", 31, -1)}, pass: true,
			want:    "never fewer than 3 available since PodDisruptionBudget ziba-render-worker took its spec (minAvailable 2) at " + hms(at(20)) + "; last that low at " + hms(at(30)) + ", through the drain of 1 machine",
			context: "fixed: 0 available at " + hms(at(10)) + " (fewer than 2), before PodDisruptionBudget ziba-render-worker took its spec (minAvailable 2) at " + hms(at(20))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := evidence.DecodeHistory(nil)
			for _, p := range append(slices.Clone(firstMonth), tt.extra...) {
				h.Pods[p.UID] = p
			}
			for _, c := range tt.claims {
				h.NodeClaims[c.UID] = c
			}
			g := &Grading{hist: h, Evidence: &evidence.Evidence{}, Snapshot: &evidence.Snapshot{TakenAt: at(40), PDBs: []policyv1.PodDisruptionBudget{pdb}}}
			c := checkExpiryAvailability(g)
			lines := c.Problems
			if tt.pass {
				lines = []string{c.Reason}
			}
			if c.Passed != tt.pass || !slices.Contains(lines, tt.want) {
				t.Errorf("passed %t (want %t): want %q among %q", c.Passed, tt.pass, tt.want, lines)
			}
			if !slices.Contains(c.Evidence, tt.context) {
				t.Errorf("want the context %q among %q", tt.context, c.Evidence)
			}
			if strings.Contains(c.Hint, "100%") || (!tt.pass && !strings.Contains(c.Hint, "karplab time skip 30d")) {
				t.Errorf("hint %q: the budget is fixed; the next step is another month", c.Hint)
			}
			if x := c.contradictions(); len(x) > 0 {
				t.Error(x)
			}
		})
	}
}
