package seatimage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// The tags change with their inputs only.
func TestTag(t *testing.T) {
	if a, b := BaseTag(), BaseTag(); a != b || !strings.HasPrefix(a, BaseRepository+":") || len(a) != len(BaseRepository)+13 {
		t.Errorf("BaseTag() = %q then %q, want %s:<12 hex> twice", a, b, BaseRepository)
	}
	bin := filepath.Join(t.TempDir(), "karplab")
	if err := writeFile(bin, "one"); err != nil {
		t.Fatal(err)
	}
	one, err := Tag(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(bin, "two"); err != nil {
		t.Fatal(err)
	}
	if two, _ := Tag(bin); two == one || !strings.HasPrefix(two, Repository+":") {
		t.Errorf("Tag = %q for one binary and %q for another, want two tags of %s", one, two, Repository)
	}
}

// TestIntegrationBuild builds the seat image from the test's karplab binary, finds it built
// the second time without a word, and opens a learner's shell in it: the learner, not root,
// with kubectl, aws and karplab on PATH and every lab's exercise in the home.
func TestIntegrationBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx := context.Background()
	bin, err := karplabtest.Binary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.ChooseFor(ctx, engine.Options{ContainersConf: filepath.Join(t.TempDir(), "containers.conf")}, "a seat", "--network", "none", "--memory", "64m")
	if err != nil {
		karplabtest.RequireClient(t, "a container engine that runs a seat ("+err.Error()+")")
	}
	var status strings.Builder
	began := time.Now()
	tag, err := Ensure(ctx, Options{Engine: e, Binary: bin, Status: &status})
	t.Logf("built %s in %s:\n%s", tag, time.Since(began).Round(time.Second), status.String())
	if err != nil {
		t.Fatal(err)
	}
	status.Reset()
	began = time.Now()
	if again, err := Ensure(ctx, Options{Engine: e, Binary: bin, Status: &status}); err != nil || again != tag || status.Len() > 0 {
		t.Errorf("the second Ensure = %q, %v, printing %q; want %s, nothing built or said", again, err, status.String(), tag)
	}
	t.Logf("found built in %s", time.Since(began).Round(time.Millisecond))
	out, err := e.Run(ctx, nil, "run", "--rm", "--network", "none", "--entrypoint", "bash", tag, "-l", "-c",
		"id -un; pwd; command -v kubectl karplab aws; aws --version; ls ~/happy-path; echo $KARPLAB_BIN")
	if err != nil {
		t.Fatalf("a learner's shell in the seat image: %v", err)
	}
	for _, want := range []string{"learner\n/home/learner\n", "/usr/local/bin/kubectl", "/home/learner/.karplab/bin/karplab", "aws-cli/2.", "README.md", "/home/learner/.karplab/bin"} {
		if !strings.Contains(out, want) {
			t.Errorf("the learner's shell printed:\n%s\nwant %q in it", out, want)
		}
	}
	if size, err := e.Run(ctx, nil, "image", "inspect", "--format", "{{.Size}}", tag); err == nil {
		t.Logf("the seat image is %s bytes", strings.TrimSpace(size))
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o755) }
