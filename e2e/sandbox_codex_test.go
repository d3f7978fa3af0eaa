package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxInsideCodexSandbox: Codex with its own sandbox on
// (workspace-write, its default), which refuses user namespaces to the
// commands it runs. warden's rewrite for Codex starts the runner alone.
// Under sandbox.shell: on, a command allowed on its own merits runs with
// Landlock alone, and the model is told what the confinement lacks; a
// command allowed only because it runs confined (the policy's confined
// default) runs nothing, and the model is told why and what to do.
func TestSandboxInsideCodexSandbox(t *testing.T) {
	t.Parallel()
	h := governedHostNamed(t, "codex")
	bin := requireHost(t, h.spec)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	safe := `echo ran-in-codex`
	confinedOnly := `python3 -c "open('made-in-codex.txt', 'w').write('ok')" && cat made-in-codex.txt`
	e := sandboxEnv(t, h, safe, confinedOnly)
	h.setup(e)
	cfg := filepath.Join(e.codexHome(), "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cfg, []byte(strings.Replace(string(b), `sandbox_mode = "danger-full-access"`, `sandbox_mode = "workspace-write"`, 1)), 0o644)
	// Codex's sandbox runs its helper by the name codex-linux-sandbox
	// from PATH: the codex binary under that name (as Codex's own
	// installs place it).
	helpers := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(helpers, "codex-linux-sandbox")); err != nil {
		t.Fatal(err)
	}
	e.vars = append(e.vars, "PATH="+helpers+string(os.PathListSeparator)+os.Getenv("PATH"))
	e.initHost(h.name)
	r := h.run(e, bin, "Make the file.")
	fail := e.played(h.name, r)
	if testing.Verbose() {
		e.dump(r)
	}
	res := e.lastResults()
	if len(res) < 2 {
		fail("the model got %d tool results, want 2", len(res))
		return
	}
	if !strings.Contains(res[0].Text, "ran-in-codex") || !strings.Contains(res[0].Text, "a user namespace could not be created") {
		fail("the safe command did not run with Landlock alone inside Codex's sandbox, or the model was not told what the confinement lacks; it got:\n%s", res[0].Text)
	}
	if got, _ := os.ReadFile(filepath.Join(e.project, "made-in-codex.txt")); got != nil {
		fail("the command allowed only confined ran without the full confinement (%q)", got)
	}
	if !strings.Contains(res[1].Text, "Nothing was run") || !strings.Contains(res[1].Text, "user namespaces are allowed") {
		fail("the model was not told why the command allowed only confined did not run, and what to do; it got:\n%s", res[1].Text)
	}
}
