package karpenter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Supervisor runs a child process (normally this executable as `karplab internal karpenter`),
// restarts it with exponential backoff whenever it exits, and stops it with SIGTERM then
// SIGKILL, leaving no process behind. The child runs in its own process group, gets SIGKILL
// if the supervising process dies (Linux), and writes stdout and stderr to LogFile.
type Supervisor struct {
	// Path is the executable; empty means this process's own (os.Executable).
	Path string
	// Args are the child's arguments (without the program name), e.g.
	// reexec.KarpenterArgs(opts.Args()).
	Args []string
	// Env is added to this process's environment for the child (later entries win).
	Env []string
	// LogFile receives the child's output, appended, with a line per start and exit. Empty
	// discards it.
	LogFile string
	// MinBackoff and MaxBackoff bound the wait before a restart (defaults 1s and 30s). The
	// wait doubles on each quick exit and goes back to MinBackoff after StableAfter.
	MinBackoff, MaxBackoff time.Duration
	// StableAfter is how long a child must run for its exit to count as fresh (default 1m).
	StableAfter time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL (default 10s).
	StopTimeout time.Duration
	// Logger gets one line per start, exit and restart.
	Logger *slog.Logger

	mu        sync.Mutex
	requested atomic.Bool // Restart asked for the next restart
	hold      *hold       // set by Hold: no child runs until it is released
	status    Status
	cmd       *exec.Cmd
	cancel    context.CancelFunc
	done      chan struct{}
	stopping  bool
}

// Status is what `karplab status` shows about the supervised process.
type Status struct {
	Running   bool      `json:"running"`
	PID       int       `json:"pid,omitempty"`
	StartedAt time.Time `json:"startedAt,omitzero"`
	// Restarts counts starts after the first.
	Restarts int `json:"restarts"`
	// LastExit is the most recent exit of the child, if any.
	LastExit *Exit `json:"lastExit,omitempty"`
}

// Exit is one exit of the child.
type Exit struct {
	Time time.Time `json:"time"`
	// Code is the exit status, -1 when the child was killed by a signal.
	Code  int    `json:"code"`
	Error string `json:"error"`
}

// hold is one Hold: the loop closes parked once no child runs, then waits for release.
type hold struct{ parked, release chan struct{} }

// ErrSupervisorStarted is returned by a second Start.
var ErrSupervisorStarted = errors.New("supervisor already started")

// Start launches the child and returns once it has started (or failed to). It keeps
// restarting it until Stop is called or ctx ends.
func (s *Supervisor) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.done != nil {
		s.mu.Unlock()
		return ErrSupervisorStarted
	}
	if s.Path == "" {
		exe, err := os.Executable()
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("finding this executable: %w", err)
		}
		s.Path = exe
	}
	s.defaults()
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	s.mu.Unlock()

	started := make(chan error, 1)
	go s.loop(ctx, started)
	return <-started
}

