package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints one line per finding, then a summary line.
func (r *Report) WriteText(w io.Writer) error {
	var errs, warns int
	for _, f := range r.Findings {
		rule := string(f.Rule)
		if f.Severity == SeverityWarning {
			rule += " (warning)"
			warns++
		} else {
			errs++
		}
		if _, err := fmt.Fprintf(w, "%s: %s: %s; fix: %s\n", strings.Join(f.NodePools, " and "), rule, f.Message, f.Fix); err != nil {
			return err
		}
	}
	summary := "clean"
	if errs+warns > 0 {
		summary = fmt.Sprintf("%d %s, %d %s", errs, plural(errs, "error"), warns, plural(warns, "warning"))
	}
	_, err := fmt.Fprintf(w, "%d %s: %s\n", len(r.NodePools), plural(len(r.NodePools), "NodePool"), summary)
	return err
}

// WriteJSON prints the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
