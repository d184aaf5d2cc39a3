package statefile

import (
	"sync"
	"testing"
)

// Writes that waited for their batch are in the file after a reopen, deletes included,
// however many writers shared a commit.
func TestWritesSurviveAReopen(t *testing.T) {
	dir := t.TempDir()
	f, err := Open(dir, []string{"things"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, k := range []string{"a", "b", "c", "d"} {
		wg.Go(func() {
			if err := <-f.Enqueue([]Op{{Bucket: "things", Key: k, Val: []byte(`{"name":"` + k + `"}`)}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := <-f.Enqueue([]Op{{Bucket: "things", Key: "b"}, {Bucket: "other", Key: "x", Val: []byte(`{"name":"x"}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	f, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]bool{}
	type thing struct{ Name string }
	for _, bucket := range []string{"things", "other", "never-written"} {
		if err := LoadJSON(f, bucket, func(r *thing) { got[bucket+"/"+r.Name] = true }); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{"things/a": true, "things/c": true, "things/d": true, "other/x": true}
	if len(got) != len(want) {
		t.Fatalf("after a reopen: %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("after a reopen: %v, want %v", got, want)
		}
	}
}

// A lab without a state directory has no file: writes are done at once, loads find nothing.
func TestNoFile(t *testing.T) {
	var f *File
	if err := <-f.Enqueue([]Op{{Bucket: "b", Key: "k", Val: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Load("b", func(k, v []byte) error { t.Fatalf("loaded %s", k); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
