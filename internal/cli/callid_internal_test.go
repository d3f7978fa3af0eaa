package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/hookd"
)

// TestHookCallIDAnswersOnlyItsCall: `warden hook` given the id of another
// call (hookd's client passes it in the environment) does not answer that
// call's allow: it denies, says the id is taken, and records the refusal.
// The call itself, retried under its id, gets its recorded answer.
func TestHookCallIDAnswersOnlyItsCall(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	st := storeOf(t, cwd)
	ctx := context.Background()
	t.Setenv(hookd.CallIDEnv, "c-taken")
	if _, m, _ := runHookCmd(t, claudePre(cwd, "ls -la"), "claude"); func() string { d, _ := permission(m); return d }() != "allow" {
		t.Fatalf("ls: %v", m)
	}
	for _, cmd := range []string{"rm -rf /", "ls -la /root"} {
		_, m, _ := runHookCmd(t, claudePre(cwd, cmd), "claude")
		if d, r := permission(m); d != "deny" || !strings.Contains(r, `call id "c-taken" was given already for another call`) {
			t.Errorf("%s under a taken call id: %s %q", cmd, d, r)
		}
	}
	if _, m, _ := runHookCmd(t, claudePre(cwd, "ls -la"), "claude"); func() string { d, _ := permission(m); return d }() != "allow" {
		t.Fatalf("ls retried: %v", m)
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{Tool: "Bash"})
	if err != nil {
		t.Fatal(err)
	}
	var refused, taken int
	for _, r := range recs {
		if r.CallID == "c-taken" {
			taken++
		}
		if r.Decision == warden.Deny && r.Code == warden.CodeBadInput && r.CallID == "" {
			refused++
		}
	}
	if taken != 1 || refused != 2 || len(recs) != 3 {
		t.Errorf("records: %d under the id, %d refusals, %d in all; want 1, 2, 3: %+v", taken, refused, len(recs), recs)
	}
}

// TestHookRefusesBentSessionID: `warden hook` refuses a session id with
// white space at an end or a control character, at a session's start and
// before a tool (BAD_INPUT, recorded outside any session), instead of
// opening a session apart from the one the host named.
func TestHookRefusesBentSessionID(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	st := storeOf(t, cwd)
	ctx := context.Background()
	for _, sid := range []string{"s1 ", "\ts1", "s1\u0000", "s1\u001b[2J"} {
		start, _ := json.Marshal(map[string]any{"session_id": sid, "hook_event_name": "SessionStart", "cwd": cwd, "source": "startup"})
		if _, m, _ := runHookCmd(t, string(start), "claude"); !strings.Contains(fmt.Sprint(m), "session id") {
			t.Errorf("session start %q: %v", sid, m)
		}
		pre, _ := json.Marshal(map[string]any{"session_id": sid, "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Bash",
			"tool_input": map[string]any{"command": "ls -la"}})
		_, m, _ := runHookCmd(t, string(pre), "claude")
		if d, r := permission(m); d != "deny" || !strings.Contains(r, "BAD_INPUT") || !strings.Contains(r, "session id") {
			t.Errorf("call in session %q: %s %q", sid, d, r)
		}
	}
	if list, err := st.Sessions(ctx, warden.SessionFilter{}); err != nil || len(list) != 0 {
		t.Errorf("sessions opened: %+v %v", list, err)
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{Tool: "Bash"})
	if err != nil || len(recs) != 4 {
		t.Fatalf("records: %+v %v", recs, err)
	}
	for _, r := range recs {
		if r.Session != "" || r.Decision != warden.Deny || r.Code != warden.CodeBadInput {
			t.Errorf("record: %+v", r)
		}
	}
}
