//go:build !unix

package spawn

import (
	"os/exec"
	"syscall"
)

func detach() *syscall.SysProcAttr { return nil }

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
