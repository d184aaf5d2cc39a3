package labs

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The snapshots are real runs of the disruption labs (saved by their integration tests with
// KARPLAB_SNAPSHOT_DIR, gzip -9), and one by hand: consolidation-halfway is the exercise with
// the policy and consolidateAfter fixed but the 100% budget and no PodDisruptionBudget.
// Their grading and correlation are pinned by golden files (-update rewrites them).
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
			var evText, report bytes.Buffer
			if err := Correlate(snap).WriteText(&evText); err != nil {
				t.Fatal(err)
			}
			r := l.GradeSnapshot(t.Context(), nil, snap)
			if err := r.WriteText(&report); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".evidence.txt", evText.Bytes())
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
