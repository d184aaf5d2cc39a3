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
	rec, err := os.ReadFile(filepath.Join(l.home, "kind.json"))
	if err != nil {
		b.Fatal(err)
	}
	var r struct{ Node string }
	if err := json.Unmarshal(rec, &r); err != nil || r.Node == "" {
		b.Fatalf("kind.json names no node container: %s", rec)
	}
	entries, _ := os.ReadDir("/proc")
	var rss int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup")); err == nil && strings.Contains(string(cg), r.Node) {
			rss += vmRSS(pid)
		}
	}
	return rss
}
