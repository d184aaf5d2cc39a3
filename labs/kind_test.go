package labs

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/kind/kindtest"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// TestIntegrationKind runs the happy path and the consolidation lab on the kind backend: a
// lab daemon started as `karplab start --backend kind` starts it, on the kind cluster it
// creates (the node image built first, as make kind-image does, or found built). On kind as
// on every backend, each lab's solution passes and its untouched exercise fails. Then stop
// deletes the cluster. The other labs stay on the pool's clusters.
func TestIntegrationKind(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no lab is started")
	}
	t.Parallel()
	if _, err := labBinary(); err != nil {
		t.Fatal(err)
	}
	kindtest.Lock(t)
	l := startKindLab(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, e *Env)
	}{
		{"happy-path solution passes", happyPathSolutionPasses},
		{"happy-path exercise fails", func(t *testing.T, e *Env) { happyPathExerciseFails(t, e) }},
		{"consolidation solution passes", func(t *testing.T, e *Env) {
			solutionPassesOn(t, e, consolidationLab, 3*time.Minute, time.Minute, "")
		}},
		{"consolidation exercise fails", func(t *testing.T, e *Env) { consolidationExerciseFails(t, e) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool.held.Store(t, l)
			t.Cleanup(func() { pool.held.Delete(t) })
			var progress strings.Builder
			start := time.Now()
			if err := cluster.Reset(t.Context(), l.home, &progress); err != nil {
				t.Fatalf("resetting the lab: %v\n%s", err, progress.String())
			}
			logPhase(t, "reset", time.Since(start))
			tc.run(t, l.env)
		})
	}
}

// startKindLab builds the node image (or finds it built), starts a lab daemon on the kind
// backend, checks that its API server is published on 127.0.0.1 only, and stops it when t
// ends: the cluster must then be gone.
func startKindLab(t *testing.T) *testLab {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	home := cluster.Home(filepath.Join(dir, "home"))
	image := exec.Command(binary.exe, "kind-image")
	image.Env = append(os.Environ(), "KARPLAB_HOME="+string(home))
	begin := time.Now()
	out, err := image.CombinedOutput()
	if errors.Is(err, exec.ErrNotFound) || (err != nil && strings.Contains(string(out), engine.ErrNoEngine.Error())) {
		karplabtest.RequireClient(t, "a container engine for kind")
	}
	if err != nil {
		t.Fatalf("karplab kind-image: %v\n%s", err, out)
	}
	t.Logf("karplab kind-image (%s):\n%s", time.Since(begin).Round(time.Second), out)
	l := &testLab{home: home}
	begin = time.Now()
	if err := l.startDaemon(ctx, cluster.StartOptions{Backend: "kind", Provider: testProvider()}); err != nil {
		log, _ := os.ReadFile(home.DaemonLog())
		t.Fatalf("starting the lab on kind: %v\n%s", err, log)
	}
	t.Logf("the lab on kind was ready after %s", time.Since(begin).Round(time.Second))
	t.Cleanup(func() { stopKindLab(t, l) })
	st, err := home.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if u, err := url.Parse(st.APIServer); err != nil || u.Hostname() != "127.0.0.1" {
		t.Errorf("the kind cluster's API server is at %q, want 127.0.0.1", st.APIServer)
	}
	if ports := nodePorts(t, home); len(ports) != 1 || !strings.HasPrefix(ports[0], "6443/tcp -> 127.0.0.1:") {
		t.Errorf("kind's node publishes %q, want the API server on 127.0.0.1 only", ports)
	}
	if l.env, err = NewEnv(ctx, home); err != nil {
		t.Fatal(err)
	}
	return l
}

// nodePorts is what kind's node container publishes, as the engine lists it.
func nodePorts(t *testing.T, home cluster.Home) []string {
	t.Helper()
	out, err := exec.Command(kindEngine(t, home), "port", "karplab-control-plane").CombinedOutput()
	if err != nil {
		t.Errorf("listing the node's ports: %v %s", err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// kindEngine is the engine the lab's kind backend chose, from its record in the lab home.
func kindEngine(t *testing.T, home cluster.Home) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(string(home), "kind.json"))
	var rec struct{ Engine string }
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil || rec.Engine == "" {
		t.Fatalf("the kind backend's record names no engine: %v %s", err, b)
	}
	return rec.Engine
}

// stopKindLab is karplab stop: the daemon ends, and the kind cluster goes with it.
func stopKindLab(t *testing.T, l *testLab) {
	var progress strings.Builder
	if err := cluster.Stop(context.Background(), l.home, 2*time.Minute, &progress); err != nil {
		t.Errorf("karplab stop: %v\n%s", err, progress.String())
	}
	select {
	case <-l.exited:
	case <-time.After(2 * time.Minute):
		t.Errorf("the daemon did not end after stop")
	}
	out, _ := exec.Command(kindEngine(t, l.home), "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster=karplab", "--format", "{{.Names}}").CombinedOutput()
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Errorf("kind's node containers left after stop: %s", s)
	}
}
