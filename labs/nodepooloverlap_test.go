package labs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationNodePoolOverlapSolutionPasses(t *testing.T) {
	solutionPasses(t, overlapLab, 3*time.Minute, time.Minute, "overlap-solution")
}

// The learner's loop: the staged overlap fails; then the taint fix over it (the README's
// nodepools.yaml completed), and check passes once drift has moved the render workers.
func TestIntegrationNodePoolOverlapExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(overlapLab)
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r, err := l.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	keepSnapshot(t, e, "overlap-exercise")
	want := []string{"placed-by-intended-pool", "no-accidental-overlap", "nodepools-lint-clean", "costlier-pool-own-workload"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	t.Logf("%s", reportText(r))
	fixPasses(t, e, l, r, 5*time.Minute, "overlap-learner", e.applySolution(overlapLab))
}
