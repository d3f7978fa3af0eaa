//go:build unix

package report

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in its own process group and makes the
// context's cancellation kill the whole group, so that a shell's children do
// not outlive the timeout.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
