package existingtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// childEnv names the directory a test binary re-executed by StartProcess serves a cluster in.
const childEnv = "KARPLAB_EXISTINGTEST_CLUSTER"

// profileEnv, when set in the parent's environment, has each child write a CPU profile of
// its cluster (the API server, etcd, the controllers) to cpu.pprof in its directory when it
// stops: where the control plane's time goes when tests share two cores.
const profileEnv = "KARPLAB_EXISTINGTEST_CPUPROFILE"

// A control plane is one per process (its components register process-global state), so a
// test that needs several clusters runs each in a child: its own test binary, re-executed,
// whose TestMain calls RunIfChild first.

// RunIfChild serves a cluster and exits when this process is a child StartProcess started:
// it starts the cluster in the directory the environment names, says "ready" on stdout and
// stops it when stdin closes (the parent stopped it, or ended). Otherwise it returns at once.
func RunIfChild() {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return
	}
	logFile, err := os.Create(filepath.Join(dir, "cluster.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c, err := Start(context.Background(), dir, slog.New(slog.NewTextHandler(logFile, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting their cluster:", err)
		os.Exit(2)
	}
	stopProfile := func() {}
	if os.Getenv(profileEnv) != "" {
		if f, err := os.Create(filepath.Join(dir, "cpu.pprof")); err == nil && pprof.StartCPUProfile(f) == nil {
			stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	stopProfile()
	err = c.Stop()
	logFile.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stopping their cluster:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Process is a cluster served by a child process.
type Process struct {
	Kubeconfig string
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	done       chan error
}

// StartProcess re-executes this test binary to serve a cluster in dir (see RunIfChild) and
// returns once it is ready.
func StartProcess(ctx context.Context, dir string) (*Process, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting their cluster's process: %w", err)
	}
	p := &Process{Kubeconfig: filepath.Join(dir, "kubeconfig"), cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case <-ready:
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("their cluster's process ended during start-up (%v): %s", err, strings.TrimSpace(stderr.String()))
	case <-time.After(3 * time.Minute):
		p.Stop()
		return nil, errors.New("their cluster was not ready after 3 minutes")
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
}

// RESTConfig reaches the cluster as its admin.
func (p *Process) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", p.Kubeconfig)
}

// Stop stops the cluster and waits for its process to end.
func (p *Process) Stop() error {
	p.stdin.Close()
	select {
	case err := <-p.done:
		return err
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		return fmt.Errorf("their cluster's process did not stop within a minute; killed: %v", <-p.done)
	}
}
