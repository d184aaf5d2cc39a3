package labs

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationRunawayDemandSolutionPasses(t *testing.T) {
	_, r := solutionPasses(t, runawayLab, 3*time.Minute, 2*time.Minute, "runaway-solution")
	for _, c := range r.Checks {
		// Pending workers are the limits at work: the surge asked for more than 200 vCPU.
		if c.ID == "peak-within-limits" && !strings.Contains(c.Reason, "limits cpu 200") {
			t.Errorf("peak-within-limits does not name the pool's limits: %s", c.Reason)
		}
	}
}

// A learner who rehearses the surge on the pool as the incident left it, with no budget,
// fails exactly the governance checks; the drill itself and the recovery pass.
func TestIntegrationRunawayDemandExerciseFails(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(runawayLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := e.drillRunaway(t.Context(), out, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	r, err := l.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	keepSnapshot(t, e, "runaway-exercise")
	want := []string{"nodepool-bounded", "peak-within-limits", "limits-respected", "cost-alert-before-threshold"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	t.Logf("%s", reportText(r))
}
