package mcpproxy

import (
	"os/exec"
	"syscall"
)

// killWithParent has Linux kill the confined server when the proxy dies
// (PR_SET_PDEATHSIG), as StartServer does for a server it sets up itself.
func killWithParent(cmd *exec.Cmd) { cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL }
