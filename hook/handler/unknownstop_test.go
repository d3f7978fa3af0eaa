package handler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// TestStopUnknownSession: the end of a turn of a session warden never saw
// start (no session-start event reached it) is checked all the same on
// every host: without a report it is held with the report's format, in the
// host's block shape (OpenCode: at text.complete, the turn's final text
// while OpenCode still holds the turn), and the audit trail has one record
// that says the session was never seen starting.
func TestStopUnknownSession(t *testing.T) {
	for _, h := range []struct{ name, stop, field string }{
		{"claude", "Stop", "last_assistant_message"},
		{"codex", "Stop", "last_assistant_message"},
		{"gemini", "AfterAgent", "prompt_response"},
		{"opencode", "text.complete", "message"},
	} {
		t.Run(h.name, func(t *testing.T) {
			cwd := reportProject(t)
			sid := "ghost-" + h.name
			in := map[string]any{"session_id": sid, "cwd": cwd, "hook_event_name": h.stop, h.field: "All done."}
			if h.name == "opencode" {
				in = map[string]any{"event": h.stop, "session_id": sid, "directory": cwd, h.field: "All done."}
			}
			code, m, log := runHook(t, nil, js(in), h.name)
			reason, _ := m["reason"].(string)
			if h.name == "opencode" {
				reason, _ = m["block"].(string)
			} else if m["decision"] != "block" {
				reason = ""
			}
			if code != 0 || !strings.Contains(reason, "you were not given its format before") || !reportNonce.MatchString(reason) {
				t.Fatalf("stop of an unknown session: exit %d %v, want it held with the report's format\n%s", code, m, log)
			}
			recs, err := storeOf(t, cwd).Audit(context.Background(), warden.AuditFilter{Session: sid})
			if err != nil || len(recs) != 1 || recs[0].Code != warden.CodeReportInvalid || !strings.Contains(recs[0].Reason, "warden never saw this session start") {
				t.Fatalf("audit records %+v %v, want one REPORT_INVALID that names the unknown session", recs, err)
			}
		})
	}
}

// TestOpenCodeTextComplete: OpenCode's plugin reports the turn's final
// text at text.complete, where a missing report holds the turn (the
// answer's "block", the plugin adds it as a user message); its
// session.idle for that message (checked) neither checks it again nor
// holds, and marks the session idle.
func TestOpenCodeTextComplete(t *testing.T) {
	cwd := reportProject(t)
	sid := "oc1"
	code, m, log := runHook(t, nil, js(map[string]any{"event": "chat.system.transform", "session_id": sid, "directory": cwd}), "opencode")
	if code != 0 || !reportNonce.MatchString(m["system"].(string)) {
		t.Fatalf("system transform: exit %d %v\n%s", code, m, log)
	}
	code, m, log = runHook(t, nil, js(map[string]any{"event": "text.complete", "session_id": sid, "directory": cwd, "message": "Done."}), "opencode")
	if block, _ := m["block"].(string); code != 0 || !strings.Contains(block, "Final answer not accepted yet") {
		t.Fatalf("text.complete without a report: exit %d %v, want a block with the retry text\n%s", code, m, log)
	}
	code, m, log = runHook(t, nil, js(map[string]any{"event": "session.idle", "session_id": sid, "directory": cwd, "checked": true}), "opencode")
	if code != 0 || len(m) != 0 {
		t.Fatalf("session.idle (checked): exit %d %v, want an empty answer\n%s", code, m, log)
	}
	st := storeOf(t, cwd)
	r, err := st.Report(context.Background(), sid)
	if err != nil || r.Turns != 1 || r.Retries != 1 {
		t.Fatalf("report %+v %v, want one checked turn, one retry", r, err)
	}
	s, err := st.Session(context.Background(), sid)
	if err != nil || s.Status != warden.SessionIdle {
		t.Fatalf("session %+v %v, want idle", s, err)
	}
}
