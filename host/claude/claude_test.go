package claude_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/claude"
)

func TestParseInputErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "empty"},
		{`[1]`, "not the expected JSON object"},
		{`{"session_id":"s"}`, `"hook_event_name" is missing`},
		{`{"hook_event_name":"PreToolUse","tool_input":{}}`, `PreToolUse without field "tool_name"`},
	} {
		_, err := claude.ParseInput([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseInput(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// TestDecideNeverAllowsWhatIsNotAllowed checks every effect, including a
// corrupted one, against the permission decision it renders.
func TestDecideNeverAllowsWhatIsNotAllowed(t *testing.T) {
	for _, tc := range []struct {
		effect warden.Effect
		opt    claude.Options
		want   string
	}{
		{warden.Allow, claude.Options{}, "allow"},
		{warden.Allow, claude.Options{NoAllow: true}, ""},
		{warden.Ask, claude.Options{}, "ask"},
		{warden.Ask, claude.Options{NoAsk: true}, "deny"},
		{warden.Deny, claude.Options{NoAllow: true}, "deny"},
		{warden.Effect("bogus"), claude.Options{}, "deny"},
	} {
		d := warden.Decision{Decision: tc.effect, Code: warden.CodeRuleDeny, Reason: "r", Suggestion: "s"}
		out := claude.Decide(d, tc.opt)
		got := ""
		if out.HookSpecificOutput != nil {
			got = out.HookSpecificOutput.PermissionDecision
		}
		if got != tc.want {
			t.Errorf("%s %+v: permissionDecision %q, want %q", tc.effect, tc.opt, got, tc.want)
		}
	}
}

func TestLongReasonIsCut(t *testing.T) {
	d := warden.Decision{Decision: warden.Deny, Code: warden.CodeRuleDeny, Reason: strings.Repeat("é", 3000), Suggestion: "s"}
	r := claude.Decide(d, claude.Options{}).HookSpecificOutput.PermissionDecisionReason
	if len(r) > 2000 || !strings.HasSuffix(r, "[truncated]") || !json.Valid(claude.Decide(d, claude.Options{}).Marshal()) {
		t.Errorf("reason of %d bytes not cut cleanly: ...%s", len(r), r[len(r)-20:])
	}
}
