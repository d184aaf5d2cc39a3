package karplabtest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/...) from the current output")

// Golden compares got with the golden file at path, or rewrites the file under -update. A
// difference is printed (-want +got), an XML file's split at each element.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run '%s' -update in its package to create it)", err, t.Name())
	}
	var diff string
	if strings.HasSuffix(path, ".xml") {
		diff = cmp.Diff(strings.SplitAfter(string(want), ">"), strings.SplitAfter(string(got), ">"))
	} else {
		diff = cmp.Diff(string(want), string(got))
	}
	if diff != "" {
		t.Errorf("%s differs (-want +got), rerun with -update if the change is intended:\n%s", path, diff)
	}
}
