package labs

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/trail"
	"github.com/karplab/karplab/labs/evidence"
)

// The snapshots are real runs of the disruption labs (saved by their integration tests with
// KARPLAB_SNAPSHOT_DIR, gzip -9), and one by hand: consolidation-halfway is the exercise with
// the policy and consolidateAfter fixed but the 100% budget and no PodDisruptionBudget.
// Their grading is pinned by golden files (-update rewrites them); the evidence package pins
// their correlation.
func TestGoldenDisruptionLabs(t *testing.T) {
	tests := []struct {
		lab, name  string
		wantFailed []string
	}{
		{lab: consolidationLab, name: "consolidation-solution"},
		{lab: consolidationLab, name: "consolidation-exercise",
			wantFailed: []string{"nodes-consolidated", "disruption-budget", "pdb-protects", "pods-rescheduled", "consolidated-cleaned-up", "cost-saved"}},
		{lab: consolidationLab, name: "consolidation-halfway",
			wantFailed: []string{"disruption-budget", "pdb-protects"}},
		{lab: interruptionLab, name: "interruption-solution"},
		{lab: interruptionLab, name: "interruption-exercise",
			wantFailed: []string{"blast-radius", "availability-held", "capacity-replaced", "recovery-timeline"}},
		{lab: amiDriftLab, name: "amidrift-solution"},
		{lab: amiDriftLab, name: "amidrift-exercise",
			wantFailed: []string{"ami-pinned", "no-unplanned-rollout", "instances-on-approved-ami", "rollback-rehearsed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Get(tt.lab)
			if err != nil {
				t.Fatal(err)
			}
			snap := loadSnapshot(t, tt.name)
			var report bytes.Buffer
			r := l.GradeSnapshot(t.Context(), nil, snap)
			if err := r.WriteText(&report); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".report.txt", report.Bytes())
			if r.Passed != (len(tt.wantFailed) == 0) {
				t.Errorf("report passed = %t, want %t", r.Passed, len(tt.wantFailed) == 0)
			}
			if diff := cmp.Diff(tt.wantFailed, r.Failed()); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s\n%s", diff, report.String())
			}
		})
	}
}

// TestDisruptionLabsOnAnEmptyLab: graded before anything was staged, every lab fails with
// reasons (and does not panic); an interruption of a machine Karpenter never knew is reported
// as such.
func TestDisruptionLabsOnAnEmptyLab(t *testing.T) {
	empty := &evidence.Snapshot{TakenAt: time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)}
	stray := &evidence.Snapshot{
		TakenAt: empty.TakenAt,
		Audit: []trail.AuditEvent{{Time: empty.TakenAt.Add(-3 * time.Minute), Action: fakeec2.ActionSpotWarning, Caller: fakeec2.AWSServiceCaller,
			Parameters: map[string]string{"InstanceId.1": "i-0123456789abcdef0", "ReclaimAt": empty.TakenAt.Add(-time.Minute).Format(time.RFC3339Nano)}},
			{Time: empty.TakenAt.Add(-time.Minute), Action: fakeec2.ActionBidEvicted,
				Caller: fakeec2.AWSServiceCaller, Terminated: []string{"i-0123456789abcdef0"}}},
		Instances: []ec2types.Instance{{InstanceId: aws.String("i-0123456789abcdef0"), InstanceType: "m6g.large",
			State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameTerminated}, LaunchTime: aws.Time(empty.TakenAt.Add(-time.Hour))}},
	}
	tests := []struct {
		lab        string
		snap       *evidence.Snapshot
		wantPassed []string
	}{
		{lab: consolidationLab, snap: empty, wantPassed: []string{"no-leaks"}},
		{lab: interruptionLab, snap: empty, wantPassed: []string{"no-leaks"}},
		{lab: interruptionLab, snap: stray, wantPassed: []string{"no-leaks"}},
		{lab: amiDriftLab, snap: empty, wantPassed: []string{"no-leaks"}},
	}
	for _, tt := range tests {
		t.Run(tt.lab, func(t *testing.T) {
			l, err := Get(tt.lab)
			if err != nil {
				t.Fatal(err)
			}
			r := l.GradeSnapshot(t.Context(), nil, tt.snap)
			var passed []string
			for _, c := range r.Checks {
				if c.Passed {
					passed = append(passed, c.ID)
				}
				if !c.Passed && (c.Reason == "" || c.Hint == "") {
					t.Errorf("%s fails without a reason or hint: %+v", c.ID, c)
				}
			}
			if diff := cmp.Diff(tt.wantPassed, passed); diff != "" {
				t.Errorf("passed checks (-want +got):\n%s\n%s", diff, reportText(r))
			}
			if tt.snap == stray && !strings.Contains(r.Checks[0].Reason, "no NodeClaim ever named it") {
				t.Errorf("a stray interruption: %s", r.Checks[0].Reason)
			}
		})
	}
}
