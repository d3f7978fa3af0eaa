package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSandboxUnshareRefused: Claude Code runs inside a sandbox that
// refuses user namespaces (bubblewrap with --disable-userns), which the
// hook's probe cannot see: the first allowed command's line under
// unshare fails before anything runs, the model is told why and to run
// it again, and the next command's rewrite starts the runner alone,
// which runs it confined by Landlock alone (sandbox.shell: on).
func TestSandboxUnshareRefused(t *testing.T) {
	t.Parallel()
	h := governedHostNamed(t, "claude")
	bin := requireHost(t, h.spec)
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed (.ci/run installs it)")
		}
		t.Skip("bubblewrap is not installed")
	}
	if out, err := exec.Command(bwrap, "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--", "true").CombinedOutput(); err != nil {
		t.Skipf("this bubblewrap cannot refuse user namespaces: %v %s", err, out)
	}
	e := sandboxEnv(t, h, "echo first-run", "echo second-run")
	h.setup(e)
	e.initHost(h.name)
	r := e.run(hostTimeout, e.claudeVars(), bwrap, append([]string{"--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--", bin}, claudeArgs("Run the two commands.")...)...)
	fail := e.played(h.name, r)
	if testing.Verbose() {
		e.dump(r)
	}
	res := e.lastResults()
	if len(res) < 2 {
		fail("the model got %d tool results, want 2", len(res))
		return
	}
	if !hasAny(res[0].Text, "unshare") {
		fail("the first command's line did not fail at unshare; the model got:\n%s", res[0].Text)
	}
	if !e.modelSaw("could not start for this command") {
		fail("the model was never told why the first command did not run")
	}
	if _, err := os.Stat(filepath.Join(e.project, ".warden", "sandbox", "unshare-refused")); err != nil {
		fail("unshare's refusal left no mark in the workspace: %v", err)
	}
	if !hasAny(res[1].Text, "second-run") || !hasAny(res[1].Text, "a user namespace could not be created") {
		fail("the second command did not run confined by the runner alone; the model got:\n%s", res[1].Text)
	}
}
