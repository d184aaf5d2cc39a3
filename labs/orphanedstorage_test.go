package labs

import (
	"slices"
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

func TestIntegrationOrphanedStorageSolutionPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(orphanedLab)
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, time.Minute)
	keepSnapshot(t, e, "orphaned-solution")
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
	swept := strings.Join(r.Checks[1].Evidence, "\n")
	for _, kind := range []string{"volume vol-", "snapshot snap-", "network-interface eni-"} {
		if !strings.Contains(swept, kind) {
			t.Errorf("want a %s deleted among the orphans:\n%s", kind, reportText(r))
		}
	}
	if !strings.Contains(swept, "by you") {
		t.Errorf("want the orphans deleted by the learner:\n%s", reportText(r))
	}
}

// The learner's loop: the untouched exercise fails on what is left; a learner who deletes
// the backup of a disk a running machine still uses fails in-use-kept too. Then the sweep
// and the fix as the README has them: every other check passes, and in-use-kept, a loss
// that cannot be given back, names the reset.
func TestIntegrationOrphanedStorageExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l, _ := Get(orphanedLab)
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Wait: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r, err := l.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nothing-unattached", "orphans-billing-stopped", "nodeclass-deletes-volumes"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks of the untouched exercise (-want +got):\n%s\n%s", diff, reportText(r))
	}
	left := r.Checks[1].Problems
	for _, kind := range []string{"volume vol-", "snapshot snap-", "network-interface eni-"} {
		if !strings.Contains(strings.Join(left, "\n"), kind) {
			t.Errorf("want a %s left unattached:\n%s", kind, reportText(r))
		}
	}

	// The first moves on the EC2NodeClass, as typed in the learner's folder: the TODOs left,
	// only the root volume fixed, the fix applied to an EC2NodeClass no NodePool uses.
	dir := learnerDir(t, orphanedLab)
	wrongClass := [2]string{"name: ziba-general", "name: ziba-general-fixed"}
	makeMoves(t, e, l, []move{
		// The sweep's TODOs left: the script as copied out runs as typed (karplab ec2 billing
		// included) and deletes nothing.
		{name: "the sweep's TODOs left", apply: shellDoing(kubectlDir(t)+":"+debianAWSDir(t), dir, "sh orphaned-storage/commands.sh"),
			check: "nothing-unattached", problem: "volume vol-", within: 30 * time.Second},
		{name: "the TODOs left", apply: shellDoing(kubectlDir(t), dir, "kubectl apply -f orphaned-storage/nodeclass.yaml"),
			check: "nodeclass-deletes-volumes", problem: "/dev/xvda has deleteOnTermination: false", within: 30 * time.Second},
		{name: "too narrow: the root volume only", apply: untilGone(l, applyingEdited(exercisesFS, "orphaned-storage/nodeclass.yaml", [2]string{"deleteOnTermination: false # TODO", "deleteOnTermination: true"}),
			"nodeclass-deletes-volumes", "/dev/xvda"),
			check: "nodeclass-deletes-volumes", problem: "/dev/xvdb has deleteOnTermination: false", not: "/dev/xvda", within: 30 * time.Second},
		{name: "the fix on the wrong object: an EC2NodeClass no NodePool uses", apply: applyingEdited(solutionsFS, "orphaned-storage/nodeclass.yaml", wrongClass),
			check: "nodeclass-deletes-volumes", problem: "/dev/xvdb has deleteOnTermination: false", within: 30 * time.Second},
	})

	// Too broad, the wrong sweep: every snapshot of the cluster, the live machine's backup included.
	learner := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.Learner)
	snaps, err := learner.DescribeSnapshots(t.Context(), &ec2.DescribeSnapshotsInput{OwnerIds: []string{"self"},
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + clusterTagPrefix + e.Account.ClusterName), Values: []string{"owned"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps.Snapshots {
		if _, err := learner.DeleteSnapshot(t.Context(), &ec2.DeleteSnapshotInput{SnapshotId: s.SnapshotId}); err != nil {
			t.Fatal(err)
		}
	}
	// The narrow move's drift replacement may still be in flight (no-leaks names its instance
	// until its NodeClaim's tag lands: seconds, more on a loaded machine).
	want = append(want, "in-use-kept")
	r = checkUntilFailed(t, e, l, want, 30*time.Second)
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks after deleting a live disk's backup (-want +got):\n%s\n%s", diff, reportText(r))
	}
	keepSnapshot(t, e, "orphaned-exercise")

	// The reference sweep, verbatim through the aws CLI, clears what is left unused and
	// leaves the running machine's disks alone; the EC2NodeClass is still unfixed.
	out := runScript(t, "../solutions/orphaned-storage/commands.sh")
	// The narrow move's drift replacement may be in flight: its instance has no NodeClaim
	// for a moment.
	want = []string{"nodeclass-deletes-volumes", "in-use-kept"}
	r = checkUntilFailed(t, e, l, want, 30*time.Second)
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks after commands.sh (-want +got):\n%s\n%s\ncommands.sh said:\n%s", diff, reportText(r), out)
	}
	if !strings.Contains(out, "vol-") || !strings.Contains(out, "eni-") {
		t.Errorf("commands.sh found no volume or interface:\n%s", out)
	}

	// The fix (README step 4), then the sweep again for what the replaced machine left.
	start := time.Now()
	if err := e.ApplySolution(t.Context(), orphanedLab, testOut(t)); err != nil {
		t.Fatal(err)
	}
	if err := e.waitChecks(t.Context(), testOut(t), 4*time.Minute, orphanedLab, "nodeclass-deletes-volumes"); err != nil {
		t.Fatal(err)
	}
	out = runScript(t, "../solutions/orphaned-storage/commands.sh")
	r = checkUntilFailed(t, e, l, []string{"in-use-kept"}, time.Minute)
	if diff := cmp.Diff([]string{"in-use-kept"}, r.Failed()); diff != "" {
		t.Errorf("failed checks after the fix and the sweep (-want +got):\n%s\n%s\ncommands.sh said:\n%s", diff, reportText(r), out)
	}
	hintNamesReset(t, r, "in-use-kept")
	keepSnapshot(t, e, "orphaned-learner")
	// The README's fix applied twice (nodeclass.yaml and the sweep): nothing changes.
	if err := e.ApplySolution(t.Context(), orphanedLab, testOut(t)); err != nil {
		t.Fatal(err)
	}
	out = runScript(t, "../solutions/orphaned-storage/commands.sh")
	if r = checkUntilFailed(t, e, l, []string{"in-use-kept"}, 30*time.Second); !slices.Equal(r.Failed(), []string{"in-use-kept"}) {
		t.Errorf("after the README's fix applied twice, want only in-use-kept failed:\n%s\ncommands.sh said:\n%s", reportText(r), out)
	}
	t.Logf("learner's loop: %s: every check but the event's passed %s after the fix began\n%s", orphanedLab, time.Since(start).Round(time.Second), checkLine(r))
}

// untilGone is apply, then grading until check id's ✗ lines no longer say gone: the move
// has taken (the recorder saw it) before its own ✗ line is looked for.
func untilGone(l *Lab, apply func(t *testing.T, e *Env), id, gone string) func(t *testing.T, e *Env) {
	return func(t *testing.T, e *Env) {
		t.Helper()
		apply(t, e)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			if c := checkOf(checkUntil(t, e, l, false, 0), id); c == nil || !strings.Contains(strings.Join(c.Problems, "\n"), gone) {
				return
			}
		}
	}
}
