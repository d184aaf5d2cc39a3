package labs

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/existing/existingtest"
	"github.com/karplab/karplab/cluster/karpenter"
)

// lab is the one lab daemon this test package runs (in-process, like `karplab start
// --foreground`), shared by every TestIntegration test; each test resets it first. It runs
// with the existing backend on somebody else's cluster (existingtest), so every lab is
// proved on a cluster with a namespace, node and workload of its own; at the end `stop
// --uninstall` must leave that cluster exactly as it was.
var lab struct {
	env  *Env
	home cluster.Home
	exe  string // the karplab binary the daemon runs, for scripts that call it
	err  error  // why it is not running
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		lab.err = errors.New("-short: the lab daemon is not started")
		os.Exit(m.Run())
	}
	stop, err := startLab()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the lab:", err)
		os.Exit(2)
	}
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func startLab() (stop func() error, err error) {
	dir, err := os.MkdirTemp("", "karplab-labs-test")
	if err != nil {
		return nil, err
	}
	// The Karpenter child is the real binary, re-executed by the daemon.
	exe := filepath.Join(dir, "karplab")
	build := exec.Command("go", "build", "-o", exe, "../cmd/karplab")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building karplab: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ec2Addr := ln.Addr().String()
	ln.Close()

	home := cluster.Home(filepath.Join(dir, "home"))
	logFile, err := os.Create(filepath.Join(dir, "daemon.log"))
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))
	theirs, err := existingtest.Start(context.Background(), filepath.Join(dir, "their-cluster"), logger.With("component", "their-cluster"))
	if err != nil {
		return nil, fmt.Errorf("starting their cluster: %w", err)
	}
	before, err := theirs.Snapshot(context.Background())
	if err != nil {
		theirs.Stop()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cluster.RunDaemon(ctx, cluster.DaemonConfig{
			Home:       home,
			Backend:    "existing",
			Kubeconfig: theirs.Kubeconfig,
			EC2Addr:    ec2Addr,
			Executable: exe,
			Provider:   testProvider(),
			Logger:     logger,
		})
	}()
	stop = func() error {
		// stop --uninstall, as a user ends a lab on their cluster: reset, stop, uninstall.
		var progress strings.Builder
		err := cluster.Reset(context.Background(), home, &progress)
		cancel()
		err = errors.Join(err, <-done)
		if err == nil {
			err = cluster.Uninstall(context.Background(), home, &progress)
		}
		if err == nil {
			err = theyAreAsBefore(theirs, before)
		}
		if err != nil {
			err = fmt.Errorf("stop --uninstall on their cluster: %w\n%s", err, progress.String())
		} else {
			fmt.Fprintf(os.Stderr, "stop --uninstall left their cluster as it was:\n%s", progress.String())
		}
		err = errors.Join(err, theirs.Stop())
		logFile.Close()
		if os.Getenv("KARPLAB_KEEP_TEST_HOME") == "" {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "lab home kept at", dir)
		}
		return err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := home.ReadState()
		if err == nil && st.Phase == cluster.PhaseReady {
			break
		}
		if err == nil && st.Phase == cluster.PhaseFailed {
			stop()
			return nil, errors.New(st.Error)
		}
		select {
		case err := <-done:
			stop()
			return nil, fmt.Errorf("the daemon ended during start-up: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, errors.New("the lab was not ready after 5 minutes")
		}
	}
	env, err := NewEnv(ctx, home)
	if err != nil {
		stop()
		return nil, err
	}
	lab.env, lab.home, lab.exe = env, home, exe
	return stop, nil
}

// theyAreAsBefore compares every API object of their cluster with the snapshot taken before
// the lab started on it.
func theyAreAsBefore(theirs *existingtest.Cluster, before *existingtest.Snapshot) error {
	after, err := theirs.Snapshot(context.Background())
	if err != nil {
		return err
	}
	if diff := existingtest.Diff(before, after); len(diff) > 0 {
		return fmt.Errorf("their cluster is not as it was (%d differences):\n  %s", len(diff), strings.Join(diff, "\n  "))
	}
	return nil
}

