package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInterspersed(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	tests := []struct {
		name string
		args string
		want string
	}{
		{name: "bool flag after the name", args: "karplab lab run happy-path --solution", want: "karplab lab run --solution happy-path"},
		{name: "flag already first", args: "karplab lab run --solution happy-path", want: "karplab lab run --solution happy-path"},
		{name: "value flag after the name", args: "karplab check happy-path --json", want: "karplab check --json happy-path"},
		{name: "flag with separate value", args: "karplab evidence --html page.html", want: "karplab evidence --html page.html"},
		{name: "global flag kept in place", args: "karplab -v 1 check happy-path --json", want: "karplab -v 1 check --json happy-path"},
		{name: "kubectl passes through", args: "karplab kubectl get pods -n ziba", want: "karplab kubectl get pods -n ziba"},
		{name: "two positionals", args: "karplab lab get happy-path mydir", want: "karplab lab get happy-path mydir"},
		{name: "double dash ends flags", args: "karplab lab get -- --odd-dir", want: "karplab lab get -- --odd-dir"},
		{name: "unknown command untouched", args: "karplab nope --x y", want: "karplab nope --x y"},
		{name: "flag value after positional", args: "karplab ec2 audit --action CreateFleet", want: "karplab ec2 audit --action CreateFleet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(interspersed(app, strings.Fields(tt.args)), " ")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLabGet(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := run(t, "lab", "get", "happy-path", dir+"/ex")
	if code != 0 {
		t.Fatalf("lab get: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"README.md", "nodepool.yaml", "workload.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, "ex", f)); err != nil {
			t.Errorf("exercise file %s: %v", f, err)
		}
	}
	// The learner's work is never overwritten.
	if code, _, errOut := run(t, "lab", "get", "happy-path", dir+"/ex"); code != ExitError || !strings.Contains(errOut, "not overwriting") {
		t.Errorf("second lab get: exit %d, %q; want exit 2, not overwriting", code, errOut)
	}
	if code, _, errOut := run(t, "lab", "get", dir+"/sol", "--solution", "happy-path"); code != ExitError || !strings.Contains(errOut, "no lab named") {
		t.Errorf("lab get with the name second: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "lab", "get", "happy-path", dir+"/sol", "--solution"); code != 0 {
		t.Fatalf("lab get --solution: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sol", "nodepool.yaml"))
	if err != nil || !strings.Contains(string(b), "consolidationPolicy: WhenEmptyOrUnderutilized") {
		t.Errorf("solution nodepool.yaml: %v\n%s", err, b)
	}
	if code, _, errOut := run(t, "lab", "get", "no-such-lab"); code != ExitError || !strings.Contains(errOut, "happy-path") {
		t.Errorf("unknown lab: exit %d, %q; want exit 2 listing the labs", code, errOut)
	}
}
