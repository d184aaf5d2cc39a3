package labs

import (
	"context"
	"fmt"
	"io"
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

// The learner's loop, as the issue met it: the budget set, but the surge rehearsed on the pool
// as the incident left it, unbounded; the governance checks of the limits fail and the drill,
// the alert and the recovery pass. Then the limits over it, the surge's machines removed
// and the surge rehearsed again, as the README says: check passes, and reports the first
// surge as history.
func TestIntegrationRunawayDemandExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(runawayLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	shells := kubectlDir(t) + ":" + debianAWSDir(t)
	if said, err := runShell(t, shells, `exec sh "$2"`, "../solutions/runaway-demand/commands.sh"); err != nil {
		t.Fatalf("setting the budget: %v\n%s", err, said)
	}
	if err := e.drillRunaway(t.Context(), out, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	r, err := l.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nodepool-bounded", "peak-within-limits", "limits-respected"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	t.Logf("%s", reportText(r))
	r = fixPasses(t, e, l, r, 3*time.Minute, "runaway-learner", func(ctx context.Context, out io.Writer) error {
		if err := e.ApplySolution(ctx, runawayLab, out); err != nil {
			return err
		}
		// README: the first surge's machines go before the surge is rehearsed again.
		if said, err := runShell(t, shells, "kubectl delete nodeclaims -l karpenter.sh/nodepool="+generalPool+
			" && kubectl rollout status deployment "+renderWorker+" -n "+zibaNamespace+" --timeout=3m"); err != nil {
			return fmt.Errorf("removing the first surge's machines: %v\n%s", err, said)
		}
		return e.drillRunaway(ctx, out, 3*time.Minute)
	})
	for _, c := range r.Checks {
		if c.ID == "peak-within-limits" && !strings.Contains(strings.Join(c.Evidence, "\n"), "before the limits took effect") {
			t.Errorf("peak-within-limits does not report the first surge as history:\n%s", reportText(r))
		}
	}
}