// testProvider is the Karpenter cloud provider the labs run on: the real
// karpenter-provider-aws unless KARPLAB_TEST_PROVIDER names another.
func testProvider() string {
	if p := os.Getenv("KARPLAB_TEST_PROVIDER"); p != "" {
		return p
	}
	return karpenter.ProviderAWS
}

// freshLab resets the shared lab and returns it; it skips the test when there is no lab.
func freshLab(t *testing.T) *Env {
	t.Helper()
	if lab.env == nil {
		t.Skipf("no lab: %v", lab.err)
	}
	var progress strings.Builder
	if err := cluster.Reset(t.Context(), lab.home, &progress); err != nil {
		t.Fatalf("resetting the lab: %v\n%s", err, progress.String())
	}
	return lab.env
}

// testOut collects a test's progress output, shown only when it fails.
func testOut(t *testing.T) io.Writer {
	t.Helper()
	var b strings.Builder
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("progress:\n%s", b.String())
			t.Logf("Karpenter's last lines (debug left out):\n%s", karpenterTail(40))
		}
	})
	return &b
}

// karpenterTail is the end of the lab's Karpenter log without its debug lines: why a
// staging stalled is usually there.
func karpenterTail(n int) string {
	if lab.home == "" {
		return ""
	}
	b, err := os.ReadFile(lab.home.KarpenterLog())
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(line, `"level":"DEBUG"`) {
			if len(line) > 600 {
				line = line[:600] + "..."
			}
			keep = append(keep, line)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}

// checkUntil grades lab repeatedly until its verdict is want (or timeout), returning the last report.
// solutionPasses is each lab's first test: on a fresh lab, lab run NAME --solution (staging
// waits up to wait), then check until it passes (within grace). It keeps the snapshot
// under snapshot (KARPLAB_SNAPSHOT_DIR; "" keeps none), logs the report and returns the lab
// and the report for the lab's own assertions.
func solutionPasses(t *testing.T, name string, wait, grace time.Duration, snapshot string) (*Env, *Report) {
	t.Helper()
	e := freshLab(t)
	l, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: wait}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, grace)
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
	if snapshot != "" {
		keepSnapshot(t, e, snapshot)
	}
	t.Logf("%s staged and solved in %s:\n%s", name, time.Since(start).Round(time.Second), reportText(r))
	return e, r
}

func checkUntil(t *testing.T, e *Env, l *Lab, want bool, timeout time.Duration) *Report {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r, err := l.Check(t.Context(), e)
		if err != nil {
			t.Fatalf("check %s: %v", l.Name, err)
		}
		if r.Passed == want || time.Now().After(deadline) {
			return r
		}
		time.Sleep(2 * time.Second)
	}
}

// runScript runs a lab's shell script (solutions/NAME/commands.sh) as a learner would after
// eval "$(karplab env)", with Debian's aws CLI; it returns the script's output.
func runScript(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/aws"); err != nil {
		if os.Getenv("KARPLAB_REQUIRE_CLIENTS") != "" {
			t.Fatal("/usr/bin/aws is missing, and KARPLAB_REQUIRE_CLIENTS says CI installed it")
		}
		t.Skip("the aws CLI (apt-get install awscli) is missing; skipping")
	}
	out, err := runShell(t, "/usr/bin", `exec sh "$2"`, path)
	if err != nil {
		t.Fatalf("sh %s: %v\n%s", path, err, out)
	}
	return out
}

// runShell runs script in sh after eval of the lab's env file, as a learner's shell would:
// the aws CLI of awsDir and the karplab binary on PATH (behind the env's aws wrapper), the
// lab's kubeconfig and credentials in the environment. args are $2, ...
func runShell(t *testing.T, awsDir, script string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "sh", append([]string{"-c", `eval "$(cat "$1")"; ` + script, "sh", lab.home.EnvFile()}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(lab.exe)+":"+awsDir+":/usr/bin:/bin", "KARPLAB_HOME="+string(lab.home), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func reportText(r *Report) string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}
