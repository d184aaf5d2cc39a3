package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster/kind/kindtest"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// `karplab start --backend kind` refuses a host that cannot run kind in one line, exit 2,
// saying what to do, and leaves nothing: no daemon, no record of a cluster.
func TestStartKindRefusals(t *testing.T) {
	tests := []struct {
		name    string
		engines map[string]kindtest.Engine
		want    []string
	}{
		{name: "no container engine", want: []string{"needs a container engine (Docker, podman or nerdctl)", "--backend embedded"}},
		{name: "no engine runs a privileged container",
			engines: map[string]kindtest.Engine{
				"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunCapsRefused},
				"podman": {Version: "podman version 4.3.1", Run: kindtest.RunRlimitRefused},
			},
			want: []string{"Docker cannot run kind's privileged node (docker: Error response from daemon", "unable to apply caps", "podman cannot run", "--backend embedded"}},
		{name: "Docker's engine is down, podman refuses",
			engines: map[string]kindtest.Engine{
				"docker": {Version: "Docker version 28.2.2", Down: true},
				"podman": {Version: "podman version 4.3.1", Run: kindtest.RunCapsRefused},
			},
			want: []string{"Docker cannot run kind's privileged node (it does not answer: Cannot connect", "podman cannot run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kindtest.FakeEngines(t, tt.engines)
			l := newLab(t)
			// The stand-ins do not write containers.conf: CONTAINERS_CONF would be the user's.
			r := l.run("start", "--backend", "kind", "--ec2-addr", l.ec2Addr)
			refusedInOneLine(t, l, r, tt.want...)
		})
	}
}

// The API port the lab's kind cluster had, taken by another process, is refused before
// anything is created (on the machine's real engine).
func TestIntegrationStartKindRefusesAPIPortInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	kindtest.Lock(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	l := newLab(t)
	if err := os.WriteFile(filepath.Join(l.home, "kind.json"), fmt.Appendf(nil, `{"engine": "podman", "apiPort": %d}`, port), 0o600); err != nil {
		t.Fatal(err)
	}
	r := l.run("start", "--backend", "kind", "--ec2-addr", l.ec2Addr)
	if strings.Contains(r.stderr, "container engine") {
		karplabtest.RequireClient(t, "a container engine for kind: "+r.stderr)
	}
	refusedInOneLine(t, l, r, fmt.Sprintf("the kind cluster's API port is in use: another process listens on 127.0.0.1:%d", port), "kind.json")
}

// refusedInOneLine checks a refused start: exit 2, one line on stderr naming each of want,
// no daemon.
func refusedInOneLine(t *testing.T, l *lab, r result, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if r.code != 2 || !strings.HasPrefix(last, "error: ") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 with an error line", r.code, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("error line %q does not say %q", last, w)
		}
	}
	if l.pid() != 0 {
		t.Errorf("a daemon was started by a refused start")
	}
	if b, err := os.ReadFile(filepath.Join(l.home, "kind.json")); err == nil && strings.Contains(string(b), `"node"`) {
		t.Errorf("a cluster was recorded by a refused start: %s", b)
	}
}

// BenchmarkStartKind compares, in one run, the kind backend with the embedded one: `karplab
// start` until ready; the idle resident memory of the lab's processes (daemon, Karpenter) 10 s
// later, and on kind of the node container's processes too; and the happy path (`karplab lab
// run happy-path --solution`: the NodePool applied, 10 pods Running, the record settled). The
// node image is built first (or found built), outside the timing.
func BenchmarkStartKind(b *testing.B) {
	kindtest.Lock(b)
	home := b.TempDir()
	image := exec.Command(karplab, "kind-image")
	image.Env = append(os.Environ(), "KARPLAB_HOME="+home)
	if out, err := image.CombinedOutput(); err != nil {
		b.Skipf("no kind node image here: %v\n%s", err, out)
	}
	for i := 0; i < b.N; i++ {
		for _, backend := range []string{"embedded", "kind"} {
			l := newLab(b)
			begin := time.Now()
			l.mustRun("start", "--backend", backend, "--ec2-addr", l.ec2Addr)
			ready := time.Since(begin)
			time.Sleep(10 * time.Second)
			var rss, node int64
			for _, pid := range l.processesOf() {
				rss += vmRSS(pid)
			}
			if backend == "kind" {
				node = nodeRSS(b, l)
			}
			begin = time.Now()
			l.mustRun("lab", "run", "happy-path", "--solution")
			happy := time.Since(begin)
			l.mustRun("stop")
			b.ReportMetric(ready.Seconds(), "s/ready-"+backend)
			b.ReportMetric(happy.Seconds(), "s/happy-path-"+backend)
			b.ReportMetric(float64(rss)/(1<<20), "MiB-idle-RSS-lab-"+backend)
			if backend == "kind" {
				b.ReportMetric(float64(node)/(1<<20), "MiB-idle-RSS-kind-node")
			}
		}
	}
}

