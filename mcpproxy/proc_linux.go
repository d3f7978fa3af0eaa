package mcpproxy

import "syscall"

// procAttr puts the upstream server in a process group of its own, so
// that ending it ends the processes it started too, and has Linux kill it
// when the proxy dies without ending it (PR_SET_PDEATHSIG: a second line
// of defence, for a proxy killed with SIGKILL).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
