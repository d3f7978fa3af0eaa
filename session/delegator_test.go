package session_test

import (
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// TestDelegator: a subagent the host reports in the main session belongs
// under the deepest active session whose delegate call is still open and
// has no running subagent yet; else under the main session.
func TestDelegator(t *testing.T) {
	e := setup(t, "version: 1\ndefault: allow\nrules:\n  - {id: no-agent, effect: deny, tool: Agent, args: {subagent_type: forbidden}, message: m, suggestion: s}\n")
	agent := func(sess, use, typ string) {
		t.Helper()
		e.decide(t, warden.ToolCall{Tool: "Agent", Session: sess, Args: map[string]any{"subagent_type": typ, "prompt": "p"}}, session.Options{ToolUse: use})
	}
	want := func(what, root, exp string) {
		t.Helper()
		got, err := e.tr.Delegator(ctx, root)
		if err != nil || got != exp {
			t.Errorf("%s: Delegator = %q, %v; want %q", what, got, err, exp)
		}
	}
	if _, _, err := e.tr.Start(ctx, session.StartOptions{ID: "S"}); err != nil {
		t.Fatal(err)
	}
	want("no subagent", "S", "S")
	agent("S", "u1", "general-purpose")
	want("the main agent delegates", "S", "S")
	if _, _, err := e.tr.Start(ctx, session.StartOptions{ID: "S/a1", Parent: "S"}); err != nil {
		t.Fatal(err)
	}
	want("a subagent that has not delegated", "S", "S")
	agent("S/a1", "u2", "forbidden")
	want("a subagent whose delegate call was denied", "S", "S")
	agent("S/a1", "u3", "reviewer")
	want("a subagent whose delegate call is open", "S", "S/a1")
	s2, _, err := e.tr.Start(ctx, session.StartOptions{ID: "S/a2", Parent: "S/a1"})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Depth != 2 {
		t.Errorf("nested depth %d", s2.Depth)
	}
	want("its subagent runs already", "S", "S")
	agent("S/a2", "u4", "reviewer")
	want("the nested subagent delegates", "S", "S/a2")
	if err := e.tr.CallOutcome(ctx, warden.Outcome{Session: "S/a2", Tool: "Agent", ToolUse: "u4", OK: true}); err != nil {
		t.Fatal(err)
	}
	want("its delegate call ended", "S", "S")
	if _, err := e.tr.End(ctx, "S/a2", session.Ended); err != nil {
		t.Fatal(err)
	}
	agent("S/a1", "u5", "reviewer")
	want("an ended subagent is no delegator; a second open call of a1 is", "S", "S/a1")
	want("another tree", "T", "T")
}
