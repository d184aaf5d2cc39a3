package labs

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// snapshotLabs maps the prefix of a saved snapshot's name to the lab it was taken in.
var snapshotLabs = map[string]string{
	"happy": "happy-path", "denied": deniedLab, "consolidation": consolidationLab, "leak": leakLab,
	"bootstrap": bootstrapLab, "amidrift": amiDriftLab, "interruption": interruptionLab,
	"orphaned": orphanedLab, "overlap": overlapLab, "truth": truthLab, "runaway": runawayLab,
	"expiry": expiryLab,
}

// gradedSnapshots grades every saved snapshot of a real run (evidence/testdata) with its lab.
func gradedSnapshots(t *testing.T) map[string]*Report {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("evidence", "testdata", "*.snapshot.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Report{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".snapshot.json.gz")
		prefix, _, _ := strings.Cut(name, "-")
		lab, ok := snapshotLabs[prefix]
		if !ok {
			continue // the evidence package's own fixtures
		}
		l, err := Get(lab)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = l.GradeSnapshot(t.Context(), nil, loadSnapshot(t, name))
	}
	return out
}

// No check's verdict contradicts its own lines: a passed check prints no problem. Each check
// of each lab is held to it on every real run saved (the solutions, the untouched exercises
// and the learners' loops), one subtest per check; every lab must have a saved run.
func TestNoVerdictContradictsItsLines(t *testing.T) {
	byCheck := map[string][]string{} // lab/check -> its contradictions
	labs := map[string]bool{}
	for name, r := range gradedSnapshots(t) {
		labs[r.Lab] = true
		for _, c := range r.Checks {
			key := r.Lab + "/" + c.ID
			if _, ok := byCheck[key]; !ok {
				byCheck[key] = nil // every check gets its subtest
			}
			for _, x := range c.contradictions() {
				byCheck[key] = append(byCheck[key], name+": "+x)
			}
		}
	}
	for _, l := range All() {
		if !labs[l.Name] {
			t.Errorf("no saved run of lab %s: its checks are not held to their lines", l.Name)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(byCheck)) {
		t.Run(key, func(t *testing.T) {
			for _, x := range byCheck[key] {
				t.Error(x)
			}
		})
	}
}

// The contradiction the learners met: availability-held passed with "never fewer than 3
// serving" while its own lines showed none available when EC2 warned. From the warning on,
// the count in force when it came counts too.
func TestAvailabilityJudgedFromTheWarning(t *testing.T) {
	warned := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return warned.Add(time.Duration(s) * time.Second) }
	r := interruption{Warned: warned, Deadline: at(120)}
	tests := []struct {
		name  string
		steps []availStep
		pass  bool
		want  string // a line of the check's problems (fail) or its reason (pass)
	}{
		{name: "none serving when warned, three later",
			steps: []availStep{{at(-300), 1}, {at(-299), 2}, {at(-298), 3}, {at(-10), 0}, {at(55), 3}},
			want:  "at the warning: 0 available (fewer than 2)"},
		{name: "two through the drain",
			steps: []availStep{{at(-300), 3}, {at(5), 2}, {at(40), 3}}, pass: true,
			want: "never fewer than 2 serving from the warning on; 3 at the warning"},
		{name: "a dip after the warning",
			steps: []availStep{{at(-300), 3}, {at(5), 1}, {at(40), 3}},
			want:  "+5s: 1 available (fewer than 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkAvailabilityThroughLoss(nil, r, tt.steps)
			if c.Passed != tt.pass {
				t.Fatalf("passed %t, want %t: %s %v %v", c.Passed, tt.pass, c.Reason, c.Problems, c.Evidence)
			}
			lines := c.Problems
			if tt.pass {
				lines = []string{c.Reason}
			}
			if !slices.Contains(lines, tt.want) {
				t.Errorf("want %q among %q", tt.want, lines)
			}
			if x := c.contradictions(); len(x) > 0 {
				t.Errorf("contradictions: %v", x)
			}
		})
	}
}
