package labs

import (
	"strings"
	"testing"
	"time"
)

// The first moves a learner makes on the EC2NodeClass's amiSelectorTerms, before AWS
// publishes: each is judged by ami-pinned with a ✗ line naming the term that follows AWS's
// publications; the README's pin passes, applied once or twice.
func TestAMIPinnedMoves(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	term := func(k, v string) []any { return []any{map[string]any{k: v}} }
	tests := []struct {
		name    string
		applied [][]any // the amiSelectorTerms applied, in order
		problem string  // a ✗ line, or "" for a pass
	}{
		{name: "the TODO left", applied: [][]any{term("alias", "al2023@latest")}, problem: "alias=al2023@latest"},
		{name: "too broad: every AL2023 image by name", applied: [][]any{term("name", "amazon-eks-node-al2023-*")}, problem: "name=amazon-eks-node-al2023-*"},
		{name: "a pin beside @latest", applied: [][]any{append(term("alias", "al2023@v20261101"), term("alias", "al2023@latest")...)}, problem: "alias=al2023@latest"},
		{name: "the README's pin", applied: [][]any{term("alias", "al2023@v20261101")}},
		{name: "the README's pin, twice", applied: [][]any{term("alias", "al2023@v20261101"), term("alias", "al2023@v20261101")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var history []pinState
			for i, terms := range tt.applied {
				history = append(history, pinState{At: at.Add(time.Duration(i) * time.Minute), Pin: parsePin(terms)})
			}
			c := checkAMIPinned(history)
			if x := c.contradictions(); len(x) > 0 {
				t.Error(x)
			}
			if tt.problem == "" {
				if !c.Passed {
					t.Errorf("fails: %s %q", c.Reason, c.Problems)
				}
				return
			}
			if c.Passed || !strings.Contains(strings.Join(c.Problems, "\n"), tt.problem) {
				t.Errorf("passed %t, problems %q: want a ✗ line naming %q", c.Passed, c.Problems, tt.problem)
			}
		})
	}
}
