package labs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
)

// The learner's own loop: a learner applies a first attempt (the untouched exercise, or the
// wrong first move its README invites), reads the failing check, fixes it and applies again,
// with no reset. Each lab's ExerciseFails test ends with that second half (fixPasses): the
// fix as the README has the learner do it, then check must pass within a bound. For a lab
// whose lesson is an event that cannot be undone, the test asserts instead that the failing
// check's hint names the reset, and that the reset plus the fix passes (resetAndSolve).

// fixPasses applies fix over whatever the learner did before, then grades until the lab
// passes (within). It logs the time from the fix to the pass and the check lines before
// and after, which the closing note quotes, and keeps the snapshot as name.
func fixPasses(t *testing.T, e *Env, l *Lab, before *Report, within time.Duration, name string, fix func(ctx context.Context, out io.Writer) error) *Report {
	t.Helper()
	start := time.Now()
	if err := fix(t.Context(), testOut(t)); err != nil {
		t.Fatalf("the fix: %v", err)
	}
	applied := time.Since(start)
	r := checkUntil(t, e, l, true, within)
	if !r.Passed {
		t.Fatalf("%s after the fix (applied in %s), check still fails:\n%s\nbefore the fix:\n%s", time.Since(start).Round(time.Second), applied.Round(time.Second), reportText(r), reportText(before))
	}
	keepSnapshot(t, e, name)
	t.Logf("learner's loop: %s passed %s after the fix began (the fix's own steps took %s)\nbefore: %s\nafter:  %s",
		l.Name, time.Since(start).Round(time.Second), applied.Round(time.Second), checkLine(before), checkLine(r))
	return r
}

// checkLine sums a report up in one line: each check's mark and ID.
func checkLine(r *Report) string {
	var b strings.Builder
	for _, c := range r.Checks {
		mark := "[ ]"
		if c.Passed {
			mark = "[x]"
		}
		fmt.Fprintf(&b, "%s %s  ", mark, c.ID)
	}
	return strings.TrimSpace(b.String())
}

// hintNamesReset asserts that the failing check id of r says the lesson is an event and
// names the reset.
func hintNamesReset(t *testing.T, r *Report, id string) {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			if c.Passed || !strings.Contains(c.Hint, "karplab reset") {
				t.Errorf("check %s (passed %t) should fail with a hint that names karplab reset: %q", id, c.Passed, c.Hint)
			}
			return
		}
	}
	t.Errorf("no check %s in the report:\n%s", id, reportText(r))
}

// resetAndSolve is the way again after an event: karplab reset, then the lab staged with
// the learner's fix (the solution) applied; check must pass within.
func resetAndSolve(t *testing.T, e *Env, l *Lab, wait, within time.Duration, name string) {
	t.Helper()
	var progress strings.Builder
	if err := cluster.Reset(t.Context(), labOf(t).home, &progress); err != nil {
		t.Fatalf("karplab reset: %v\n%s", err, progress.String())
	}
	start := time.Now()
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: wait}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, within)
	if !r.Passed {
		t.Fatalf("after karplab reset and the fix, check fails:\n%s", reportText(r))
	}
	keepSnapshot(t, e, name)
	t.Logf("learner's loop: %s passed %s after karplab reset and the fix", l.Name, time.Since(start).Round(time.Second))
}

// applySolution is the fix most labs' READMEs have the learner make: their completed files
// applied over what they applied before.
func (e *Env) applySolution(lab string) func(ctx context.Context, out io.Writer) error {
	return func(ctx context.Context, out io.Writer) error { return e.ApplySolution(ctx, lab, out) }
}

// waitClaimsReplaced is the learner watching kubectl get nodeclaims -w until drift has
// replaced every NodeClaim of pool made before since, and the render workers run again.
func (e *Env) waitClaimsReplaced(ctx context.Context, out io.Writer, timeout time.Duration, pool string, since time.Time) error {
	return waitFor(ctx, out, timeout, "NodeClaims of "+pool+" replaced", func(ctx context.Context) (bool, string, error) {
		list, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{LabelSelector: karpv1.NodePoolLabelKey + "=" + pool})
		if err != nil {
			return false, "", err
		}
		old, fresh := 0, 0
		for _, c := range list.Items {
			st, _ := condition(c, "Initialized")
			switch {
			case c.GetDeletionTimestamp() != nil || c.GetCreationTimestamp().Time.Before(since.Add(-clockSlack)):
				old++
			case st == "True":
				fresh++
			}
		}
		rolled, status, err := e.rolledOut(ctx, zibaNamespace, renderWorker)
		if err != nil {
			return false, "", err
		}
		return old == 0 && fresh > 0 && rolled, fmt.Sprintf("%d NodeClaims from before the fix, %d new and initialized; %s", old, fresh, status), nil
	})
}

// checkUntilFailed grades until exactly the checks want fail (or timeout), returning the
// last report.
func checkUntilFailed(t *testing.T, e *Env, l *Lab, want []string, timeout time.Duration) *Report {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(2 * time.Second) {
		r := checkUntil(t, e, l, false, 0)
		if slices.Equal(r.Failed(), want) || time.Now().After(deadline) {
			return r
		}
	}
}
