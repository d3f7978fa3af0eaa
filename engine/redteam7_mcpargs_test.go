package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// An MCP server's tool names its arguments as its author likes, and nests
// them: under an open allow for the server's tools, mcp__fs__write {name:
// .git/hooks/pre-commit}, mcp__fs__edit {edits: [{path: .git/config}]} and
// mcp__fs__read {q: ../WS/.env} were allowed (only top-level arguments whose
// names say "path" or "file" were checked). Every one-word string of a tool
// warden knows nothing of is now checked against the protected and private
// paths, at any depth, unless its name says it holds something else.
func TestRedteam7MCPArguments(t *testing.T) {
	t.Parallel()
	mcp := func(tool string, args map[string]any) warden.ToolCall { return warden.ToolCall{Tool: tool, Args: args} }
	deep := map[string]any{"v": ".env"}
	for range 10 {
		deep = map[string]any{"next": deep}
	}
	home, _ := os.UserHomeDir()
	many := make([]any, 2100)
	for i := range many {
		many[i] = "x"
	}
	checkSoundPolicy(t, `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
protected: [".git/**"]
private: ["**/.env", "~/.ssh/**"]
rules:
  - id: fs
    effect: allow
    tool: ["mcp__fs__*"]
`, []soundCase{
		// Findings.
		{"a write named by name", mcp("mcp__fs__write", map[string]any{"name": ".git/hooks/pre-commit", "data": "x"}), "deny"},
		{"the policy file named by name", mcp("mcp__fs__write", map[string]any{"name": "warden.yaml", "data": "x"}), "deny"},
		{"a nested edit's path", mcp("mcp__fs__edit", map[string]any{"edits": []any{map[string]any{"path": ".git/config", "text": "x"}}}), "deny"},
		{"a private path named by q", mcp("mcp__fs__read", map[string]any{"q": "src/../.env"}), "deny"},
		{"a file URI deep inside", mcp("mcp__fs__read", map[string]any{"x": map[string]any{"y": []any{"file://" + home + "/.ssh/id_rsa"}}}), "notAllow"},
		{"deeper than warden looks", mcp("mcp__fs__read", map[string]any{"a": deep}), "notAllow"},
		{"more strings than warden looks through", mcp("mcp__fs__read", map[string]any{"list": many, "target": "x"}), "notAllow"},
		// Allowed: words that are no protected path, text, patterns.
		{"a plain read", mcp("mcp__fs__read", map[string]any{"path": "src/a.go"}), "allow"},
		{"names and text", mcp("mcp__fs__note", map[string]any{"title": "fix .env handling", "body": "see the .env file", "channel": "general"}), "allow"},
		{"an exclusion pattern", mcp("mcp__fs__search_files", map[string]any{"path": ".", "pattern": "x", "excludePatterns": []any{".git", ".env"}}), "allow"},
	})
}

// The check is for tools warden knows nothing of: a host's own tools keep
// their schemas (Edit's new_string is content, whatever it says).
func TestRedteam7HostToolContent(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
protected: [".git/**"]
rules:
  - id: edit
    effect: allow
    tool: [edit]
    path: ["src/**"]
`)
	d := e.Decide(warden.ToolCall{Tool: "Edit", Args: map[string]any{"file_path": "src/a.go", "old_string": "x", "new_string": ".git/config"}}, nil).Decision
	if d.Decision != warden.Allow {
		t.Fatalf("Edit with .git/config as its new text: %s %s (%s); want allow", d.Decision, d.Code, d.Reason)
	}
	if !strings.Contains(explain(e, warden.ToolCall{Tool: "mcp__fs__w", Args: map[string]any{"name": ".git/x"}}), ".git/x") {
		t.Fatal("explain does not name the argument checked")
	}
}
