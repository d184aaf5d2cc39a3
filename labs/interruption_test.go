package labs

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The learner's loop of a lab whose lesson is an event: the untouched exercise loses all three
// workers to one reclaimed machine. The learner applies the fix and runs the lab again: the
// second interruption is refused in one line that names the reset, as is every failing
// check's hint; the reset plus the fix (the solution's whole scenario) passes. The
// solution's own test is this one's end.
func TestIntegrationInterruptionExerciseFailsThenResetAndFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(interruptionLab)
	out := testOut(t)
	ctx := t.Context()
	if err := l.Run(ctx, e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// Before the warning every check fails, naming the missing interruption.
	r, err := l.Check(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Failed(); len(got) != 7 || !strings.Contains(r.Checks[0].Reason, "no spot interruption warning") {
		t.Errorf("before the warning, failed %v:\n%s", got, reportText(r))
	}
	// The untouched exercise applies and runs the workers, all on one spot machine.
	if err := e.ApplyExercise(ctx, interruptionLab, "nodepool.yaml", out); err != nil {
		t.Fatal(err)
	}
	if err := e.waitRolledOut(ctx, out, 2*time.Minute, zibaNamespace, renderWorker); err != nil {
		t.Fatal(err)
	}
	if err := l.Run(ctx, e, out, StageOptions{Wait: 2 * time.Minute}); err != nil { // the warning
		t.Fatal(err)
	}
	// Wait until Karpenter has tried, and failed, to replace the capacity with spot.
	if err := e.waitChecks(ctx, out, 3*time.Minute, interruptionLab, "warning-handled"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err = l.Check(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Checks[4]; c.ID != "capacity-replaced" || strings.Contains(c.Reason, "launch attempts found no capacity") || time.Now().After(deadline) {
			break
		}
		time.Sleep(3 * time.Second)
	}
	r = checkUntil(t, e, l, true, 10*time.Second) // it must not come to pass
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	keepSnapshot(t, e, "interruption-exercise")
	want := []string{"blast-radius", "availability-held", "capacity-replaced", "recovery-timeline"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	if !strings.Contains(r.Checks[4].Reason, "launch attempts found no capacity") {
		t.Errorf("capacity-replaced should quote the failed spot launches:\n%s", reportText(r))
	}
	t.Logf("%s", reportText(r))
	for _, id := range want {
		hintNamesReset(t, r, id)
	}

	// The learner's fix, then karplab lab run interruption again, without a reset.
	if err := e.ApplySolution(ctx, interruptionLab, out); err != nil {
		t.Fatal(err)
	}
	if err := e.waitRolledOut(ctx, out, 3*time.Minute, zibaNamespace, renderWorker); err != nil {
		t.Fatal(err)
	}
	err = l.Run(ctx, e, out, StageOptions{Wait: 2 * time.Minute})
	if err == nil || !strings.Contains(err.Error(), "already reclaimed a spot machine") || !strings.Contains(err.Error(), "karplab reset") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a second interruption without a reset: %v; want one line that says why and names karplab reset", err)
	}
	resetAndSolve(t, e, l, 3*time.Minute, 30*time.Second, "interruption-solution")
}
