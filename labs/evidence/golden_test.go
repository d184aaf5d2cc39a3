package evidence

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// The record prints local times; golden files are written in UTC.
func init() { time.Local = time.UTC }

// loadSnapshot reads a snapshot a real lab run saved (karplab evidence --snapshot FILE, gzipped).
func loadSnapshot(t *testing.T, name string) *Snapshot {
	t.Helper()
	s, err := ReadSnapshot(filepath.Join("testdata", name+".snapshot.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	karplabtest.Golden(t, filepath.Join("testdata", name), got)
}

// The snapshots are real runs of the labs (solutions, untouched exercises, and a learner's
// path half done); their correlation is pinned by golden files: the text tables for each, the
// JSON record for the happy path. The HTML page has its own test (html_test.go).
func TestGoldenEvidence(t *testing.T) {
	tests := []struct {
		name string
		json bool // also pin the JSON record
	}{
		{name: "happy-solution", json: true},
		{name: "happy-exercise", json: true},
		// The denied path's PENDING POD table.
		{name: "denied-solution"},
		{name: "denied-exercise"},
		{name: "consolidation-solution"},
		{name: "consolidation-exercise"},
		{name: "consolidation-halfway"},
		{name: "interruption-solution"},
		{name: "interruption-exercise"},
		{name: "amidrift-solution"},
		{name: "amidrift-exercise"},
		{name: "orphaned-solution"},
		{name: "orphaned-exercise"},
		{name: "overlap-solution"},
		{name: "overlap-exercise"},
		// The USAGE table: observed peaks against requests, evictions.
		{name: "truth-solution"},
		{name: "truth-exercise"},
		// The BUDGET table: the alert dated in lab time, inside the skipped span.
		{name: "runaway-solution"},
		{name: "runaway-exercise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Correlate(loadSnapshot(t, tt.name))
			var text bytes.Buffer
			if err := ev.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".evidence.txt", text.Bytes())
			if tt.json {
				var js bytes.Buffer
				enc := json.NewEncoder(&js)
				enc.SetIndent("", "  ")
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
				golden(t, tt.name+".evidence.json", js.Bytes())
			}
		})
	}
}

// Every launch call that created an instance names the NodeClaim it launched for, in the
// saved runs of every lab, though the real provider's CreateFleet carries no
// karpenter.sh/nodeclaim tag (its instance gets it later): the launch table once showed "-".
func TestLaunchCallsNameTheirNodeClaim(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*-solution.snapshot.json.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no saved solution runs: %v", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".snapshot.json.gz")
		ev := Correlate(loadSnapshot(t, name))
		named := 0
		for _, c := range ev.Launches {
			instances := slices.ContainsFunc(c.Created, func(id string) bool { return strings.HasPrefix(id, "i-") })
			if instances && c.ErrorCode == "" {
				if c.NodeClaim == "" {
					t.Errorf("%s: %s %s created %v for no NodeClaim", name, c.Action, c.RequestID, c.Created)
				}
				named++
			}
		}
		if named == 0 && len(ev.NodeClaims) > 0 {
			t.Errorf("%s: %d NodeClaims but no launch call that created an instance", name, len(ev.NodeClaims))
		}
	}
}
