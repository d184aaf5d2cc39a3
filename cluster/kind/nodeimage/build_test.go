package nodeimage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// testEngine is the engine kind would use here; the test fails (under
// KARPLAB_REQUIRE_CLIENTS) or skips when there is none, and skips under -short.
func testEngine(t *testing.T) *engine.Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("-short")
	}
	e, err := engine.Choose(context.Background(), engine.Options{ContainersConf: filepath.Join(t.TempDir(), "containers.conf")})
	if err != nil {
		karplabtest.RequireClient(t, fmt.Sprintf("a container engine that runs kind's node (%v)", err))
	}
	return e
}

// The tag names the Kubernetes version and changes with nothing but the inputs.
func TestTag(t *testing.T) {
	a, err := Tag()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Tag()
	v, _ := KubeVersion()
	if a != b || !strings.HasPrefix(a, Repository+":"+v+"-") || len(a) != len(Repository+":"+v+"-")+12 {
		t.Errorf("Tag() = %q then %q, want %s:%s-<12 hex> twice", a, b, Repository, v)
	}
}

func TestVersionFlags(t *testing.T) {
	got := versionFlags("v1.37.2")
	for _, want := range []string{"k8s.io/component-base/version.gitVersion=v1.37.2", "k8s.io/client-go/pkg/version.gitMinor=37", "k8s.io/component-base/version.gitMajor=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("versionFlags = %q, want it to set %s", got, want)
		}
	}
}

// A step that fails names itself and what its command printed last, in one line, and the
// build leaves no scratch files.
func TestIntegrationBuildStepFails(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil || os.Geteuid() != 0 {
		karplabtest.RequireClient(t, "debootstrap, run as root")
	}
	work := filepath.Join(t.TempDir(), "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var status strings.Builder
	// Nothing listens on port 1: debootstrap cannot fetch the suite's Release file.
	err := Build(context.Background(), Repository+":step-fails", Options{Engine: &engine.Engine{Name: "podman"}, Mirror: "http://127.0.0.1:1/debian", WorkDir: work, Status: &status})
	var se *StepError
	if !errors.As(err, &se) || !strings.Contains(se.Step, "debootstrap") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Build error = %q, want the debootstrap step's StepError in one line", err)
	}
	if !strings.Contains(err.Error(), "Release") {
		t.Errorf("Build error = %q, want debootstrap's last lines (its failure to get the Release file)", err)
	}
	t.Logf("the error: %v", err)
	if !strings.Contains(status.String(), " ✗ [2/7] Debian") {
		t.Errorf("progress does not mark the failed step:\n%s", status.String())
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Errorf("scratch files left in %s: %v", work, err)
	}
}

// TestIntegrationEnsure builds the node image on the engine kind would use here (or finds it
// built), then proves a second Ensure builds nothing, and that the image holds what kind
// needs: kubeadm at karplab's Kubernetes version, and every image kubeadm will run,
// preloaded.
func TestIntegrationEnsure(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t)
	var status strings.Builder
	begin := time.Now()
	tag, err := Ensure(ctx, Options{Engine: e, Status: &status})
	if err != nil {
		t.Fatalf("%v\n%s", err, status.String())
	}
	t.Logf("Ensure took %s:\n%s", time.Since(begin).Round(time.Second), status.String())
	status.Reset()
	begin = time.Now()
	if again, err := Ensure(ctx, Options{Engine: e, Status: &status}); err != nil || again != tag || status.Len() > 0 || time.Since(begin) > 30*time.Second {
		t.Errorf("a second Ensure = %q, %v after %s, printing %q; want %s at once, building nothing", again, err, time.Since(begin), status.String(), tag)
	}
	v, _ := KubeVersion()
	out, err := e.Run(ctx, nil, "run", "--rm", "--entrypoint", "/usr/bin/kubeadm", tag, "version", "-o", "short")
	if err != nil || strings.TrimSpace(out) != v {
		t.Errorf("kubeadm version in %s = %q, %v; want %s", tag, out, err, v)
	}
}

// BenchmarkBuild measures a whole build with the Go build cache as it is (warm, once the
// Kubernetes packages were compiled: debootstrap, linking, CoreDNS, the images, the commit)
// under a tag of its own, removed after, and Ensure where the image exists (the no-op).
// With KARPLAB_BENCH_COLD_IMAGE=1 the build runs on an empty Go build cache instead (cold:
// Kubernetes, etcd and CoreDNS compiled from nothing; about half an hour on two cores).
func BenchmarkBuild(b *testing.B) {
	ctx := context.Background()
	e, err := engine.Choose(ctx, engine.Options{ContainersConf: filepath.Join(b.TempDir(), "containers.conf")})
	if err != nil {
		b.Skipf("no engine runs kind's node here: %v", err)
	}
	cache := "warm"
	if os.Getenv("KARPLAB_BENCH_COLD_IMAGE") == "1" {
		b.Setenv("GOCACHE", b.TempDir())
		cache = "cold"
	}
	tag, err := Tag()
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		var status strings.Builder
		begin := time.Now()
		if err := Build(ctx, tag+"-bench", Options{Engine: e, Status: &status}); err != nil {
			b.Fatalf("%v\n%s", err, status.String())
		}
		b.ReportMetric(time.Since(begin).Seconds(), "s/build-"+cache)
		e.Run(ctx, nil, "rmi", tag+"-bench") //nolint:errcheck // the same layers as tag's
		b.Logf("%s", status.String())
		if _, err := Ensure(ctx, Options{Engine: e}); err != nil {
			b.Fatal(err)
		}
		begin = time.Now()
		if _, err := Ensure(ctx, Options{Engine: e}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(begin).Seconds(), "s/ensure-built")
	}
}

// After a build, the node images of older inputs go, and those of the current ones stay.
func TestIntegrationRemoveOlder(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t)
	current, _ := Tag()
	older, kept := Repository+":v0.0.0-000000000000", current+"-removeolder-test"
	for _, img := range []string{older, kept} {
		if _, err := e.Run(ctx, strings.NewReader(string(make([]byte, 1024))), "import", "-", img); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Run(context.Background(), nil, "rmi", "-f", img) })
	}
	var status strings.Builder
	(&builder{opts: Options{Engine: e, Status: &status}}).removeOlder(ctx)
	if e.ImageExists(ctx, older) || !strings.Contains(status.String(), "Removed "+older) {
		t.Errorf("the older image %s is still there; the build said:\n%s", older, status.String())
	}
	if !e.ImageExists(ctx, kept) {
		t.Errorf("%s, of the current inputs, was removed", kept)
	}
}
