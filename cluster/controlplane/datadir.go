package controlplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrDataDirInUse is returned by Start when another control plane (in this process or
// another) runs on the same DataDir.
var ErrDataDirInUse = errors.New("data directory in use by another control plane")

// lockDataDir takes an exclusive, non-blocking flock on DataDir/controlplane.lock and
// writes our pid into it. The lock dies with the process, so a crash leaves no stale lock.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "controlplane.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid := strings.TrimSpace(string(holder)); pid != "" {
				return nil, fmt.Errorf("%w: %s (pid %s)", ErrDataDirInUse, dir, pid)
			}
			return nil, fmt.Errorf("%w: %s", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// unlockDataDir releases the lock; the file stays (removing it would race a new locker).
func unlockDataDir(f *os.File) error {
	if f == nil {
		return nil
	}
	_ = f.Truncate(0)
	return f.Close() // closing the last descriptor drops the flock
}

// state is what DataDir/controlplane.json keeps between runs.
type state struct {
	APIServerPort int `json:"apiServerPort"`
}

func statePath(dir string) string { return filepath.Join(dir, "controlplane.json") }

func loadState(dir string) (state, error) {
	var s state
	data, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading control plane state: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("parsing %s: %w", statePath(dir), err)
	}
	return s, nil
}

func saveState(dir string, s state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding control plane state: %w", err)
	}
	return writeFileAtomic(statePath(dir), append(data, '\n'), 0o600)
}

// listenAPIServer opens the API server's listener: on the configured port, else on the
// port persisted by an earlier run, else on a free port, which is then persisted.
func listenAPIServer(dir string, bind net.IP, port int) (net.Listener, error) {
	s, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		port = s.APIServerPort
	}
	ln, err := net.Listen("tcp", hostPort(bind, port))
	if err != nil {
		return nil, fmt.Errorf("listening for kube-apiserver on %s: %w", hostPort(bind, port), err)
	}
	if got := ln.Addr().(*net.TCPAddr).Port; got != s.APIServerPort {
		if err := saveState(dir, state{APIServerPort: got}); err != nil {
			ln.Close()
			return nil, err
		}
	}
	return ln, nil
}

// freePort returns a loopback port that was free a moment ago (for etcd, whose embed
// package opens its own listeners).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
