package karpenter_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster/karpenter"
)

// supervised runs this test binary as the child in the given mode (see child in main_test.go).
func supervised(t *testing.T, mode string) (*karpenter.Supervisor, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "child.log")
	s := &karpenter.Supervisor{
		Path:        os.Args[0],
		Env:         []string{childEnv + "=" + mode},
		LogFile:     log,
		MinBackoff:  50 * time.Millisecond,
		MaxBackoff:  200 * time.Millisecond,
		StopTimeout: 500 * time.Millisecond,
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s, log
}

// gone reports whether no process has pid any more.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func waitStatus(t *testing.T, s *karpenter.Supervisor, what string, cond func(karpenter.Status) bool) karpenter.Status {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status %+v", what, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSupervisorRestartsWithBackoff(t *testing.T) {
	s, log := supervised(t, "exit")
	st := waitStatus(t, s, "three restarts", func(st karpenter.Status) bool { return st.Restarts >= 3 })
	if st.LastExit == nil || st.LastExit.Code != 3 {
		t.Errorf("last exit %+v, want code 3", st.LastExit)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.Running {
		t.Errorf("status after Stop %+v, want not running", st)
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "exiting\n"); n < 3 {
		t.Errorf("log has %d child runs, want >= 3:\n%s", n, b)
	}
	if err := s.Start(context.Background()); !errors.Is(err, karpenter.ErrSupervisorStarted) {
		t.Errorf("second Start: %v, want ErrSupervisorStarted", err)
	}
}

func TestSupervisorStop(t *testing.T) {
	tests := []struct {
		name, mode string
		wantCode   int
	}{
		{name: "SIGTERM ends a child that honours it", mode: "sleep", wantCode: 0},
		{name: "SIGKILL after StopTimeout ends one that does not", mode: "stubborn", wantCode: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, log := supervised(t, tt.mode)
			st := waitStatus(t, s, "running", func(st karpenter.Status) bool { return st.Running })
			// Let the child install its signal handling before it is signalled.
			deadline := time.Now().Add(5 * time.Second)
			for b, _ := os.ReadFile(log); !strings.Contains(string(b), tt.mode) && time.Now().Before(deadline); b, _ = os.ReadFile(log) {
				time.Sleep(10 * time.Millisecond)
			}
			begin := time.Now()
			if err := s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !gone(st.PID) {
				t.Errorf("child %d still exists after Stop", st.PID)
			}
			after := s.Status()
			if after.LastExit == nil || after.LastExit.Code != tt.wantCode || after.Restarts != 0 {
				t.Errorf("after Stop (%s): %+v (last exit %+v), want exit code %d and no restart", time.Since(begin), after, after.LastExit, tt.wantCode)
			}
		})
	}
}

func TestSupervisorRestart(t *testing.T) {
	s, _ := supervised(t, "sleep")
	first := waitStatus(t, s, "running", func(st karpenter.Status) bool { return st.Running })
	s.Restart()
	second := waitStatus(t, s, "a new child", func(st karpenter.Status) bool { return st.Running && st.PID != first.PID })
	if second.Restarts != 1 || second.LastExit == nil || second.LastExit.Code != -1 {
		t.Errorf("after Restart: %+v (last exit %+v), want one restart after a kill", second, second.LastExit)
	}
	if !gone(first.PID) {
		t.Errorf("the killed child %d still exists", first.PID)
	}
}

// TestSupervisorRestartAskedForIsNoCrashLoop: restarts asked for (each lab reset asks one)
// come after the shortest backoff, however often; only crashes back off further.
func TestSupervisorRestartAskedForIsNoCrashLoop(t *testing.T) {
	var logged safeBuffer
	s := &karpenter.Supervisor{
		Path:        os.Args[0],
		Env:         []string{childEnv + "=sleep"},
		LogFile:     filepath.Join(t.TempDir(), "child.log"),
		MinBackoff:  50 * time.Millisecond,
		MaxBackoff:  10 * time.Second,
		StopTimeout: 500 * time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(&logged, nil)),
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	for i := range 4 {
		before := waitStatus(t, s, "running", func(st karpenter.Status) bool { return st.Running && st.Restarts == i })
		s.Restart()
		waitStatus(t, s, "a new child", func(st karpenter.Status) bool { return st.Running && st.PID != before.PID })
	}
	if n, all := strings.Count(logged.String(), `msg="restarting karpenter" in=50ms`), strings.Count(logged.String(), `msg="restarting karpenter"`); n != 4 || all != 4 {
		t.Errorf("%d of %d restarts after the shortest backoff, want 4 of 4:\n%s", n, all, logged.String())
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSupervisorHold: Hold returns once no child runs, none starts while held (however long,
// with a crash loop's backoff long gone), and release starts one at once, without backoff.
func TestSupervisorHold(t *testing.T) {
	s := &karpenter.Supervisor{
		Path:        os.Args[0],
		Env:         []string{childEnv + "=sleep"},
		LogFile:     filepath.Join(t.TempDir(), "child.log"),
		MinBackoff:  5 * time.Second, // release must not wait for it
		StopTimeout: 500 * time.Millisecond,
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	before := waitStatus(t, s, "running", func(st karpenter.Status) bool { return st.Running })
	release, err := s.Hold(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.Running || !gone(before.PID) {
		t.Fatalf("after Hold: status %+v, pid %d gone %t; want no child", st, before.PID, gone(before.PID))
	}
	time.Sleep(300 * time.Millisecond)
	if st := s.Status(); st.Running {
		t.Fatalf("a child started while held: %+v", st)
	}
	again, _ := s.Hold(t.Context()) // a hold in force: holds nothing more
	again()
	if st := s.Status(); st.Running {
		t.Fatalf("a second Hold's release started a child: %+v", st)
	}
	released := time.Now()
	release()
	after := waitStatus(t, s, "a new child after release", func(st karpenter.Status) bool { return st.Running })
	if after.PID == before.PID || time.Since(released) > 3*time.Second {
		t.Errorf("after release: pid %d (before %d), %s later; want a new child at once", after.PID, before.PID, time.Since(released))
	}
}
