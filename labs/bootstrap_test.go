package labs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationBootstrapFailureSolutionPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(bootstrapLab)
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, time.Minute)
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
}

func TestIntegrationBootstrapFailureExerciseFails(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(bootstrapLab)
	out := testOut(t)
	// Staging returns once a NodeClaim has gone registrationGrace without its Node.
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// The untouched exercise applies, and changes nothing.
	if err := e.ApplyExercise(t.Context(), bootstrapLab, "nodeclass.yaml", out); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, 10*time.Second) // it must not come to pass
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	want := []string{"userdata-fixed", "stuck-nodeclaims-gone", "workload-running", "chain-complete", "timestamps-ordered"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
}