// nodeRSS is the resident memory of every process in kind's node container (systemd,
// containerd, kubelet, the control plane's and CoreDNS's containers): those whose cgroup
// names the container's id.
func nodeRSS(b *testing.B, l *lab) int64 {
	b.Helper()
	_, node := kindRecord(b, l)
	if node == "" {
		b.Fatal("kind.json names no node container")
	}
	entries, _ := os.ReadDir("/proc")
	var rss int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup")); err == nil && strings.Contains(string(cg), node) {
			rss += vmRSS(pid)
		}
	}
	return rss
}

// TestIntegrationKindStartStopStart drives the kind backend through the CLI as a user does:
// start (the node image built first, or found built), status, reset, evidence, stop (the
// cluster is deleted, nothing of the lab runs), and start again on the same lab home (a new
// cluster, the same API port), then stop.
func TestIntegrationKindStartStopStart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	kindtest.Lock(t)
	if r := newLab(t).run("kind-image"); r.code != 0 {
		if strings.Contains(r.stderr, "container engine") {
			karplabtest.RequireClient(t, "a container engine for kind: "+r.stderr)
		}
		t.Fatalf("karplab kind-image: exit %d\n%s", r.code, r.stderr)
	}
	l := newLab(t) // its EC2 port picked just before the start
	var api string
	for round := 1; round <= 2; round++ {
		r := l.mustRun("start", "--backend", "kind", "--ec2-addr", l.ec2Addr)
		st := l.state()
		if round == 1 {
			api = st.APIServer
		} else if st.APIServer != api {
			t.Errorf("the API server moved from %s to %s between starts", api, st.APIServer)
		}
		log, _ := os.ReadFile(filepath.Join(l.home, "daemon.log")) // kind's steps are the daemon's
		if created := strings.Count(string(log), "Creating kind cluster \"karplab\""); created != round || !strings.HasPrefix(st.APIServer, "https://127.0.0.1:") {
			t.Errorf("start %d: API server %q, %d clusters created; stderr:\n%s\nwant a new kind cluster on 127.0.0.1", round, st.APIServer, created, r.stderr)
		}
		if s := l.mustRun("status"); !strings.Contains(s.stdout+s.stderr, "kind node") {
			t.Errorf("status does not show kind's node:\n%s%s", s.stdout, s.stderr)
		}
		l.mustRun("reset")
		l.mustRun("evidence", "--json")
		l.mustRun("stop")
		if pids := l.processesOf(); len(pids) > 0 {
			t.Errorf("after stop, processes of the lab still run: %v", pids)
		}
		engine, _ := kindRecord(t, l)
		if out, _ := exec.Command(engine, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster=karplab", "--format", "{{.Names}}").CombinedOutput(); strings.TrimSpace(string(out)) != "" {
			t.Errorf("after stop, kind's containers: %s", out)
		}
	}
}

// kindRecord is the lab's record of its kind cluster: the engine it used, and the node
// container's id while the cluster exists.
func kindRecord(t testing.TB, l *lab) (engine, node string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(l.home, "kind.json"))
	var r struct{ Engine, Node string }
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil || r.Engine == "" {
		t.Fatalf("kind.json names no engine: %v %s", err, b)
	}
	return r.Engine, r.Node
}
