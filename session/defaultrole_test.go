package session_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// TestDefaultRole: under roles.default, a session without a role follows
// that role: its first-tool rule warns on a first call of another tool,
// its tool list denies a tool it lacks, and the audit record names it. The
// session itself keeps no role, so a role named later still becomes its
// own.
func TestDefaultRole(t *testing.T) {
	e := setup(t, strings.Replace(testPolicy, "roles:\n", "roles:\n  default: strict\n", 1))
	if e.pol.DefaultRole != "strict" {
		t.Fatalf("DefaultRole = %q", e.pol.DefaultRole)
	}
	// strict: tools [read, shell], first [read], first_enforce deny.
	r := e.decide(t, bash("d1", "", "git status"), session.Options{})
	if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeFirstTool || r.Audit.Role != "strict" {
		t.Fatalf("first call of a role-less session: %+v (audit role %q), want strict's first-tool deny", r.Decision, r.Audit.Role)
	}
	r = e.decide(t, warden.ToolCall{Tool: "Read", Session: "d1", Args: map[string]any{"file_path": "a.go"}}, session.Options{})
	if r.Decision.Decision != warden.Allow {
		t.Fatalf("read first: %+v", r.Decision)
	}
	r = e.decide(t, warden.ToolCall{Tool: "Write", Session: "d1", Args: map[string]any{"file_path": "a.go", "content": "x"}}, session.Options{})
	if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeRoleToolDenied {
		t.Errorf("write under strict: %+v, want ROLE_TOOL_DENIED", r.Decision)
	}
	if s, _ := e.store.Session(ctx, "d1"); s.Role != "" {
		t.Errorf("the session took the default role %q; it keeps none", s.Role)
	}
	// A role the call names wins.
	if r := e.decide(t, bash("d2", "builder", "git status"), session.Options{}); r.Audit.Role != "builder" {
		t.Errorf("a named role: audit role %q", r.Audit.Role)
	}
}
