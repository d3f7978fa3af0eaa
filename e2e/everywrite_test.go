package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// TestClaudeUnnamedSubagentTakesParentRole: a coordinator, which may not
// write, delegates to Claude Code's built-in general-purpose subagent, a
// type the policy does not name. The subagent takes the coordinator's role,
// so its Write is denied and the file is not written.
func TestClaudeUnnamedSubagentTakesParentRole(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	main, sub := scripted.Contains("main-marker"), scripted.Contains("sub-marker")
	e := newEnv(t)
	e.model.Add(
		scripted.Turn{Name: "delegate", Match: main, ToolCalls: []scripted.ToolCall{{Name: "Agent", Args: map[string]any{
			"description": "write the file", "prompt": "sub-marker: write the file", "subagent_type": "general-purpose"}}}},
		scripted.Turn{Name: "sub-write", Match: scripted.All(sub, scripted.Not(main)), ToolCalls: []scripted.ToolCall{{Name: "Write", Args: map[string]any{
			"file_path": filepath.Join(e.project, "x.txt"), "content": "written by the subagent\n"}}}},
		scripted.Turn{Name: "sub-done", Match: scripted.All(sub, scripted.Not(main), scripted.MinToolResults(1)), Text: "Tried."},
		scripted.Turn{Name: "final", Match: scripted.All(main, scripted.MinToolResults(1)), Text: "All done."},
	)
	e.write("warden.yaml", `version: 1
default: allow
roles:
  coordinator:
    description: plans and delegates; never writes
    tools: [read, list, delegate, todo]
`)
	e.initHost("claude")
	// The top-level agent is the coordinator.
	settings := e.project + "/.claude/settings.json"
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(settings, []byte(strings.ReplaceAll(string(data), " hook claude", " hook claude --role coordinator")), 0o644)
	r := e.runClaude(bin, "main-marker: get the file written")
	fail := e.played("claude", r)
	if e.exists("x.txt") {
		fail("x.txt exists: the general-purpose subagent of a coordinator wrote a file")
	}
	got := e.roleAudit()
	want := []string{"Agent allow DEFAULT coordinator 0", "Write deny ROLE_TOOL_DENIED coordinator 1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		fail("audit trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCodexPatchesToProtectedFiles: the real Codex applies patches through
// its shell tool, with an indented header and as a here-document, to the
// policy file and a protected file. Each is denied and neither file
// changes.
func TestCodexPatchesToProtectedFiles(t *testing.T) {
	t.Parallel()
	h := governedHosts[1]
	bin := requireHost(t, h.spec)
	policy := "version: 1\ndefault: allow\nprotected: [\"**/.env\"]\n"
	indented := "apply_patch '*** Begin Patch\n  *** Update File: warden.yaml\n@@\n-version: 1\n+version: 1\n+# rewritten by the agent\n*** End Patch'"
	heredoc := "apply_patch <<'EOF'\n*** Begin Patch\n\t*** Delete File: .env\n*** End Patch\nEOF"
	e := newEnv(t,
		scripted.Turn{Name: "indented", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell(indented)}},
		scripted.Turn{Name: "heredoc", Match: scripted.MinToolResults(1), ToolCalls: []scripted.ToolCall{h.shell(heredoc)}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(2), Text: "Done."},
	)
	e.write("warden.yaml", policy)
	e.write(".env", "SECRET=1\n")
	h.setup(e)
	e.initHost("codex")
	r := h.run(e, bin, "Update the files.")
	fail := e.played("codex", r)
	if got, _ := os.ReadFile(e.project + "/warden.yaml"); string(got) != policy {
		fail("warden.yaml changed:\n%s", got)
	}
	if !e.exists(".env") {
		fail(".env was deleted")
	}
	denied := 0
	for _, a := range e.audit() {
		if a.Decision == "deny" && a.Code == "PROTECTED_PATH" {
			denied++
		}
	}
	if denied != 2 {
		var got []string
		for _, a := range e.audit() {
			got = append(got, a.Tool+" "+string(a.Decision)+" "+string(a.Code)+" "+a.Reason)
		}
		fail("want 2 PROTECTED_PATH denies, audit:\n%s", strings.Join(got, "\n"))
	}
}
