package recorder

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStreamRecordsWithoutKeepingObjects: the recorder's store writes each change as the
// reflector hands it over, without managedFields; a relist records what it holds as modified
// and what it no longer holds as deleted, in the state last recorded.
func TestStreamRecordsWithoutKeepingObjects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	r, err := New(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, rv, phase string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "ziba", "uid": "uid-" + name, "resourceVersion": rv,
				"managedFields": []any{map[string]any{"manager": "kubectl"}}},
			"status": map[string]any{"phase": phase}}}
	}
	s := newStream(r, "Pod")
	steps := []func() error{
		func() error { return s.Replace([]any{pod("a", "1", "Pending"), pod("b", "2", "Running")}, "2") },
		func() error { return s.Update(pod("a", "3", "Running")) },
		func() error { return s.Add(pod("c", "4", "Pending")) },
		func() error { return s.Delete(pod("c", "5", "Pending")) },
		// A relist after a lost watch: b went while nobody watched.
		func() error { return s.Replace([]any{pod("a", "3", "Running")}, "6") },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if !s.synced.Load() {
		t.Error("the stream is not synced after its first list")
	}
	r.close()
	recs, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		phase, _, _ := unstructured.NestedString(rec.Object.Object, "status", "phase")
		got = append(got, rec.Type+" "+rec.Object.GetName()+" "+rec.Object.GetResourceVersion()+" "+phase)
		if rec.Object.GetManagedFields() != nil {
			t.Errorf("%s %s recorded with managedFields", rec.Type, rec.Object.GetName())
		}
	}
	want := []string{"ADDED a 1 Pending", "ADDED b 2 Running", "MODIFIED a 3 Running", "ADDED c 4 Pending", "DELETED c 5 Pending", "DELETED b 2 Running"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(s.last) != 1 {
		t.Errorf("the stream keeps %d objects' JSON, want 1 (a)", len(s.last))
	}
}
