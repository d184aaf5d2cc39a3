package labs

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationNodePoolOverlapSolutionPasses(t *testing.T) {
	solutionPasses(t, overlapLab, 3*time.Minute, time.Minute, "overlap-solution")
}

// The learner's loop, with the many first moves a learner makes, in sequence on the staged
// overlap: the TODO left (check fails as the README says); a weight for
// ziba-general alone (it orders new machines only); the taint on the wrong pool; a taint
// the preview API does not tolerate (far too narrow); then the README's fix, applied twice,
// passes without a reset once drift has moved the render workers.
func TestIntegrationNodePoolOverlapExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(overlapLab)
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	staged, err := l.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	keepSnapshot(t, e, "overlap-exercise")
	want := []string{"placed-by-intended-pool", "no-accidental-overlap", "nodepools-lint-clean", "costlier-pool-own-workload"}
	if diff := cmp.Diff(want, staged.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(staged))
	}
	const np = overlapLab + "/nodepools.yaml"
	taint := "      taints:\n        - key: workload.ziba.dev/tier\n          value: realtime\n          effect: NoSchedule\n"
	const classRef = "      nodeClassRef:\n" // the first is ziba-general's
	r := makeMoves(t, e, l, []move{
		{name: "the TODO left", apply: func(*testing.T, *Env) {},
			check: "placed-by-intended-pool", problem: "of NodePool ziba-realtime; it belongs on ziba-general", within: time.Minute},
		{name: "a weight for ziba-general alone", apply: applyingEdited(solutionsFS, np, [2]string{taint, ""}, [2]string{"spec:\n  template:\n", "spec:\n  weight: 10\n  template:\n"}),
			check: "placed-by-intended-pool", problem: "of NodePool ziba-realtime; it belongs on ziba-general", passed: []string{"no-accidental-overlap"}, within: time.Minute},
		{name: "the taint on the wrong pool (ziba-general)", apply: applyingEdited(solutionsFS, np, [2]string{taint, ""}, [2]string{classRef, taint + classRef}),
			check: "placed-by-intended-pool", problem: "it belongs on ziba-general, which refuses it now", within: time.Minute},
		{name: "a taint the preview API does not tolerate", apply: applyingEdited(solutionsFS, np, [2]string{"          value: realtime\n", "          value: rt\n"}),
			check: "placed-by-intended-pool", problem: "would not get ziba-realtime", within: 2 * time.Minute},
	})
	fixPasses(t, e, l, r, 6*time.Minute, "overlap-learner", func(ctx context.Context, out io.Writer) error {
		for range 2 {
			if err := e.ApplySolution(ctx, overlapLab, out); err != nil {
				return err
			}
		}
		return nil
	})
}
