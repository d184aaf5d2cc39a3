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
// crashed daemon (no such process, or a process that is not a karplab daemon) is stale: it is
// removed along with the state file, and ErrNotRunning is returned.
func (h Home) daemonPID() (int, error) {
	b, err := os.ReadFile(h.PIDFile())
	if errors.Is(err, os.ErrNotExist) {
		return 0, ErrNotRunning
	}
	if err != nil {
		return 0, fmt.Errorf("reading pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !isDaemon(pid) {
		h.removeRuntimeFiles()
		return 0, ErrNotRunning
	}
	return pid, nil
}

// isDaemon reports whether pid is alive and is a `karplab daemon` process (PIDs get reused).
func isDaemon(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	for _, a := range args[1:] {
		if string(a) == daemonCommand {
			return true
		}
	}
	return false
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
