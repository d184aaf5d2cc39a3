package labs

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Real runs of the labs (solution, untouched exercise, the learner's loop, and for the leak
// the learner's detection followed by Karpenter's garbage collection),
// graded offline; their reports are pinned by golden files (the evidence package pins their
// correlation).
func TestGoldenScenarios(t *testing.T) {
	tests := []struct {
		lab, snapshot string
		wantFailed    []string
	}{
		{lab: deniedLab, snapshot: "denied-solution"},
		{lab: deniedLab, snapshot: "denied-exercise", wantFailed: []string{"workload-running", "chain-complete", "denied-gpu", "refused-by-nodepool", "nodepool-bounded"}},
		// The learner's path: the over-broad exercise applied, then the fix, then the NodeClaims
		// the broad spec had made deleted.
		{lab: deniedLab, snapshot: "denied-learner"},
		{lab: leakLab, snapshot: "leak-solution"},
		{lab: leakLab, snapshot: "leak-gc"},
		{lab: leakLab, snapshot: "leak-exercise", wantFailed: []string{"leak-detected", "leak-terminated", "leak-released", "leak-cost", "no-leaks"}},
		{lab: bootstrapLab, snapshot: "bootstrap-solution"},
		{lab: orphanedLab, snapshot: "orphaned-solution"},
		{lab: orphanedLab, snapshot: "orphaned-exercise", wantFailed: []string{"nothing-unattached", "orphans-billing-stopped", "nodeclass-deletes-volumes", "in-use-kept"}},
		{lab: overlapLab, snapshot: "overlap-solution"},
		{lab: overlapLab, snapshot: "overlap-exercise", wantFailed: []string{"placed-by-intended-pool", "no-accidental-overlap", "nodepools-lint-clean", "costlier-pool-own-workload"}},
		{lab: truthLab, snapshot: "truth-solution"},
		{lab: truthLab, snapshot: "truth-exercise", wantFailed: []string{"workload-running", "requests-cover-peaks", "machines-hold-peaks", "no-eviction-since-fix"}},
		{lab: runawayLab, snapshot: "runaway-solution"},
		{lab: runawayLab, snapshot: "runaway-exercise", wantFailed: []string{"nodepool-bounded", "peak-within-limits", "limits-respected", "cost-alert-before-threshold"}},
		{lab: bootstrapLab, snapshot: "bootstrap-exercise", wantFailed: []string{"userdata-fixed", "stuck-nodeclaims-gone", "workload-running", "chain-complete", "timestamps-ordered"}},
		// The learners' loops, saved at their end by the ExerciseFails...ThenFixPasses tests:
		// the first attempt, then the fix over it with no reset. Each passes on what runs now
		// and keeps what it fixed as context; ami-drift's unplanned rollout, an event, stays.
		// happy-learner is saved where the fix's drift has evicted the course's bare example
		// pod: workload-running fails until the learner applies the workload again.
		{lab: "happy-path", snapshot: "happy-learner", wantFailed: []string{"workload-running"}},
		{lab: deniedLab, snapshot: "denied-loop"},
		// The wrong-moves tests' runs: denied-trap where the hog runs on the machine bought
		// before spec.limits (the hint says to delete it and apply the workload again),
		// happy-moves where drift evicted the bare example pod; the others at their pass.
		{lab: deniedLab, snapshot: "denied-trap", wantFailed: []string{"denied-over-limit"}},
		{lab: "happy-path", snapshot: "happy-moves", wantFailed: []string{"workload-running"}},
		{lab: consolidationLab, snapshot: "consolidation-moves"},
		{lab: overlapLab, snapshot: "overlap-moves"},
		{lab: consolidationLab, snapshot: "consolidation-learner"},
		{lab: overlapLab, snapshot: "overlap-learner"},
		{lab: truthLab, snapshot: "truth-learner"},
		{lab: expiryLab, snapshot: "expiry-exercise", wantFailed: []string{"nodes-expired", "pdb-protects"}},
		{lab: expiryLab, snapshot: "expiry-learner"},
		{lab: amiDriftLab, snapshot: "amidrift-learner", wantFailed: []string{"no-unplanned-rollout", "rollback-rehearsed"}},
		{lab: runawayLab, snapshot: "runaway-learner"},
		{lab: leakLab, snapshot: "leak-learner"},
		{lab: bootstrapLab, snapshot: "bootstrap-learner"},
		{lab: orphanedLab, snapshot: "orphaned-learner", wantFailed: []string{"in-use-kept"}},
	}
	for _, tt := range tests {
		t.Run(tt.snapshot, func(t *testing.T) {
			l, err := Get(tt.lab)
			if err != nil {
				t.Fatal(err)
			}
			snap := loadSnapshot(t, tt.snapshot)
			r := l.GradeSnapshot(t.Context(), nil, snap)
			var report bytes.Buffer
			if err := r.WriteText(&report); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.snapshot+".report.txt", report.Bytes())
			if diff := cmp.Diff(tt.wantFailed, r.Failed()); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s\n%s", diff, report.String())
			}
		})
	}
}