func (s *Supervisor) defaults() {
	if s.MinBackoff == 0 {
		s.MinBackoff = time.Second
	}
	if s.MaxBackoff == 0 {
		s.MaxBackoff = 30 * time.Second
	}
	if s.StableAfter == 0 {
		s.StableAfter = time.Minute
	}
	if s.StopTimeout == 0 {
		s.StopTimeout = 10 * time.Second
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

func (s *Supervisor) loop(ctx context.Context, started chan<- error) {
	defer close(s.done)
	backoff := s.MinBackoff
	first := true
	for {
		if !s.park(ctx) {
			return
		}
		begin := time.Now()
		wait, err := s.startChild()
		if first {
			started <- err
			first = false
			if err != nil {
				return
			}
		}
		if err == nil {
			exit := s.waitChild(ctx, wait)
			s.Logger.Info("karpenter exited", "code", exit.Code, "error", exit.Error, "ran", time.Since(begin).Round(time.Millisecond))
		} else {
			s.Logger.Error("starting karpenter", "error", err)
		}
		if ctx.Err() != nil {
			return
		}
		if s.holding() { // straight to the hold, then a new child at once
			s.requested.Store(false)
			s.countRestart()
			continue
		}
		if time.Since(begin) >= s.StableAfter || s.requested.Swap(false) {
			backoff = s.MinBackoff // a restart asked for is no crash loop
		}
		s.Logger.Info("restarting karpenter", "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, s.MaxBackoff)
		s.countRestart()
	}
}

func (s *Supervisor) countRestart() {
	s.mu.Lock()
	s.status.Restarts++
	s.mu.Unlock()
}

func (s *Supervisor) holding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold != nil
}

// park waits while a Hold keeps the child stopped; false when ctx ended meanwhile.
func (s *Supervisor) park(ctx context.Context) bool {
	s.mu.Lock()
	h := s.hold
	s.mu.Unlock()
	if h == nil {
		return true
	}
	close(h.parked)
	select {
	case <-h.release:
	case <-ctx.Done():
		return false
	}
	s.mu.Lock()
	s.hold = nil
	s.mu.Unlock()
	return true
}

// startChild starts one child and returns the function that waits for it.
func (s *Supervisor) startChild() (func() error, error) {
	out := io.Discard
	var logFile *os.File
	if s.LogFile != "" {
		f, err := os.OpenFile(s.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", s.LogFile, err)
		}
		logFile, out = f, f
	}
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	fmt.Fprintf(out, "--- karplab supervisor %s: starting %s %v\n", time.Now().Format(time.RFC3339), s.Path, s.Args)
	if err := cmd.Start(); err != nil {
		if logFile != nil {
			logFile.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", s.Path, err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.status.Running = true
	s.status.PID = cmd.Process.Pid
	s.status.StartedAt = time.Now()
	s.mu.Unlock()
	s.Logger.Info("karpenter started", "pid", cmd.Process.Pid)
	return func() error {
		err := cmd.Wait()
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		fmt.Fprintf(out, "--- karplab supervisor %s: pid %d exited, code %d (%v)\n", time.Now().Format(time.RFC3339), cmd.Process.Pid, code, err)
		if logFile != nil {
			logFile.Close()
		}
		return err
	}, nil
}

// waitChild waits for the child to exit; when ctx ends first it stops the child.
func (s *Supervisor) waitChild(ctx context.Context, wait func() error) Exit {
	exited := make(chan error, 1)
	go func() { exited <- wait() }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		s.terminate()
		select {
		case err = <-exited:
		case <-time.After(s.StopTimeout):
			s.kill()
			err = <-exited
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exit := Exit{Time: time.Now(), Code: -1}
	if s.cmd.ProcessState != nil {
		exit.Code = s.cmd.ProcessState.ExitCode()
	}
	if err != nil {
		exit.Error = err.Error()
	}
	// Take down anything the child left in its process group.
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.status.Running = false
	s.status.PID = 0
	s.status.LastExit = &exit
	s.cmd = nil
	return exit
}

func (s *Supervisor) terminate() { s.signal(syscall.SIGTERM) }
func (s *Supervisor) kill()      { s.signal(syscall.SIGKILL) }

func (s *Supervisor) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, sig) // the whole process group
	}
}

// Stop stops the child (SIGTERM, then SIGKILL after StopTimeout) and the restarts, and
// returns when the child is gone. Calling it twice, or before Start, is safe.
func (s *Supervisor) Stop(ctx context.Context) error {
	s.mu.Lock()
	done, cancel := s.done, s.cancel
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.kill()
		return fmt.Errorf("stopping karpenter: %w", ctx.Err())
	}
}

// Restart kills the running child (SIGKILL, as a crash would); the supervisor starts a new
// one after the shortest backoff, since a restart asked for (a reset) is not a crash loop.
// It is how tests and `karplab` prove a restart loses nothing.
func (s *Supervisor) Restart() {
	s.requested.Store(true)
	s.kill()
}

// Hold stops the child (SIGKILL, as Restart does) and keeps any from running until release
// is called; then a new child starts at once. It returns once no child runs, so nothing the
// child does (an AWS call in flight) can land after it. A Hold while one is in force, or
// before Start, holds nothing.
func (s *Supervisor) Hold(ctx context.Context) (release func(), err error) {
	s.mu.Lock()
	if s.done == nil || s.hold != nil {
		s.mu.Unlock()
		return func() {}, nil
	}
	h := &hold{parked: make(chan struct{}), release: make(chan struct{})}
	s.hold = h
	s.mu.Unlock()
	release = sync.OnceFunc(func() { close(h.release) })
	for {
		s.kill() // again if a child was being started as the hold came
		select {
		case <-h.parked:
			return release, nil
		case <-s.done:
			return release, nil
		case <-ctx.Done():
			release()
			return nil, fmt.Errorf("holding karpenter: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Status reports the child's state.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	if st.LastExit != nil {
		e := *st.LastExit
		st.LastExit = &e
	}
	return st
}
