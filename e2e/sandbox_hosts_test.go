package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/internal/scripted"
)

// sandboxPolicy confines every allowed shell command, and lets what
// warden cannot fully judge run confined instead of asking.
const sandboxPolicy = `version: 1
default: {safe: allow, confined: allow, destructive: ask}
workspace: {root: ., outside: deny}
protected: [".git/**"]
sandbox: {shell: on, network: deny}
`

// hookBody is the hook the confined command tries to overwrite.
const hookBody = "#!/bin/sh\nexit 0\n"

// TestSandboxHosts: on each real host, the scripted model runs a python
// one-liner that opens .git/hooks/pre-commit for writing through a path
// computed at run time, which warden's analysis cannot see, so the
// policy's confined default allows it; the host runs it through warden's
// input rewrite under `warden sandbox`, the hook stays as it was, and the
// model is told that the command ran confined and why the write failed.
// A second confined command writes a new file in the workspace: the
// rewrite runs commands, it does not just refuse them.
func TestSandboxHosts(t *testing.T) {
	t.Parallel()
	for _, h := range governedHosts {
		t.Run(h.name, func(t *testing.T) { testSandboxHost(t, h, "warden") })
	}
	// Through warden-hook, a resident hookd answers and rewrites.
	t.Run("claude/warden-hook", func(t *testing.T) { testSandboxHost(t, governedHosts[0], "warden-hook") })
}

// sandboxEnv is a test's sandbox in which the scripted model runs the
// shell commands first and second, one a turn, under sandboxPolicy, in
// a project that is a git repository.
func sandboxEnv(t *testing.T, h governedHost, first, second string) *env {
	t.Helper()
	e := newEnv(t,
		scripted.Turn{Name: "first", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell(first)}},
		scripted.Turn{Name: "second", Match: scripted.MinToolResults(1), ToolCalls: []scripted.ToolCall{h.shell(second)}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(2), Text: "Done."},
	)
	e.write("warden.yaml", sandboxPolicy)
	if out, err := exec.Command("git", "init", "-q", e.project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return e
}

func testSandboxHost(t *testing.T, h governedHost, client string) {
	bin := requireHost(t, h.spec)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	attack := `python3 -c "import os; open(os.path.join('.git', 'hoo' + 'ks', 'pre-commit'), 'w').write('pwned')"`
	benign := `python3 -c "open('made-confined.txt', 'w').write('ok')" && cat made-confined.txt`
	e := sandboxEnv(t, h, attack, benign)
	hook := filepath.Join(e.project, ".git", "hooks", "pre-commit")
	if err := exectest.WriteFile(hook, []byte(hookBody), 0o755); err != nil {
		t.Fatal(err)
	}
	h.setup(e)
	if client == "warden-hook" {
		e.useHookd()
		if out, err := e.warden("init", h.name, "--bin", wardenHookBin); err != nil {
			t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
		}
	} else {
		e.initHost(h.name)
	}
	r := h.run(e, bin, "Set up the project.")
	fail := e.played(h.name, r)
	if testing.Verbose() {
		e.dump(r)
	}

	if got, err := os.ReadFile(hook); err != nil || string(got) != hookBody {
		fail("the confined command changed .git/hooks/pre-commit: %q %v", got, err)
	}
	res := e.lastResults()
	if len(res) < 2 {
		fail("the model got %d tool results, want 2", len(res))
		return
	}
	if !hasAny(res[0].Text, "Read-only file system", "Permission denied") {
		fail("the model was not shown the sandbox's refusal of the write; it got:\n%s", res[0].Text)
	}
	if !e.modelSaw("runs confined by warden's sandbox") {
		fail("the model was never told that its commands run confined")
	}
	if got, _ := os.ReadFile(filepath.Join(e.project, "made-confined.txt")); string(got) != "ok" {
		fail("the benign confined command did not write made-confined.txt (%q): the rewritten command did not run; the model got:\n%s", got, res[1].Text)
	}
	var shells int
	for _, rec := range e.audit() {
		if rec.Tool != h.tool && !(h.name == "codex" && rec.Tool == "exec_command") {
			continue
		}
		shells++
		if rec.Decision != "allow" {
			fail("audit: %s %v was %s (%s), want allowed confined", rec.Tool, rec.Args, rec.Decision, rec.Reason)
		}
		if rec.Sandbox == nil || !rec.Sandbox.Ran || !rec.Sandbox.Only || rec.Sandbox.Enforced == "" {
			fail("audit: the record of %v does not say that the call ran confined: %+v", rec.Args, rec.Sandbox)
		}
		if cmd, _ := rec.Args["command"].(string); strings.Contains(cmd, " sandbox --policy ") || strings.Contains(cmd, " --spec ") {
			fail("audit: the record holds the rewritten command, not the model's: %s", cmd)
		}
	}
	if shells != 2 {
		fail("audit: %d shell calls recorded, want 2", shells)
	}
	// The rewrite ran the lean runner on a spec the hook wrote (warden-sandbox is next to warden).
	if specs, _ := filepath.Glob(filepath.Join(e.project, ".warden", "sandbox", "*.json")); len(specs) == 0 {
		fail("no sandbox spec in .warden/sandbox: the rewrite did not run warden-sandbox --spec")
	}
}
