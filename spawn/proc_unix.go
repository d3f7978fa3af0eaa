//go:build unix

package spawn

import (
	"os/exec"
	"syscall"
)

// detach starts the follow-up in a session of its own: it outlives the
// process that started it, and its process group can be killed whole.
func detach() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// kill ends a follow-up's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
