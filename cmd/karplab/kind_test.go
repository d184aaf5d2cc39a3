package main_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
