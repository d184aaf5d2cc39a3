package labs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationHappyPathSolutionPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get("happy-path")
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, time.Minute)
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
}

func TestIntegrationHappyPathExerciseFails(t *testing.T) {
	e := freshLab(t)
	l, _ := Get("happy-path")
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// The untouched exercise applies and even runs the pods, ungoverned.
	if err := e.ApplyExercise(t.Context(), "happy-path", "nodepool.yaml", out); err != nil {
		t.Fatal(err)
	}
	if err := e.waitPods(t.Context(), out, 2*time.Minute, zibaNamespace, renderSelector, renderReplicas, "Running"); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, 10*time.Second) // it must not come to pass
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	want := []string{"nodepool-bounded", "limits-respected", "machines-governed", "cost-tags"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
}
