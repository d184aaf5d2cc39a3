package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/reexec"
)

// StartOptions are the user's choices for `karplab start`.
type StartOptions struct {
	Backend string
	// Kubeconfig and Context name the existing backend's cluster.
	Kubeconfig, Context string
	Provider            string
	// EC2Addr is where the emulator listens; "" is the default, or a free port when it is
	// taken (ChooseEC2Addr).
	EC2Addr   string
	BootDelay time.Duration
	// Region, Zones and ClusterName choose the lab's account at its first start (empty:
	// the home's, or the course's); the home keeps them.
	Region      string
	Zones       []string
	ClusterName string
	// Replay is a bundle's directory the lab starts from (karplab replay).
	Replay string
	// Settings are Karpenter's, NAME=VALUE (karpenter.Settings), for this start.
	Settings []string
	// Verbosity is passed to the daemon's -v.
	Verbosity int
	// Timeout bounds the wait for the lab to become ready.
	Timeout time.Duration
}

// DaemonArgs are the command-line arguments (after the executable) that run a daemon with o.
func (o StartOptions) DaemonArgs() []string {
	args := []string{"-v", fmt.Sprint(o.Verbosity), reexec.Daemon}
	if o.Backend != "" {
		args = append(args, "--backend", o.Backend)
	}
	if o.Provider != "" {
		args = append(args, "--provider", o.Provider)
	}
	if o.Kubeconfig != "" {
		args = append(args, "--kubeconfig", o.Kubeconfig)
	}
	if o.Context != "" {
		args = append(args, "--context", o.Context)
	}
	if o.EC2Addr != "" {
		args = append(args, "--ec2-addr", o.EC2Addr)
	}
	if o.BootDelay != 0 {
		args = append(args, "--boot-delay", o.BootDelay.String())
	}
	if o.Replay != "" {
		args = append(args, "--"+reexec.ReplayFlag, o.Replay)
	}
	for _, kv := range o.Settings {
		args = append(args, "--set", kv)
	}
	return args
}

// Start launches the lab daemon in the background (a new session, its output in the daemon
// log) and returns once it is ready, printing each finished step to status. When a daemon
// already runs it returns *AlreadyRunningError and changes nothing. When start-up fails it
// returns the daemon's error and the tail of its log.
func Start(ctx context.Context, h Home, o StartOptions, status io.Writer) (*State, error) {
	for _, kv := range o.Settings {
		if err := karpenter.CheckSetting(kv); err != nil {
			return nil, err
		}
	}
	if _, err := NewAccount(o.Region, o.Zones, o.ClusterName); err != nil { // bad input starts nothing
		return nil, err
	}
	if err := h.Ensure(); err != nil {
		return nil, err
	}
	if pid, err := h.daemonPID(); err == nil {
		return nil, &AlreadyRunningError{PID: pid}
	}
	if _, err := h.ChooseAccount(o.Region, o.Zones, o.ClusterName); err != nil {
		return nil, err
	}
	if err := Preflight(ctx, h, Target{Backend: o.Backend, Provider: o.Provider, Kubeconfig: o.Kubeconfig, Context: o.Context}, status); err != nil {
		return nil, err
	}
	addr, note, err := ChooseEC2Addr(h, o.EC2Addr)
	if err != nil {
		return nil, err
	}
	if note != "" {
		fmt.Fprintln(status, note)
	}
	o.EC2Addr = addr
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the karplab executable: %w", err)
	}
	logFile, err := os.OpenFile(h.DaemonLog(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening daemon log: %w", err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "\n=== karplab daemon starting %s ===\n", time.Now().UTC().Format(time.RFC3339))

	// The checks above are the daemon's: it does not run them again.
	cmd := exec.Command(exe, append(o.DaemonArgs(), "--"+reexec.PreflightDoneFlag)...)
	cmd.Env = append(os.Environ(), "KARPLAB_HOME="+string(h))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this shell
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the daemon: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(status, "Starting karplab (backend %s, provider %s, daemon pid %d, log %s)\n",
		orDefault(o.Backend, "embedded"), orDefault(o.Provider, karpenter.ProviderAWS), pid, h.DaemonLog())

	timeout := o.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	shown := 0
	for {
		if st, err := h.ReadState(); err == nil && st.PID == pid {
			for ; shown < len(st.Steps); shown++ {
				s := st.Steps[shown]
				fmt.Fprintf(status, " ✓ %s (%s)%s\n", s.Name, s.Took, detailSuffix(s.Detail))
			}
			switch st.Phase {
			case PhaseReady:
				return st, nil
			case PhaseFailed:
				waitExit(exited, 2*time.Minute) // it stops what it started before exiting
				h.removeRuntimeFiles()
				return nil, fmt.Errorf("%s (details in %s)", st.Error, h.DaemonLog())
			}
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the daemon exited during start-up (%v)\n%s", err, logTail(h.DaemonLog(), 20))
		case <-deadline.C:
			return nil, fmt.Errorf("the lab was not ready after %s; it is still starting (see %s, or karplab stop)", timeout, h.DaemonLog())
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

func waitExit(exited <-chan error, d time.Duration) {
	select {
	case <-exited:
	case <-time.After(d):
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// logTail returns the last n lines of the file at path, indented, for error messages.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "last lines of " + path + ":\n    " + strings.Join(lines, "\n    ")
}

// Stop ends the daemon (SIGTERM, then SIGKILL of its process group after timeout) and waits
// until it is gone. It returns ErrNotRunning when there is no daemon.
func Stop(ctx context.Context, h Home, timeout time.Duration, status io.Writer) error {
	pid, err := h.daemonPID()
	if err != nil {
		return err
	}
	fmt.Fprintf(status, "Stopping karplab (pid %d)\n", pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling daemon %d: %w", pid, err)
	}
	if waitGone(ctx, pid, timeout) {
		h.removeRuntimeFiles()
		return nil
	}
	fmt.Fprintf(status, "The daemon did not stop within %s; killing it\n", timeout)
	_ = syscall.Kill(-pid, syscall.SIGKILL) // its session: Karpenter child included
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if !waitGone(ctx, pid, 10*time.Second) {
		return fmt.Errorf("daemon %d is still alive after SIGKILL", pid)
	}
	h.removeRuntimeFiles()
	return nil
}

func waitGone(ctx context.Context, pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return !alive(pid)
}

// LiveStatus asks the running daemon for its components' health. When the daemon is still
// starting (no control endpoint yet) it returns the published state alone.
func LiveStatus(ctx context.Context, h Home) (*Status, error) {
	if _, err := h.daemonPID(); err != nil {
		return nil, err
	}
	st, err := h.ReadState()
	if err != nil {
		return nil, fmt.Errorf("reading daemon state: %w", err)
	}
	if st.ControlURL == "" {
		return &Status{State: *st}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.ControlURL+"/status", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking the daemon for status: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("asking the daemon for status: %s", resp.Status)
	}
	var out Status
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("decoding daemon status: %w", err)
	}
	return &out, nil
}

// IsNotRunning reports whether err means no daemon runs.
func IsNotRunning(err error) bool { return errors.Is(err, ErrNotRunning) }
