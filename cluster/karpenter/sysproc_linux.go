package karpenter

import "syscall"

// sysProcAttr puts the child in its own process group (so Stop can signal everything it
// started) and has the kernel SIGKILL it if the supervising process dies first, so a
// crashed daemon leaves no Karpenter behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
