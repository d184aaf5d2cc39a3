package recorder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadSkipsRepeatsAndTornLines(t *testing.T) {
	lines := []string{
		`{"time":"2026-12-02T10:00:00Z","kind":"Pod","type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":"u1","resourceVersion":"1"}}}`,
		`{"time":"2026-12-02T10:00:01Z","kind":"Pod","type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":"u1","resourceVersion":"2"}}}`,
		// A daemon restart lists the same version again.
		`{"time":"2026-12-02T10:05:00Z","kind":"Pod","type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":"u1","resourceVersion":"2"}}}`,
		`{"time":"2026-12-02T10:06:00Z","kind":"Pod","type":"DELETED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":"u1","resourceVersion":"2"}}}`,
		`{"time":"2026-12-02T10:07:00Z","kind":"Pod","type":"ADD`, // torn by a crash
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, err := Read(path)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Type+" "+r.Object.GetResourceVersion())
	}
	want := []string{"ADDED 1", "MODIFIED 2", "DELETED 2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestReadMissingFileIsEmpty(t *testing.T) {
	recs, err := Read(filepath.Join(t.TempDir(), "none.jsonl"))
	if err != nil || len(recs) != 0 {
		t.Fatalf("Read of a missing history = %v, %v; want empty, nil", recs, err)
	}
}
