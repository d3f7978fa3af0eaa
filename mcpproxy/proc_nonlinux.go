//go:build unix && !linux

package mcpproxy

import "syscall"

// procAttr puts the upstream server in a process group of its own, so
// that ending it ends the processes it started too.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
