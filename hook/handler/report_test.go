package handler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

var reportNonce = regexp.MustCompile(`<warden-([0-9a-f]{8})-FINAL>`)

// TestReportGateAnswers: with a report section, each host's session start
// (OpenCode's system prompt) carries the report instructions with the
// nonce warden drew; the end of a turn without the plugin's metadata is
// held open with the retry text in the host's block shape (never on
// OpenCode, whose `opencode run` exits when idle); the complete report
// ends the turn and is stored final.
func TestReportGateAnswers(t *testing.T) {
	type host struct {
		name        string
		start, stop func(cwd, sid, msg string) string
		holds       bool
	}
	claudeLike := func(stopEvent, msgField string) (func(cwd, sid, msg string) string, func(cwd, sid, msg string) string) {
		start := func(cwd, sid, _ string) string {
			return js(map[string]any{"session_id": sid, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
		}
		stop := func(cwd, sid, msg string) string {
			return js(map[string]any{"session_id": sid, "cwd": cwd, "hook_event_name": stopEvent, msgField: msg})
		}
		return start, stop
	}
	var hosts []host
	for _, h := range []struct{ name, stop, field string }{
		{"claude", "Stop", "last_assistant_message"},
		{"codex", "Stop", "last_assistant_message"},
		{"gemini", "AfterAgent", "prompt_response"},
	} {
		start, stop := claudeLike(h.stop, h.field)
		hosts = append(hosts, host{name: h.name, start: start, stop: stop, holds: true})
	}
	hosts = append(hosts, host{name: "opencode",
		start: func(cwd, sid, _ string) string {
			return js(map[string]any{"event": "chat.system.transform", "session_id": sid, "directory": cwd})
		},
		stop: func(cwd, sid, msg string) string {
			return js(map[string]any{"event": "session.idle", "session_id": sid, "directory": cwd, "message": msg})
		}})

	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			cwd := reportProject(t)
			sid := "s-" + h.name
			code, m, log := runHook(t, nil, h.start(cwd, sid, ""), h.name)
			nonce := reportNonce.FindStringSubmatch(fmt.Sprint(m))
			if code != 0 || nonce == nil || !strings.Contains(fmt.Sprint(m), `plugin="support"`) {
				t.Fatalf("session start: exit %d, no report instructions with a nonce and the plugin: %v\n%s", code, m, log)
			}
			n := nonce[1]
			final := "Done.\n<warden-" + n + "-FINAL>\nThe printer works again.\n</warden-" + n + "-FINAL>\n"

			code, m, log = runHook(t, nil, h.stop(cwd, sid, final), h.name)
			if code != 0 {
				t.Fatalf("stop: exit %d: %v\n%s", code, m, log)
			}
			reason, _ := m["reason"].(string)
			if h.holds {
				if m["decision"] != "block" || !strings.Contains(reason, "support") {
					t.Fatalf("a final report without the metadata: %v, want a block whose retry text names the plugin\n%s", m, log)
				}
			} else if m["decision"] != nil || reason != "" {
				t.Fatalf("OpenCode cannot hold a turn open: %v", m)
			}

			st := storeOf(t, cwd)
			if h.holds {
				meta := "<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>\n"
				code, m, log = runHook(t, nil, h.stop(cwd, sid, meta), h.name)
				if code != 0 || m["decision"] != nil {
					t.Fatalf("the metadata alone after the retry: exit %d %v, want the turn to end\n%s", code, m, log)
				}
				r, err := st.Report(context.Background(), sid)
				if err != nil || r.Status != warden.ReportFinal || !strings.Contains(r.FinalReport, "printer works") || len(r.Metas["support"]) == 0 {
					t.Fatalf("stored report %+v (%v), want it final with the report and the metadata", r, err)
				}
			} else {
				r, err := st.Report(context.Background(), sid)
				if err != nil || r.Status == warden.ReportFinal || r.Turns != 1 {
					t.Fatalf("stored report %+v (%v), want one checked turn, not final", r, err)
				}
			}
		})
	}
}

// reportProject is a project whose policy holds sessions to a report
// with the plugin of ../../reportgate/testdata/report.
func reportProject(t *testing.T) string {
	t.Helper()
	cwd := project(t, hookTestPolicy+"report:\n  plugins: [report/support.yaml]\n")
	root := filepath.Dir(filepath.Dir(cwd))
	if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "reportgate", "testdata", "report"), root).CombinedOutput(); err != nil {
		t.Fatalf("copy the plugin: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "report", "support.yaml")); err != nil {
		t.Fatal(err)
	}
	return cwd
}

func js(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
