package labs

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/cluster"
)

func TestIntegrationLeakSolutionPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(leakLab)
	// The solution terminates the leak within a second or two of its launch, long before
	// Karpenter's garbage collection may (30s minimum age).
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, time.Minute)
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
	terminated := r.Checks[1]
	if terminated.ID != "leak-terminated" || !strings.Contains(strings.Join(terminated.Evidence, "\n"), "by you ("+cluster.LearnerAccessKeyID+")") {
		t.Errorf("want the leak terminated by the learner:\n%s", reportText(r))
	}
}

// The untouched exercise (nobody looks, nobody terminates) fails at once; once the learner
// looks, Karpenter's garbage collection may do the terminating and the lab passes.
func TestIntegrationLeakExerciseFailsThenGarbageCollectionEndsIt(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(leakLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// Graded right away (the collector spares instances younger than 30s), polling only while
	// the recorder's history catches up with the running workers.
	want := []string{"leak-detected", "leak-terminated", "leak-released", "leak-cost", "no-leaks"}
	var r *Report
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(time.Second) {
		var err error
		if r, err = l.Check(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if cmp.Equal(want, r.Failed()) || time.Now().After(deadline) {
			break
		}
	}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks of the untouched exercise (-want +got):\n%s\n%s", diff, reportText(r))
	}

	// The learner looks (the seed's describe-instances) but leaves the rest to the collector.
	learner := cluster.NewEC2Client(e.EC2Endpoint, cluster.LearnerAccessKeyID)
	if _, err := learner.DescribeInstances(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	r = checkUntil(t, e, l, true, 2*time.Minute)
	if !r.Passed {
		t.Fatalf("after detection and garbage collection the lab does not pass:\n%s", reportText(r))
	}
	if got := strings.Join(r.Checks[1].Evidence, "\n"); !strings.Contains(got, "Karpenter's garbage collection") {
		t.Errorf("want the leak terminated by Karpenter's garbage collection, got:\n%s", got)
	}
}
