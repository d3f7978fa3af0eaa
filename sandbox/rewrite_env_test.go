package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden/sandbox"
)

// TestRewriteDropsDisableEnv: an agent that exported the tests' variable
// (DisableEnv) in a shell that persists between calls cannot take a
// mechanism away from its later rewritten commands: the rewritten line
// runs warden sandbox with the variable unset, so under sandbox.shell: on
// a write to a git hook is still refused. The same command run through
// warden sandbox with the variable set does write it (the test is live).
func TestRewriteDropsDisableEnv(t *testing.T) {
	needKernel(t)
	ws, _ := faultWS(t, "version: 1\nsandbox: {shell: on}\n")
	hook := filepath.Join(ws, ".git", "hooks", "pre-commit")
	line := "echo evil > .git/hooks/pre-commit"
	rw, err := sandbox.Rewrite(os.Args[0], filepath.Join(ws, "warden.yaml"), "", false, line)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{sandbox.DisableEnv + "=landlock,userns"}
	cmd := exec.Command("bash", "-c", rw)
	cmd.Env = append(append(os.Environ(), cliEnv+"=1"), env...)
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	if exists(hook) {
		t.Fatalf("the rewritten line wrote the git hook with %s exported:\n%s\n%s", sandbox.DisableEnv, rw, out)
	}
	// Live: the variable given to warden sandbox itself does take the
	// mechanisms away under on (a test's own use of it).
	direct := wardenCmd(ws, env, "sandbox", "--policy", filepath.Join(ws, "warden.yaml"), "--", "bash", "-c", line)
	if out, err := direct.CombinedOutput(); err != nil || !exists(hook) {
		t.Fatalf("warden sandbox with %s set did not run unconfined: %v\n%s", sandbox.DisableEnv, err, out)
	}
}
