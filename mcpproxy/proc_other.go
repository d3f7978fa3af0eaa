//go:build !unix

package mcpproxy

import (
	"os"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

// signalGroup ends the server: without process groups, a signal other
// than a kill cannot be sent, and Kill ends the server alone.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}

func groupAlive(int) bool { return false }

func killGroup(int, syscall.Signal) error { return nil }
