package labs

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Check is one graded item of a lab's checklist.
type Check struct {
	// ID is stable, for tests and scripts ("chain-complete").
	ID string `json:"id"`
	// Title says what is being proven, as a checklist line.
	Title  string `json:"title"`
	Passed bool   `json:"passed"`
	// Reason says what the evidence showed: on a pass, the proof; on a failure, what is wrong.
	Reason string `json:"reason"`
	// Hint tells the learner where to look or what to change; set on failures.
	Hint string `json:"hint,omitempty"`
	// Problems are the lines that fail the check: what is wrong now. A passed check has none.
	Problems []string `json:"problems,omitempty"`
	// Evidence quotes identifiers, event text or audit entries behind the verdict, and the
	// history the learner already fixed, as context.
	Evidence []string `json:"evidence,omitempty"`
}

// Report is a graded lab.
type Report struct {
	Lab      string    `json:"lab"`
	Title    string    `json:"title"`
	GradedAt time.Time `json:"gradedAt"`
	Passed   bool      `json:"passed"`
	Checks   []Check   `json:"checks"`
}

// newReport sums up checks: the lab passes when every check passes (and there is one).
func newReport(l *Lab, at time.Time, checks []Check) *Report {
	r := &Report{Lab: l.Name, Title: l.Title, GradedAt: at.UTC(), Checks: checks, Passed: len(checks) > 0}
	for _, c := range checks {
		if !c.Passed {
			r.Passed = false
		}
	}
	return r
}

// Failed returns the IDs of the failed checks.
func (r *Report) Failed() []string {
	var ids []string
	for _, c := range r.Checks {
		if !c.Passed {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// WriteText prints the checklist for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", r.Lab, r.Title)
	passed := 0
	for _, c := range r.Checks {
		mark := "[x]"
		if c.Passed {
			passed++
		} else {
			mark = "[ ]"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, c.Title)
		fmt.Fprintf(&b, "    %s\n", indentLines(c.Reason, "    "))
		for _, p := range c.Problems {
			fmt.Fprintf(&b, "      %s %s\n", problemMark, indentLines(p, "        "))
		}
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "      - %s\n", indentLines(e, "        "))
		}
		if !c.Passed && c.Hint != "" {
			fmt.Fprintf(&b, "    hint: %s\n", indentLines(c.Hint, "          "))
		}
	}
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "\n%s: %d of %d checks passed\n", verdict, passed, len(r.Checks))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report machine-readably.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func indentLines(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

// problemMark starts a problem line in the text report; evidence lines start with "-".
const problemMark = "✗"

// pass and fail build checks tersely in graders: a passed check quotes its proof; a failed
// one lists its problems.
func pass(id, title, reason string, evidence ...string) Check {
	return Check{ID: id, Title: title, Passed: true, Reason: reason, Evidence: evidence}
}

func fail(id, title, reason, hint string, problems ...string) Check {
	return Check{ID: id, Title: title, Reason: reason, Hint: hint, Problems: problems}
}

// failWith is fail with context beside the problems: the proof of what does hold, or the
// history the learner already fixed.
func failWith(id, title, reason, hint string, problems, context []string) Check {
	return Check{ID: id, Title: title, Reason: reason, Hint: hint, Problems: problems, Evidence: context}
}

// contradictions lists where a check's verdict contradicts its own lines: a passed check
// that prints a problem, or a failed one that prints none (the learner is told "no" without
// a ✗ line saying why).
func (c Check) contradictions() []string {
	var out []string
	if c.Passed {
		for _, p := range c.Problems {
			out = append(out, fmt.Sprintf("%s passed with the problem %q", c.ID, p))
		}
	} else if len(c.Problems) == 0 {
		out = append(out, fmt.Sprintf("%s failed without a %s line saying why (reason %q)", c.ID, problemMark, c.Reason))
	}
	return out
}
