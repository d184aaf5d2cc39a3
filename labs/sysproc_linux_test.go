package labs

import "syscall"

// endsWithParent has a child process sent SIGTERM when this test process ends, however it
// ends, so no lab outlives a killed test run.
func endsWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
