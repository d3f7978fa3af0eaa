package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// TestSelectIntentHandshake: seed 002's handshake in the session layer. An
// allowed select_active_intent call, under each host's name for warden's
// MCP tool, makes the intent the session's, so that its next write is
// decided against the intent's owned scope; an unknown id is denied with
// the ids to select and leaves the session's intent alone.
func TestSelectIntentHandshake(t *testing.T) {
	intents := filepath.Join(t.TempDir(), "intents.yaml")
	if err := os.WriteFile(intents, []byte("active_intents:\n  - id: INT-1\n    name: docs\n    owned_scope: [\"docs/**\"]\n  - id: INT-2\n    name: nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := setup(t, "version: 1\ndefault: {safe: allow, destructive: allow}\nintents: {file: "+intents+", require: [write], out_of_scope: deny}\n")
	write := func(sess, path string) warden.Decision {
		return e.decide(t, warden.ToolCall{Tool: "Write", Session: sess, Host: "claude", Args: map[string]any{"file_path": filepath.Join(e.dir, path), "content": "x"}}, session.Options{}).Decision
	}
	for _, tool := range []string{"mcp__warden__select_active_intent", "mcp_warden_select_active_intent", "warden_select_active_intent", "select_active_intent"} {
		sess := "s-" + tool
		if d := write(sess, "docs/a.md"); d.Code != warden.CodeMissingIntent {
			t.Fatalf("%s: a write before the handshake: %s %s", tool, d.Decision, d.Code)
		}
		// A listing (no id) is allowed and selects nothing.
		if d := e.decide(t, warden.ToolCall{Tool: tool, Session: sess}, session.Options{}).Decision; d.Decision != warden.Allow {
			t.Fatalf("%s without an id: %s %s", tool, d.Decision, d.Code)
		}
		d := e.decide(t, warden.ToolCall{Tool: tool, Session: sess, Args: map[string]any{"intent_id": "INT-7"}}, session.Options{}).Decision
		if d.Decision != warden.Deny || d.Code != warden.CodeIntentNotFound || !strings.Contains(d.Suggestion, "INT-1 (docs), INT-2 (nothing)") {
			t.Fatalf("%s INT-7: %s %s %q", tool, d.Decision, d.Code, d.Suggestion)
		}
		if d := write(sess, "docs/a.md"); d.Code != warden.CodeMissingIntent {
			t.Fatalf("%s: an unknown id selected something: %s %s", tool, d.Decision, d.Code)
		}
		res := e.decide(t, warden.ToolCall{Tool: tool, Session: sess, Args: map[string]any{"intent_id": "INT-1"}}, session.Options{})
		if res.Decision.Decision != warden.Allow || res.Session.IntentID != "INT-1" {
			t.Fatalf("%s INT-1: %s %s, session intent %q", tool, res.Decision.Decision, res.Decision.Code, res.Session.IntentID)
		}
		if d := write(sess, "docs/a.md"); d.Decision != warden.Allow {
			t.Errorf("%s: write in scope: %s %s %q", tool, d.Decision, d.Code, d.Reason)
		}
		if d := write(sess, "src/a.go"); d.Decision != warden.Deny || d.Code != warden.CodeScopeViolation {
			t.Errorf("%s: write out of scope: %s %s", tool, d.Decision, d.Code)
		}
		// INT-2 owns nothing.
		e.decide(t, warden.ToolCall{Tool: tool, Session: sess, Args: map[string]any{"intent_id": "INT-2"}}, session.Options{})
		if d := write(sess, "docs/a.md"); d.Decision != warden.Deny || d.Code != warden.CodeScopeViolation {
			t.Errorf("%s: INT-2 owns nothing, yet: %s %s", tool, d.Decision, d.Code)
		}
	}
	// Another server's tool of that name is not warden's handshake.
	res := e.decide(t, warden.ToolCall{Tool: "mcp__other__select_active_intent", Session: "s-other", Args: map[string]any{"intent_id": "INT-1"}}, session.Options{})
	if res.Session.IntentID != "" {
		t.Errorf("mcp__other__select_active_intent selected %q", res.Session.IntentID)
	}
}
