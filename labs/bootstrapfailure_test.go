package labs

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2/accesskeys"
)

func TestIntegrationBootstrapFailureSolutionPasses(t *testing.T) {
	solutionPasses(t, bootstrapLab, 2*time.Minute, time.Minute, "")
}

// The learner's loop: the untouched exercise fails at the bootstrap boundary; then the
// reference commands.sh, run as `sh sol/commands.sh` from another folder (it finds the
// boundary, applies the fixed nodeclass.yaml beside it and lets the registration timeout
// pass), and check passes.
func TestIntegrationBootstrapFailureExerciseFailsThenFixPasses(t *testing.T) {
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
	// The README's `aws ec2 get-console-output --latest`: a stuck machine's console names the
	// failed user-data part, as cloud-init prints it (the CLI decodes the base64).
	learner := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.Learner)
	running, err := learner.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{generalPool}},
		{Name: aws.String("instance-state-name"), Values: []string{"running"}},
	}})
	if err != nil || len(running.Reservations) == 0 {
		t.Fatalf("running instances: %v, %d reservations", err, len(running.Reservations))
	}
	id := running.Reservations[0].Instances[0].InstanceId
	co, err := learner.GetConsoleOutput(t.Context(), &ec2.GetConsoleOutputInput{InstanceId: id, Latest: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	console, err := base64.StdEncoding.DecodeString(aws.ToString(co.Output))
	if err != nil || !strings.Contains(string(console), "Failed running /var/lib/cloud/instance/scripts/part-001") {
		t.Errorf("console of %s (%v) does not name the failed user-data part:\n%s", aws.ToString(id), err, console)
	}
	if strings.Contains(string(console), "> /dev/console") || !strings.Contains(string(console), "\r\nziba: bootstrap paused for inspection\r\n") {
		t.Errorf("console of %s shows the debug hook's source, not what it printed:\n%s", aws.ToString(id), console)
	}

	// The first moves, as typed in the learner's folder, each graded: the userData field
	// deleted from the file (kubectl apply keeps the lab's value); the TODOs left; the hook's
	// echo removed but not its exit; the stuck NodeClaims deleted before the fix (their
	// replacements boot the same user data and stick too).
	shells := kubectlDir(t) + ":" + debianAWSDir(t)
	dir := learnerDir(t, bootstrapLab)
	makeMoves(t, e, l, []move{
		// Before any kubectl apply of the learner's: the field has no last-applied value to drop.
		{name: "too broad: the userData field deleted from the file", apply: shellDoing(shells, dir,
			`sed '/^  userData: |/,$d' bootstrap-failure/nodeclass.yaml > no-userdata.yaml && kubectl apply -f no-userdata.yaml`),
			check: "userdata-fixed", problem: `exits with status 1 at line 7 ("exit 1")`, within: 30 * time.Second},
		{name: "the TODOs left", apply: shellDoing(shells, dir, "kubectl apply -f bootstrap-failure/nodeclass.yaml"),
			check: "userdata-fixed", problem: `exits with status 1 at line 7 ("exit 1")`, within: 30 * time.Second},
		{name: "too narrow: the echo removed, its exit left", apply: applyingEdited(exercisesFS, "bootstrap-failure/nodeclass.yaml",
			[2]string{"    echo \"ziba: bootstrap paused for inspection\" > /dev/console\n", ""}),
			check: "userdata-fixed", problem: `exits with status 1 at line 6 ("exit 1")`, within: 30 * time.Second},
		{name: "the wrong object first: the stuck NodeClaims deleted before the fix", apply: shellDoing(shells, dir, "kubectl delete nodeclaims --all"),
			check: "stuck-nodeclaims-gone", problem: "still exists", within: 2 * time.Minute},
	})
	r = checkUntil(t, e, l, false, 0)
	if c := checkOf(r, "userdata-fixed"); c == nil || !strings.Contains(c.Hint, "kubectl apply kept the lab's value") {
		t.Errorf("userdata-fixed's hint does not say a deleted field stays: %+v", c)
	}
	sol := learnerSolutionDir(t, bootstrapLab)
	solve := func(ctx context.Context, out io.Writer) error {
		said, err := runShell(t, shells, `cd "$2" && sh bootstrap-failure-solution/commands.sh`, sol)
		fmt.Fprint(out, said)
		return err
	}
	fixPasses(t, e, l, r, 2*time.Minute, "bootstrap-learner", solve)
	// The README's fix applied twice: the script again, its 15 minutes skipped again.
	if err := solve(t.Context(), testOut(t)); err != nil {
		t.Fatal(err)
	}
	if r = checkUntil(t, e, l, true, time.Minute); !r.Passed {
		t.Errorf("the README's fix applied twice fails:\n%s", reportText(r))
	}
}
