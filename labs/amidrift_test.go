package labs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The learner's loop of a lab whose lesson is an event: the untouched exercise (@latest) lets
// AWS's publication roll every node, unasked. Pinning the release afterwards brings the nodes
// back onto it, but the unplanned rollout happened: its check names the reset, and the reset
// plus the fix (the solution's whole drill) passes. The solution's own test is this one's end.
func TestIntegrationAMIDriftExerciseFailsThenResetAndFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(amiDriftLab)
	out := testOut(t)
	ctx := t.Context()
	if err := l.Run(ctx, e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// The untouched exercise applies and runs the workers on the newest AMI (@latest).
	if err := e.ApplyExercise(ctx, amiDriftLab, "nodepool.yaml", out); err != nil {
		t.Fatal(err)
	}
	if err := e.waitRolledOut(ctx, out, 2*time.Minute, zibaNamespace, renderWorker); err != nil {
		t.Fatal(err)
	}
	if err := l.Run(ctx, e, out, StageOptions{Wait: 2 * time.Minute}); err != nil { // AWS publishes a release
		t.Fatal(err)
	}
	// @latest resolves the new release: every node drifts and is replaced, unasked.
	release, err := e.newestRelease(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.waitAMIRollout(ctx, out, 2*time.Minute, release); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, 10*time.Second) // it must not come to pass
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	keepSnapshot(t, e, "amidrift-exercise")
	want := []string{"ami-pinned", "no-unplanned-rollout", "instances-on-approved-ami", "rollback-rehearsed"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	t.Logf("%s", reportText(r))

	// The learner pins the release the nodes ran before (their fixed nodepool.yaml).
	if err := e.ApplySolution(ctx, amiDriftLab, out); err != nil {
		t.Fatal(err)
	}
	pinned, err := e.pinnedRelease(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.waitAMIRollout(ctx, out, 3*time.Minute, pinned); err != nil {
		t.Fatal(err)
	}
	r = checkUntilFailed(t, e, l, []string{"no-unplanned-rollout", "rollback-rehearsed"}, time.Minute)
	if diff := cmp.Diff([]string{"no-unplanned-rollout", "rollback-rehearsed"}, r.Failed()); diff != "" {
		t.Errorf("failed checks with the pin fixed (-want +got):\n%s\n%s", diff, reportText(r))
	}
	hintNamesReset(t, r, "no-unplanned-rollout")
	keepSnapshot(t, e, "amidrift-learner")
	t.Logf("learner's loop: %s with the pin fixed: %s", amiDriftLab, checkLine(r))
	resetAndSolve(t, e, l, 2*time.Minute, 30*time.Second, "amidrift-solution")
}
