package labs

import (
	"context"
	"fmt"
	"io"
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

// The learner's loop, move after move on one staged lab: the untouched exercise fails at
// once; then the wrong first moves, each graded (the exercise's commands.sh as it is, which
// reads only Kubernetes; a describe too narrow to return the leak; the wrong resource
// described); then the completed script, run from another folder, passes, and again when
// run twice. Whoever ended the leak, the learner or Karpenter's garbage collection (it
// spares instances younger than 30s), the evidence names them. Last, the move too broad:
// terminating every instance of the pool takes the workers' machines, which cannot be given
// back, and the hint names the reset.
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
	claimed := `$(kubectl get nodeclaims -o jsonpath='{range .items[*]}{.status.providerID}{" "}{end}' | sed 's#aws:///[^/]*/##g')`
	dir := learnerDir(t, leakLab)
	r = makeMoves(t, e, l, []move{
		{name: "the TODOs left", apply: shellDoing(shells, dir, `sh leak/commands.sh`),
			check: "leak-detected", problem: "no DescribeInstances signed " + accesskeys.Learner, within: 30 * time.Second},
		{name: "too narrow: only the instances the NodeClaims name", apply: shellDoing(shells, dir, `aws ec2 describe-instances --instance-ids `+claimed+` --query 'Reservations[].Instances[].InstanceId'`),
			check: "leak-detected", problem: "leave it out", within: 30 * time.Second},
		{name: "the wrong resource: the pool's volumes", apply: shellDoing(shells, dir, `aws ec2 describe-volumes --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general --query 'Volumes[].VolumeId'`),
			check: "leak-detected", problem: "no DescribeInstances signed " + accesskeys.Learner, within: 30 * time.Second},
	})
	sol := learnerSolutionDir(t, leakLab)
	solve := func(ctx context.Context, out io.Writer) error {
		said, err := runShell(t, shells, `cd "$2" && sh leak-solution/commands.sh`, sol)
		fmt.Fprint(out, said)
		return err
	}
	r = fixPasses(t, e, l, r, 2*time.Minute, "leak-learner", solve)
	if got := strings.Join(r.Checks[1].Evidence, "\n"); !strings.Contains(got, "by you ("+accesskeys.Learner+")") && !strings.Contains(got, "Karpenter's garbage collection") {
		t.Errorf("want the leak terminated by you or by Karpenter's garbage collection, got:\n%s", got)
	}
	// The README's fix applied twice: the second run finds nothing to terminate.
	if err := solve(t.Context(), testOut(t)); err != nil {
		t.Fatal(err)
	}
	if r = checkUntil(t, e, l, true, 30*time.Second); !r.Passed {
		t.Errorf("the README's fix applied twice fails:\n%s", reportText(r))
	}
	// Too broad: every instance of the pool, the workers' included.
	r = makeMoves(t, e, l, []move{{name: "too broad: every instance of the pool",
		apply: shellDoing(shells, dir, `aws ec2 terminate-instances --instance-ids $(aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general Name=instance-state-name,Values=pending,running --query 'Reservations[].Instances[].InstanceId' --output text)`),
		check: "workload-intact", problem: "you terminated", within: 30 * time.Second}})
	hintNamesReset(t, r, "workload-intact")
}

// shellDoing is a move typed in a learner's shell (shells on PATH, after eval "$(karplab
// env)") in dir, where they ran karplab lab get.
func shellDoing(shells, dir, script string) func(t *testing.T, e *Env) {
	return func(t *testing.T, e *Env) {
		t.Helper()
		if out, err := runShell(t, shells, `cd "$2" && `+script, dir); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
}

// learnerSolutionDir is a folder where the learner ran karplab lab get --solution lab.
func learnerSolutionDir(t *testing.T, lab string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := runShell(t, kubectlDir(t), `cd "$2" && karplab lab get --solution "$3"`, dir, lab); err != nil {
		t.Fatalf("karplab lab get --solution %s: %v\n%s", lab, err, out)
	}
	return dir
}
