package labs

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
	"github.com/karplab/karplab/labs/evidence"
)

// Reports print local times; golden files are written in UTC.
func init() { time.Local = time.UTC }

// loadSnapshot reads a snapshot a real lab run saved (karplab evidence --snapshot FILE,
// gzipped). The snapshots are the evidence package's fixtures: it pins their correlation,
// this package their grading.
func loadSnapshot(t *testing.T, name string) *evidence.Snapshot {
	t.Helper()
	s, err := evidence.ReadSnapshot(filepath.Join("evidence", "testdata", name+".snapshot.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	karplabtest.Golden(t, filepath.Join("testdata", name), got)
}

// The snapshots are real runs of the happy path: the seed's manifests (solution) and the
// untouched exercise. Their grading is pinned by golden files (their correlation by the
// evidence package's).
func TestGoldenHappyPath(t *testing.T) {
	lab, err := Get("happy-path")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		wantPass   bool
		wantFailed []string
	}{
		{name: "happy-solution", wantPass: true},
		{name: "happy-exercise", wantFailed: []string{"nodepool-bounded", "limits-respected", "machines-governed", "cost-tags"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := loadSnapshot(t, tt.name)
			var report bytes.Buffer
			r := lab.GradeSnapshot(t.Context(), nil, snap)
			if err := r.WriteText(&report); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".report.txt", report.Bytes())
			if r.Passed != tt.wantPass {
				t.Errorf("report passed = %t, want %t", r.Passed, tt.wantPass)
			}
			if diff := cmp.Diff(tt.wantFailed, r.Failed()); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
		})
	}
}
