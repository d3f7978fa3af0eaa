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
// host's block shape (OpenCode: at turn.end, when the plugin knows the
// answer ended the turn while OpenCode still holds it), and the audit
// trail has one record
// that says the session was never seen starting.
func TestStopUnknownSession(t *testing.T) {
	for _, h := range []struct{ name, stop, field string }{
		{"claude", "Stop", "last_assistant_message"},
		{"codex", "Stop", "last_assistant_message"},
		{"gemini", "AfterAgent", "prompt_response"},
		{"opencode", "turn.end", "message"},
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

// TestOpenCodeTextComplete: OpenCode's plugin reports an answer's text at
// text.complete, where a missing report holds the turn tentatively (the
// answer's "block", which the plugin adds as a user message; the answer may
// still call a tool): nothing is counted or recorded yet. At turn.end (the
// answer called no tool) the held turn is stored: one turn, one retry, one
// audit record. Its session.idle (checked) neither checks it again nor
// holds, and marks the session idle.
func TestOpenCodeTextComplete(t *testing.T) {
	cwd := reportProject(t)
	sid := "oc1"
	code, m, log := runHook(t, nil, js(map[string]any{"event": "chat.system.transform", "session_id": sid, "directory": cwd}), "opencode")
	if code != 0 || !reportNonce.MatchString(m["system"].(string)) {
		t.Fatalf("system transform: exit %d %v\n%s", code, m, log)
	}
	st := storeOf(t, cwd)
	report := func() warden.Report {
		t.Helper()
		r, err := st.Report(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var blocks []string
	for _, ev := range []string{"text.complete", "turn.end"} {
		code, m, log = runHook(t, nil, js(map[string]any{"event": ev, "session_id": sid, "directory": cwd, "message": "Done."}), "opencode")
		block, _ := m["block"].(string)
		if code != 0 || !strings.Contains(block, "Final answer not accepted yet") {
			t.Fatalf("%s without a report: exit %d %v, want a block with the retry text\n%s", ev, code, m, log)
		}
		blocks = append(blocks, block)
		if r := report(); ev == "text.complete" && (r.Turns != 0 || r.Retries != 0) {
			t.Fatalf("after text.complete: report %+v, want nothing counted yet", r)
		}
	}
	if blocks[0] != blocks[1] {
		t.Errorf("the tentative retry text differs from the stored one:\n%s\n---\n%s", blocks[0], blocks[1])
	}
	code, m, log = runHook(t, nil, js(map[string]any{"event": "session.idle", "session_id": sid, "directory": cwd, "checked": true}), "opencode")
	if code != 0 || len(m) != 0 {
		t.Fatalf("session.idle (checked): exit %d %v, want an empty answer\n%s", code, m, log)
	}
	if r := report(); r.Turns != 1 || r.Retries != 1 {
		t.Fatalf("report %+v, want one checked turn, one retry", r)
	}
	recs, err := st.Audit(context.Background(), warden.AuditFilter{Session: sid})
	if err != nil || len(recs) != 1 || recs[0].Code != warden.CodeReportInvalid {
		t.Fatalf("audit records %+v %v, want one REPORT_INVALID", recs, err)
	}
	s, err := st.Session(context.Background(), sid)
	if err != nil || s.Status != warden.SessionIdle {
		t.Fatalf("session %+v %v, want idle", s, err)
	}
}
