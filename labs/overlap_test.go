package labs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationNodePoolOverlapSolutionPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(overlapLab)
	start := time.Now()
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, time.Minute)
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
	keepSnapshot(t, e, "overlap-solution")
	t.Logf("staged and fixed in %s:\n%s", time.Since(start).Round(time.Second), reportText(r))
}

func TestIntegrationNodePoolOverlapExerciseFails(t *testing.T) {
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

}
