package labs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/accesskeys"
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
	if terminated.ID != "leak-terminated" || !strings.Contains(strings.Join(terminated.Evidence, "\n"), "by you ("+accesskeys.Learner+")") {
		t.Errorf("want the leak terminated by the learner:\n%s", reportText(r))
	}
}

// The learner's loop: the untouched exercise (nobody looks, nobody terminates) fails at
// once; the exercise's commands.sh run as it is, which reads only Kubernetes, changes
// nothing; then the completed script, run from another folder, passes. Whoever ended the
// leak first, the learner or Karpenter's garbage collection (it spares instances younger
// than 30s), the evidence names them.
func TestIntegrationLeakExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(leakLab)
	out := testOut(t)
	if err := l.Run(t.Context(), e, out, StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// Graded right away, polling only while the recorder's history catches up with the
	// running workers.
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
	shells := kubectlDir(t) + ":" + debianAWSDir(t)
	if said, err := runShell(t, shells, `exec sh "$2"`, "../exercises/leak/commands.sh"); err != nil {
		t.Fatalf("the exercise's commands.sh: %v\n%s", err, said)
	}
	if r, _ = l.Check(t.Context(), e); !slices.Contains(r.Failed(), "leak-detected") {
		t.Errorf("the untouched commands.sh looks only at Kubernetes, yet leak-detected passes:\n%s", reportText(r))
	}
	r = fixPasses(t, e, l, r, 2*time.Minute, "leak-learner", func(ctx context.Context, out io.Writer) error {
		said, err := runShell(t, shells, `exec sh "$2"`, "../solutions/leak/commands.sh")
		fmt.Fprint(out, said)
		return err
	})
	if got := strings.Join(r.Checks[1].Evidence, "\n"); !strings.Contains(got, "by you ("+accesskeys.Learner+")") && !strings.Contains(got, "Karpenter's garbage collection") {
		t.Errorf("want the leak terminated by you or by Karpenter's garbage collection, got:\n%s", got)
	}
}
