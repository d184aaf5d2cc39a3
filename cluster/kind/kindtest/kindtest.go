// Package kindtest holds what the kind backend's tests share across packages: one lock, as
// every kind test uses the one cluster name the lab owns ("karplab") on the machine's engine,
// and stand-ins for engines that are missing or refuse.
// It imports nothing of the lab's.
package kindtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Lock holds the machine's kind lock until t ends, waiting for any other test process that
// holds it (make test runs packages side by side, and two would create the same cluster).
func Lock(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "karplab-kind-tests.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("taking the kind tests' lock: %v", err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
	removeLeftovers(t)
}

// removeLeftovers removes the node containers (and volumes) of a kind cluster named karplab
// that a test which died before its stop left behind: the lab itself would refuse it.
func removeLeftovers(t testing.TB) {
	for _, engine := range []string{"podman", "docker"} {
		if _, err := exec.LookPath(engine); err != nil {
			continue
		}
		out, err := exec.Command(engine, "ps", "-aq", "--filter", "label=io.x-k8s.kind.cluster=karplab").Output()
		if ids := strings.Fields(string(out)); err == nil && len(ids) > 0 {
			t.Logf("removing %s containers %v of a kind cluster karplab an earlier test left", engine, ids)
			exec.Command(engine, append([]string{"rm", "-f", "-v"}, ids...)...).Run() //nolint:errcheck // best effort
		}
	}
}

// Engine is a stand-in for a container engine's client, for tests of what the lab says
// when an engine is missing, down or refuses.
type Engine struct {
	Version string // its `-v` line: "Docker version 28.2.2"
	Down    bool   // `info` fails as a client without an engine does
	Run     string // what `run` prints (it exits 126)
}

// FakeEngines makes PATH hold only the stand-ins, by command name, and unsets
// KIND_EXPERIMENTAL_PROVIDER, until t ends.
func FakeEngines(t testing.TB, engines map[string]Engine) {
	t.Helper()
	dir := t.TempDir()
	for name, e := range engines {
		info := "exit 0"
		if e.Down {
			info = "echo 'Cannot connect to the engine. Is the daemon running?' >&2; exit 1"
		}
		script := "#!/bin/sh\ncase \"$1\" in\n" +
			"-v) echo '" + e.Version + "';;\n" +
			"info) " + info + ";;\n" +
			"run) echo '" + e.Run + "' >&2; echo \"Run '" + name + " run --help' for more information\" >&2; exit 126;;\n" +
			"esac\nexit 0\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	t.Setenv("KIND_EXPERIMENTAL_PROVIDER", "")
}

// What engines answer a privileged run with, as measured on these machines.
const (
	// RunAllowed is runc's answer when the container starts and its command is missing.
	RunAllowed = `Error: runc: runc create failed: unable to start container process: exec: "/probe": stat /probe: no such file or directory: OCI runtime attempted to invoke a command that was not found`
	// RunCapsRefused is Docker 20.10's answer where the host lacks a capability.
	RunCapsRefused = "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: unable to apply caps: operation not permitted: unknown"
	// RunRlimitRefused is podman's answer where its default rlimits exceed the hard limits.
	RunRlimitRefused = "Error: runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 7: operation not permitted: OCI permission denied"
)
