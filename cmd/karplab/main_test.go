package main_test

import (
	"bytes"
	"context"
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

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// karplab is the binary under test, built once by TestMain.
var karplab string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "karplab-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if karplab, err = karplabtest.Binary(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// lab is one KARPLAB_HOME driven through the CLI, as a user would.
type lab struct {
	t       testing.TB
	home    string
	ec2Addr string
}

func newLab(t testing.TB) *lab {
	t.Helper()
	l := &lab{t: t, home: t.TempDir(), ec2Addr: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	t.Cleanup(func() {
		// Whatever a failed test left running must not outlive it.
		if pid := l.pid(); pid > 0 {
			l.run("stop")
		}
	})
	return l
}

type result struct {
	code           int
	stdout, stderr string
}

func (l *lab) run(args ...string) result {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, karplab, args...)
	cmd.Env = append(os.Environ(), "KARPLAB_HOME="+l.home)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		l.t.Fatalf("running karplab %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (l *lab) mustRun(args ...string) result {
	l.t.Helper()
	r := l.run(args...)
	if r.code != 0 {
		l.t.Fatalf("karplab %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func (l *lab) start() result {
	return l.mustRun("start", "--ec2-addr", l.ec2Addr)
}

func (l *lab) pid() int {
	b, err := os.ReadFile(filepath.Join(l.home, "daemon.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// state is the part of daemon.json these tests read.
type state struct {
	PID         int    `json:"pid"`
	Phase       string `json:"phase"`
	APIServer   string `json:"apiServer"`
	EC2Endpoint string `json:"ec2Endpoint"`
	ControlURL  string `json:"controlURL"`
}

func (l *lab) state() state {
	l.t.Helper()
	b, err := os.ReadFile(filepath.Join(l.home, "daemon.json"))
	if err != nil {
		l.t.Fatalf("reading daemon state: %v", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		l.t.Fatalf("decoding daemon state: %v", err)
	}
	return s
}

// processesOf lists the PIDs of live processes whose environment names this lab's home: the
// daemon and everything it started.
func (l *lab) processesOf() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte("KARPLAB_HOME="+l.home+"\x00")) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue // a zombie holds no port and runs nothing
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// listening reports whether something accepts connections at a host:port or URL.
func listening(addr string) bool {
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "https://"), "http://")
	if i := strings.IndexByte(addr, '/'); i >= 0 {
		addr = addr[:i]
	}
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func TestIntegrationStartKubectlStop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the whole lab")
	}
	l := newLab(t)
	out := l.start()
	for _, want := range []string{"Kubernetes control plane (embedded)", "EC2 API emulator", "Karpenter controllers", "karplab is ready", "eval \"$(karplab env)\""} {
		if !strings.Contains(out.stderr, want) {
			t.Errorf("start output lacks %q:\n%s", want, out.stderr)
		}
	}
	st := l.state()
	if st.Phase != "ready" {
		t.Fatalf("daemon phase %q after start, want ready", st.Phase)
	}

	ns := l.mustRun("kubectl", "get", "ns")
	for _, want := range []string{"default", "kube-system", "kube-node-lease"} {
		if !strings.Contains(ns.stdout, want) {
			t.Errorf("kubectl get ns lacks %s:\n%s", want, ns.stdout)
		}
	}

	status := l.mustRun("status")
	for _, want := range []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "ec2-emulator", "karpenter", "simulated-kubelet"} {
		if !strings.Contains(status.stdout, want) {
			t.Errorf("status lacks %s:\n%s", want, status.stdout)
		}
	}
	if strings.Contains(status.stdout, " NO ") {
		t.Errorf("status shows an unhealthy component:\n%s", status.stdout)
	}

	// A second start says so and changes nothing.
	again := l.mustRun("start", "--ec2-addr", l.ec2Addr)
	if !strings.Contains(again.stderr, "already running") {
		t.Errorf("second start output = %q, want it to say the lab is already running", again.stderr)
	}
	if got := l.state().PID; got != st.PID {
		t.Errorf("second start changed the daemon: pid %d -> %d", st.PID, got)
	}

	procs := l.processesOf()
	if len(procs) < 2 {
		t.Errorf("expected the daemon and the Karpenter child to run, found pids %v", procs)
	}
	ports := []string{st.APIServer, st.EC2Endpoint, st.ControlURL}
	for _, p := range ports {
		if !listening(p) {
			t.Errorf("%s is not listening while the lab runs", p)
		}
	}

	l.mustRun("stop")
	if left := l.processesOf(); len(left) > 0 {
		t.Errorf("processes left after stop: %v", left)
	}
	for _, p := range ports {
		if listening(p) {
			t.Errorf("%s still listening after stop", p)
		}
	}
	for _, f := range []string{"daemon.pid", "daemon.json"} {
		if _, err := os.Stat(filepath.Join(l.home, f)); !os.IsNotExist(err) {
			t.Errorf("%s left behind after stop", f)
		}
	}
	if r := l.run("status"); r.code != 2 || !strings.Contains(r.stderr, "not running") {
		t.Errorf("status after stop: exit %d, %q; want exit 2 saying not running", r.code, r.stderr)
	}
}

func TestIntegrationRestartKeepsDataAndStalePID(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the whole lab")
	}
	l := newLab(t)
	l.start()
	l.mustRun("kubectl", "create", "configmap", "kept", "--from-literal=answer=42")
	l.mustRun("stop")

	// A daemon that crashed leaves its pid file; the next start must see through it.
	if err := os.WriteFile(filepath.Join(l.home, "daemon.pid"), []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := l.run("status"); r.code != 2 || !strings.Contains(r.stderr, "not running") {
		t.Errorf("status with a stale pid file: exit %d, %q; want not running", r.code, r.stderr)
	}
	l.start()
	got := l.mustRun("kubectl", "get", "configmap", "kept", "-o", "jsonpath={.data.answer}")
	if got.stdout != "42" {
		t.Errorf("configmap after restart = %q, want 42", got.stdout)
	}
	l.mustRun("stop")
}

func TestUsageErrors(t *testing.T) {
	l := newLab(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown backend", args: []string{"start", "--backend", "minikube"}, want: `unknown backend "minikube"`},
		{name: "unknown provider", args: []string{"start", "--provider", "gcp"}, want: `unknown provider "gcp"`},
		{name: "retired provider", args: []string{"start", "--provider", "ec2"}, want: `is retired: use --provider aws`},
		{name: "unknown flag", args: []string{"start", "--nope"}, want: "flag provided but not defined"},
		{name: "capture without a directory", args: []string{"capture"}, want: "name the bundle's directory: karplab capture DIR"},
		{name: "capture from no kubeconfig", args: []string{"capture", "--kubeconfig", "/nonexistent/kubeconfig", "bundle"}, want: "reading the kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := l.run(tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("karplab %v: exit %d, stderr %q; want exit 2 containing %q", tt.args, r.code, r.stderr, tt.want)
			}
			if l.pid() != 0 {
				t.Errorf("a daemon was started by a failing command")
			}
		})
	}
}

// BenchmarkStart measures `karplab start` until ready, and the idle resident memory of the
// daemon and its Karpenter child 10 s later.
func BenchmarkStart(b *testing.B) {
	for i := 0; i < b.N; i++ {
		l := newLab(b)
		begin := time.Now()
		l.start()
		ready := time.Since(begin)
		time.Sleep(10 * time.Second)
		var rss int64
		for _, pid := range l.processesOf() {
			rss += vmRSS(pid)
		}
		l.mustRun("stop")
		b.ReportMetric(ready.Seconds(), "s/ready")
		b.ReportMetric(float64(rss)/(1<<20), "MiB-idle-RSS")
	}
}

func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
