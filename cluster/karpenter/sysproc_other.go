//go:build unix && !linux

package karpenter

import "syscall"

// sysProcAttr puts the child in its own process group. Without Linux's Pdeathsig a
// crashed daemon can leave the child behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
