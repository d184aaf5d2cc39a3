//go:build !linux

package labs

import "syscall"

// endsWithParent: only Linux can tie a child's end to its parent's.
func endsWithParent() *syscall.SysProcAttr { return nil }
