package handler_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// TestReportCacheServesPrompt: with report.cache enabled, a session whose
// report became final in answer to its one request leaves it in the
// cache, and a later session's identical first request is answered at the
// prompt hook in the host's block shape (Claude Code's and Codex's
// UserPromptSubmit, Gemini CLI's BeforeAgent refuse the prompt with the
// reason, which the user reads): the cached final report, and the
// session's report is final. OpenCode's prompt is never refused.
func TestReportCacheServesPrompt(t *testing.T) {
	type host struct{ name, startEv, promptEv, stopEv, msgField string }
	for _, h := range []host{
		{"claude", "SessionStart", "UserPromptSubmit", "Stop", "last_assistant_message"},
		{"codex", "SessionStart", "UserPromptSubmit", "Stop", "last_assistant_message"},
		{"gemini", "SessionStart", "BeforeAgent", "AfterAgent", "prompt_response"},
	} {
		t.Run(h.name, func(t *testing.T) {
			cwd := project(t, hookTestPolicy+"report:\n  plugins: [report/support.yaml]\n  cache: {enabled: true, ttl: 2h}\n")
			root := filepath.Dir(filepath.Dir(cwd))
			if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "reportgate", "testdata", "report"), root).CombinedOutput(); err != nil {
				t.Fatalf("copy the plugin: %v %s", err, out)
			}
			ev := func(sid, name string, extra map[string]any) string {
				m := map[string]any{"session_id": sid, "cwd": cwd, "hook_event_name": name}
				for k, v := range extra {
					m[k] = v
				}
				return js(m)
			}
			const ask = "Why does the printer jam?"
			_, m, log := runHook(t, nil, ev("s1", h.startEv, map[string]any{"source": "startup"}), h.name)
			nonce := reportNonce.FindStringSubmatch(fmt.Sprint(m))
			if nonce == nil {
				t.Fatalf("no report instructions at session start: %v\n%s", m, log)
			}
			_, m, log = runHook(t, nil, ev("s1", h.promptEv, map[string]any{"prompt": ask}), h.name)
			if m["decision"] != nil {
				t.Fatalf("first request refused from an empty cache: %v\n%s", m, log)
			}
			n := nonce[1]
			answer := "<warden-" + n + "-FINAL>\nThe paper tray is bent.\n</warden-" + n + "-FINAL>\n<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>\n"
			_, m, log = runHook(t, nil, ev("s1", h.stopEv, map[string]any{h.msgField: answer}), h.name)
			if m["decision"] != nil {
				t.Fatalf("a valid report held the turn: %v\n%s", m, log)
			}

			runHook(t, nil, ev("s2", h.startEv, map[string]any{"source": "startup"}), h.name)
			_, m, log = runHook(t, nil, ev("s2", h.promptEv, map[string]any{"prompt": "why does the printer jam?"}), h.name)
			if m["decision"] != nil {
				t.Fatalf("another request (letter case) refused: %v\n%s", m, log)
			}
			runHook(t, nil, ev("s3", h.startEv, map[string]any{"source": "startup"}), h.name)
			_, m, log = runHook(t, nil, ev("s3", h.promptEv, map[string]any{"prompt": ask + "\n"}), h.name)
			reason, _ := m["reason"].(string)
			if m["decision"] != "block" || !strings.Contains(reason, "The paper tray is bent.") || !strings.Contains(reason, "response cache") {
				t.Fatalf("identical request: %v, want the prompt refused with the cached report\n%s", m, log)
			}
			st := storeOf(t, cwd)
			r, err := st.Report(context.Background(), "s3")
			if err != nil || r.Status != warden.ReportFinal || !strings.Contains(r.FinalReport, "paper tray") {
				t.Fatalf("s3's report %+v (%v), want it final from the cache", r, err)
			}
			rr, err := st.ReportRequest(context.Background(), "s3")
			if err != nil || rr.Served == "" {
				t.Errorf("s3's request %+v (%v), want it marked served", rr, err)
			}
		})
	}
}

// TestReportCacheOpenCodeRecordsOnly: OpenCode cannot answer a prompt in
// the model's place: an identical request is recorded, not refused.
func TestReportCacheOpenCodeRecordsOnly(t *testing.T) {
	cwd := project(t, hookTestPolicy+"report:\n  cache: {enabled: true}\n")
	st := storeOf(t, cwd)
	ctx := context.Background()
	_, err := st.PutCachedReport(ctx, warden.CachedReport{Key: "sha256:x", FinalReport: "cached"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	msg := js(map[string]any{"event": "chat.message", "session_id": "o1", "directory": cwd, "prompt": "anything"})
	code, m, log := runHook(t, nil, msg, "opencode")
	if code != 0 || m["decision"] != nil {
		t.Fatalf("opencode prompt: exit %d %v\n%s", code, m, log)
	}
	st = storeOf(t, cwd)
	if rr, err := st.ReportRequest(ctx, "o1"); err != nil || rr.Prompts != 1 {
		t.Errorf("opencode request not recorded: %+v %v", rr, err)
	}
}
