package labs

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// The learner's loop, as learners make it: one staged lab, first moves in sequence, each
// checked for the ✗ line that names what is wrong, then the README's fix without a reset.
//   - the budget on the wrong object (another pool's tag), then commands.sh's;
//   - the TODO left (no limits), then limits a tenth of the course's;
//   - limits ten times the course's (cpu 2000, memory 8000Gi), and the surge rehearsed on them:
//     it buys over 200 vCPU, and peak-within-limits says the limits bounded nothing;
//   - the README's fix, applied twice; the check says the limits are untested, and doing what
//     its hint says (recover, karplab time skip 5m, the surge again) passes, the first surge
//     reported as history.
func TestIntegrationRunawayDemandExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(runawayLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	dir := learnerDir(t, runawayLab)
	shells := kubectlDir(t) + ":" + debianAWSDir(t)
	shell := func(script string) func(t *testing.T, e *Env) {
		return func(t *testing.T, e *Env) {
			if said, err := runShell(t, shells, `cd "$2" && `+script, dir); err != nil {
				t.Fatalf("%s: %v\n%s", script, err, said)
			}
		}
	}
	const np = runawayLab + "/nodepool.yaml"
	limits := func(cpu, mem string) func(t *testing.T, e *Env) {
		return applyingEdited(solutionsFS, np, [2]string{`cpu: "200"`, `cpu: "` + cpu + `"`}, [2]string{"memory: 800Gi", "memory: " + mem})
	}
	const within = 30 * time.Second
	makeMoves(t, e, l, []move{
		{name: "the budget on another pool's tag", apply: shell("karplab ec2 budget set " + generalPool + " --period monthly --limit 5 --alert 50% --tag karpenter.sh/nodepool=ziba-realtime"),
			check: "cost-alert-before-threshold", problem: "budget ziba-general does not count ziba-general's machines", within: within},
		{name: "the budget as commands.sh sets it", apply: shell("karplab lab get --solution " + runawayLab + " && sh " + runawayLab + "-solution/commands.sh"),
			check: "cost-alert-before-threshold", problem: "no alert has fired yet", not: "does not count", within: within},
		{name: "the TODO left", apply: shell("kubectl apply -f " + np),
			check: "peak-within-limits", problem: "NodePool ziba-general sets no spec.limits (the course's: limits cpu 200 / memory 800Gi)", within: within},
		{name: "a tenth of the course's limits", apply: limits("20", "80Gi"),
			check: "peak-within-limits", problem: "limits.cpu 20 is 10% of the course's 200: the pool cannot grow for honest demand", within: within},
		{name: "ten times the course's limits", apply: limits("2000", "8000Gi"),
			check: "peak-within-limits", problem: "limits.cpu 2k is 10 times the course's 200: it bounds nothing the surge asks for", within: within},
		{name: "the surge on them", apply: func(t *testing.T, e *Env) {
			if err := e.drillRunaway(t.Context(), out, 3*time.Minute); err != nil {
				t.Fatal(err)
			}
		}, check: "peak-within-limits", problem: "beyond the course's bound of 200: limits cpu 2k / memory 8000Gi bounded nothing", passed: []string{"cost-alert-before-threshold"}, within: within},
	})
	keepSnapshot(t, e, "runaway-broad")

	// The README's fix, applied twice: the limits are untested, and the hint says how.
	r := makeMoves(t, e, l, []move{{name: "the README's fix, twice", apply: func(t *testing.T, e *Env) {
		for range 2 {
			applyingSolution(runawayLab)(t, e)
		}
	}, check: "peak-within-limits", problem: "untested: limits cpu 200 / memory 800Gi have bounded no surge yet", within: within}})
	if c := checkOf(r, "peak-within-limits"); !strings.Contains(c.Hint, "karplab time skip 5m") {
		t.Errorf("the untested limits' hint does not say how to rehearse again: %q", c.Hint)
	}
	r = fixPasses(t, e, l, r, 3*time.Minute, "runaway-learner", func(ctx context.Context, out io.Writer) error {
		// As the hint says: the demand is back to four (the drill recovered it), the surge's
		// machines go after consolidateAfter, then the surge again.
		shell("karplab time skip 5m")(t, e)
		if err := e.waitFewClaims(ctx, out, 3*time.Minute, 2); err != nil {
			return err
		}
		return e.drillRunaway(ctx, out, 3*time.Minute)
	})
	if c := checkOf(r, "peak-within-limits"); !strings.Contains(strings.Join(c.Evidence, "\n"), "under limits cpu 2k / memory 8000Gi then") {
		t.Errorf("peak-within-limits does not report the first surge as history, with the limits then:\n%s", reportText(r))
	}
}

// waitFewClaims is the learner running kubectl get nodeclaims until at most n are left.
func (e *Env) waitFewClaims(ctx context.Context, out io.Writer, timeout time.Duration, n int) error {
	return waitFor(ctx, out, timeout, fmt.Sprintf("at most %d NodeClaims", n), func(ctx context.Context) (bool, string, error) {
		list, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		return len(list.Items) <= n, fmt.Sprintf("%d NodeClaims", len(list.Items)), nil
	})
}
