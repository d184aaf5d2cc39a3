package labs

import (
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
func TestIntegrationNodeExpiryExerciseFails(t *testing.T) {
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
}
