package engine_test

import (
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
)

// Class 10 of issue 31, editor tools of other agent stacks: the Anthropic
// text editor tool, str_replace_editor and create_file were of kind
// other, so an edit rule did not meet them, nor a protected path as an
// edit; a tool of kind other did not need an intent where writes do.
func TestEditorToolsOfOtherStacks(t *testing.T) {
	t.Parallel()
	call := func(tool string, args map[string]any) warden.ToolCall { return warden.ToolCall{Tool: tool, Args: args} }
	checkCoding(t, []soundCase{
		{"text editor tool on a source", call("str_replace_based_edit_tool", map[string]any{"command": "str_replace", "path": "src/a.go", "old_str": "a", "new_str": "b"}), "allow"},
		{"str_replace_editor on a source", call("str_replace_editor", map[string]any{"command": "create", "path": "src/b.go", "file_text": "x"}), "allow"},
		{"create_file on a source", call("create_file", map[string]any{"path": "src/c.go", "content": "x"}), "allow"},
		{"text editor tool on the policy", call("str_replace_based_edit_tool", map[string]any{"command": "create", "path": "warden.yaml", "file_text": "x"}), "deny"},
		{"create_file outside", call("create_file", map[string]any{"path": "/etc/x", "content": "x"}), "deny"},
		// The hosts' skill loaders and MCP resource tools only read.
		{"Skill", call("Skill", map[string]any{"skill": "pdf"}), "allow"},
		{"activate_skill", call("activate_skill", map[string]any{"name": "pdf"}), "allow"},
		{"ListMcpResourcesTool", call("ListMcpResourcesTool", map[string]any{"server": "db"}), "allow"},
		{"ReadMcpResourceTool", call("ReadMcpResourceTool", map[string]any{"server": "db", "uri": "db://x"}), "allow"},
	})
	const pol = `version: 1
default: allow
intents: {file: intents.yaml, require: [write]}
`
	e, _ := newEngine(t, pol)
	if d := e.Decide(call("mcp__db__drop_table", map[string]any{"table": "users"}), nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeMissingIntent {
		t.Errorf("a tool of kind other without an intent: %s %s", d.Decision, d.Code)
	}
	if d := e.Decide(call("Read", map[string]any{"file_path": "a.go"}), nil).Decision; d.Decision != warden.Allow {
		t.Errorf("a read without an intent: %s %s", d.Decision, d.Code)
	}
	// Claude Code's Workflow runs a script: kind other, so it needs an
	// intent where writes do, and it is destructive (asked under the
	// coding example, never allowed by default: {safe: allow}).
	var p policy.Policy
	if k := p.KindOf("Workflow"); k != "other" {
		t.Errorf("Workflow is of kind %s, want other", k)
	}
	wf := call("Workflow", map[string]any{"scriptPath": "scripts/release.js"})
	if d := e.Decide(wf, nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeMissingIntent {
		t.Errorf("Workflow without an intent: %s %s, want deny %s", d.Decision, d.Code, warden.CodeMissingIntent)
	}
	checkCoding(t, []soundCase{{"Workflow under the coding example", wf, "notAllow"}})
}

// Class 11 of issue 31: a "--" in a rule's command pattern was dropped, so
// "git checkout -- *" met git checkout -b NEW, and the coding example
// asked about creating a branch. It is kept: the pattern meets commands
// written with "--" (or, for deny and ask rules, a computed word).
func TestPatternKeepsDoubleDash(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		{"git checkout -b NEW", sh("git checkout -b feature"), "allow"},
		{"git checkout -- FILE still asks", sh("git checkout -- src/a.go"), "notAllow"},
		{"a computed word may be --", sh("git checkout $X src/a.go"), "notAllow"},
	})
	e, _ := newEngine(t, codingPolicy(t))
	if d := e.Decide(sh("git checkout -- src/a.go"), nil).Decision; d.Code != warden.CodeRuleAsk {
		t.Errorf("git checkout -- src/a.go: %s %s, want the rule's ask", d.Decision, d.Code)
	}
}
