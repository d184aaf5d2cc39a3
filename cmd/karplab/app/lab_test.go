package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/labs"
)

// karplab lab list prints every lab in course order, and its output ends in a newline so
// what is printed next starts on its own line.
func TestLabList(t *testing.T) {
	var out, errOut strings.Builder
	if code := Run([]string{"karplab", "lab", "list"}, strings.NewReader(""), &out, &errOut); code != ExitPass {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	if !strings.HasSuffix(got, "\n") || strings.HasSuffix(got, "\n\n") {
		t.Errorf("output does not end in exactly one newline: %q", got[max(0, len(got)-40):])
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %q", errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	var names []string
	for _, l := range lines[1:] { // after the header, up to the blank line
		if l == "" {
			break
		}
		names = append(names, strings.Fields(l)[0])
	}
	var want []string
	for _, l := range labs.All() {
		want = append(want, l.Name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("labs listed (-want +got):\n%s\n%s", diff, got)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "karplab lab get NAME") {
		t.Errorf("last line = %q, want the hint", last)
	}
}
