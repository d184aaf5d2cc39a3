package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// daemonPID returns the PID of the running lab daemon of this home. A PID file left by a
// crashed daemon (no such process, or a process that is not the one that wrote it) is
// stale: it is removed along with the state file, and ErrNotRunning is returned.
func (h Home) daemonPID() (int, error) {
	b, err := os.ReadFile(h.PIDFile())
	if errors.Is(err, os.ErrNotExist) {
		return 0, ErrNotRunning
	}
	if err != nil {
		return 0, fmt.Errorf("reading pid file: %w", err)
	}
	fields := strings.Fields(string(b))
	var pid int
	if len(fields) > 0 {
		pid, _ = strconv.Atoi(fields[0])
	}
	if pid <= 0 || len(fields) < 2 || !alive(pid) || processStart(pid) != fields[1] {
		h.removeRuntimeFiles()
		return 0, ErrNotRunning
	}
	return pid, nil
}

// pidFileContent identifies this process: its PID and its start time, since PIDs get reused
// and a daemon may run as `karplab daemon`, `karplab start --foreground` or inside a test.
func pidFileContent() string {
	pid := os.Getpid()
	return fmt.Sprintf("%d %s\n", pid, processStart(pid))
}

// processStart is the process's start time in clock ticks since boot (/proc/PID/stat field
// 22), or "" when it cannot be read.
func processStart(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	// After the command name: field 3 (state) onwards; starttime is field 22.
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// alive reports whether pid still exists (and is not a zombie).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Field 3 is the state; "Z" is a zombie that only waits to be reaped.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func (h Home) removeRuntimeFiles() {
	os.Remove(h.PIDFile())
	os.Remove(h.StateFile())
}
