package labs

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationNodeExpirySolutionPasses(t *testing.T) {
	solutionPasses(t, expiryLab, 3*time.Minute, time.Minute, "expiry-solution")
}

// TestIntegrationNodeExpiryExerciseFails: the untouched exercise (expireAfter: Never, a PDB
// that protects nothing) lets the month pass with no machine expired; with expireAfter set
// and the PDB still untouched, every worker is evicted at once.
//
// Then the learner's loop: the completed nodepool.yaml and pdb.yaml over it. expireAfter is
// part of the pool's template, so the old machines drift and are replaced; the replacements
// are new, and the README has the learner skip another month.
func TestIntegrationNodeExpiryExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(expiryLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"nodepool.yaml", "pdb.yaml"} {
		if err := e.ApplyExercise(t.Context(), expiryLab, f, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.waitPods(t.Context(), out, 2*time.Minute, zibaNamespace, renderSelector, expiryReplicas, "Running"); err != nil {
		t.Fatal(err)
	}
	if err := e.skipTime(t.Context(), out, expiryMonth); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, 30*time.Second) // it must not come to pass
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	keepSnapshot(t, e, "expiry-exercise")
	if diff := cmp.Diff([]string{"nodes-expired", "pdb-protects"}, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	fixPasses(t, e, l, r, 4*time.Minute, "expiry-learner", func(ctx context.Context, out io.Writer) error {
		start := time.Now()
		if err := e.ApplySolution(ctx, expiryLab, out); err != nil {
			return err
		}
		if err := e.waitClaimsReplaced(ctx, out, 4*time.Minute, generalPool, start); err != nil {
			return err
		}
		return e.skipTime(ctx, out, expiryMonth)
	})
}
