package labs

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationConsolidationSolutionPasses(t *testing.T) {
	solutionPasses(t, consolidationLab, 3*time.Minute, time.Minute, "consolidation-solution")
}

// consolidationExerciseFails stages the lab on e, fresh from a reset, applies the untouched
// exercise, runs the peak and drops the demand: nothing is consolidated, and check fails.
func consolidationExerciseFails(t *testing.T, e *Env) (*Lab, *Report) {
	l, _ := Get(consolidationLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// The untouched exercise applies and runs the peak; then demand drops and nothing happens.
	for _, f := range []string{"nodepool.yaml", "pdb.yaml"} {
		if err := e.ApplyExercise(t.Context(), consolidationLab, f, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.waitPods(t.Context(), out, 2*time.Minute, zibaNamespace, renderSelector, consPeakReplicas, "Running"); err != nil {
		t.Fatal(err)
	}
	if err := e.scaleDeployment(t.Context(), out, zibaNamespace, renderWorker, consLowReplicas); err != nil {
		t.Fatal(err)
	}
	if err := e.waitPods(t.Context(), out, time.Minute, zibaNamespace, renderSelector, consLowReplicas, "Running"); err != nil {
		t.Fatal(err)
	}
	// No quiet spell has passed (the exercise asks for 10m of lab time and the test skips
	// none), so Karpenter may consolidate nothing yet: one grading is the whole answer, once
	// Karpenter has tagged each new instance with its NodeClaim (until then it looks leaked).
	if err := e.waitChecks(t.Context(), out, time.Minute, consolidationLab, "no-leaks"); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, 0)
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	keepSnapshot(t, e, "consolidation-exercise")
	want := []string{"nodes-consolidated", "disruption-budget", "pdb-protects", "pods-rescheduled", "consolidated-cleaned-up", "cost-saved"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	t.Logf("%s", reportText(r))
	return l, r
}

// The learner's loop, with the many first moves a learner makes, in sequence on one staged
// lab after the peak and the drop: the TODOs left (the untouched exercise); the PDB's fix on the wrong object (a selector no worker carries);
// consolidateAfter ten times the seed's; a disruption budget far too narrow (0 nodes); each
// with lab time skipped as the README has it, so Karpenter had its chance. None of them
// disrupts a worker, so the README's fix, applied twice, then passes without a reset.
func TestIntegrationConsolidationExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := consolidationExerciseFails(t, e)
	const np, pdb = consolidationLab + "/nodepool.yaml", consolidationLab + "/pdb.yaml"
	skip := func(t *testing.T, e *Env) {
		if err := e.skipTime(t.Context(), testOut(t), consolidationQuiet); err != nil {
			t.Fatal(err)
		}
	}
	then := func(apply ...func(*testing.T, *Env)) func(*testing.T, *Env) {
		return func(t *testing.T, e *Env) {
			for _, a := range apply {
				a(t, e)
			}
		}
	}
	// Each NodePool is applied before time is skipped, and none lets Karpenter act: 50m of
	// quiet is never reached, and a budget of 0 allows no disruption.
	r := makeMoves(t, e, l, []move{
		{name: "the TODOs left", apply: func(*testing.T, *Env) {},
			check: "nodes-consolidated", problem: "consolidationPolicy WhenEmpty removes only nodes with no pod at all", within: time.Minute},
		{name: "the PDB's fix on the wrong object (a selector no worker carries)", apply: applyingEdited(solutionsFS, pdb, [2]string{"app.kubernetes.io/name: ziba-render-worker", "app.kubernetes.io/name: ziba-render-workers"}),
			check: "pdb-protects", problem: "no PodDisruptionBudget in namespace ziba selects the render workers", within: time.Minute},
		{name: "consolidateAfter ten times the seed's", apply: then(applyingEdited(solutionsFS, np, [2]string{"    consolidateAfter: 5m", "    consolidateAfter: 50m"}), skip),
			check: "nodes-consolidated", problem: "consolidateAfter 50m, not the seed's 5m", within: time.Minute},
		{name: "a disruption budget far too narrow", apply: then(applyingEdited(solutionsFS, np, [2]string{"      - nodes: \"20%\"", "      - nodes: \"0\""}), applyingEdited(solutionsFS, pdb), skip),
			check: "nodes-consolidated", problem: "the disruption budgets allow 0 of the", passed: []string{"pdb-protects"}, within: time.Minute},
	})
	fixPasses(t, e, l, r, 3*time.Minute, "consolidation-learner", func(ctx context.Context, out io.Writer) error {
		for range 2 {
			if err := e.ApplySolution(ctx, consolidationLab, out); err != nil {
				return err
			}
		}
		return e.consolidateBySkips(ctx, out)
	})
}
