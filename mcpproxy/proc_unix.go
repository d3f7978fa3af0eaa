//go:build unix

package mcpproxy

import (
	"os"
	"syscall"
)

// signalGroup sends sig to the process group the server leads (its own
// and its children's), or to the server alone when that fails.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := killGroup(p.Pid, sig); err == nil {
		return nil
	}
	return p.Signal(sig)
}

// groupAlive reports whether a process of the group the server led
// (pid) is still there.
func groupAlive(pid int) bool { return syscall.Kill(-pid, 0) == nil }

// killGroup sends sig to the process group pid.
func killGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
