//go:build !linux

package mcpproxy

import "os/exec"

// killWithParent: no parent-death signal on this system (and no
// confinement yet: the server's command is the plain one).
func killWithParent(cmd *exec.Cmd) {}
