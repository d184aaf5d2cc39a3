package labs

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntegrationNodePoolOverlapSolutionPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(overlapLab)
	start := time.Now()
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, time.Minute)
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
	keepSnapshot(t, e, "overlap-solution")
	t.Logf("staged and fixed in %s:\n%s", time.Since(start).Round(time.Second), reportText(r))
}

func TestIntegrationNodePoolOverlapExerciseFails(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(overlapLab)
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r, err := l.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	keepSnapshot(t, e, "overlap-exercise")
	want := []string{"placed-by-intended-pool", "no-accidental-overlap", "nodepools-lint-clean", "costlier-pool-own-workload"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	t.Logf("%s", reportText(r))

	// The README's other fix: a weight states the preference (it drifts nothing), and the
	// learner moves the render workers by deleting the realtime pool's NodeClaims.
	out, err := runShell(t, kubectlDir(t), `kubectl patch nodepool ziba-general --type merge -p '{"spec":{"weight":10}}' &&
kubectl delete nodeclaim -l karpenter.sh/nodepool=ziba-realtime --wait=false`)
	if err != nil {
		t.Fatalf("the weight fix: %v\n%s", err, out)
	}
	r = checkUntil(t, e, l, true, 2*time.Minute)
	if !r.Passed {
		t.Fatalf("the weight fix does not pass:\n%s", reportText(r))
	}
	if c := r.Checks[3]; c.ID != "no-accidental-overlap" || !strings.Contains(strings.Join(c.Evidence, "\n"), "ziba-general is preferred by weight") {
		t.Errorf("the render workers' fallback is not reported: %+v", c)
	}
	t.Logf("after the weight fix:\n%s", reportText(r))
}
