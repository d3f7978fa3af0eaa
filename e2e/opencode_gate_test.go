package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"testing"

	"github.com/warden-run/warden"

	"github.com/warden-run/warden/internal/scripted"
)

// opencodeReport is OpenCode as a host of the report gate: its plugin
// reports the turn's final text as it completes (experimental.text.complete),
// while OpenCode still holds the turn, and adds warden's retry text to the
// session as a user message; OpenCode then asks the model again before the
// session goes idle, so `opencode run` waits for the retry.
var opencodeReport = reportHost{name: "opencode", spec: opencodeSpec, main: scripted.HasTools,
	setup: func(e *env, bin string) { e.setupOpenCode() },
	run:   func(e *env, bin, prompt string) result { return e.runOpenCode(bin, prompt) }}

// TestOpenCodeReportGate is TestReportGate on OpenCode: the first answer
// has the final report without the plugin's metadata; the turn is held,
// the model gets the retry text and sends the metadata; the report is
// final, on-complete ran once, and `opencode run` printed the second
// answer before it exited.
func TestOpenCodeReportGate(t *testing.T) {
	t.Parallel()
	t.Run("openai-compatible", func(t *testing.T) {
		t.Parallel()
		testReportGate(t, opencodeReport, wardenBin)
	})
	t.Run("anthropic", func(t *testing.T) {
		t.Parallel()
		h := opencodeReport
		h.setup = func(e *env, bin string) { e.setupOpenCode(); e.anthropicOpenCode() }
		testReportGate(t, h, wardenBin)
	})
}

// TestOpenCodeReportGateLimits holds OpenCode to the retry limit and to
// the end of the turn. A model that never reports gets the retry text
// twice (the policy's retries), then the turn ends and `opencode run`
// exits: the report is failed, with one audit record per held turn and
// one for the failure. An answer with text and a tool call is not the
// end of the turn: it is not checked, and the answer after the tool is.
func TestOpenCodeReportGateLimits(t *testing.T) {
	t.Parallel()
	bin := requireHost(t, opencodeSpec)
	setup := func(e *env) {
		e.write("warden.yaml", reportPolicy)
		e.reportPlugin()
		e.setupOpenCode()
		if out, err := e.warden("init", "opencode", "--bin", wardenBin); err != nil {
			e.t.Fatalf("warden init opencode: %v\n%s", err, out)
		}
	}
	mainRequests := func(e *env) int {
		n := 0
		for _, q := range e.model.Requests() {
			if q.HasTools() {
				n++
			}
		}
		return n
	}
	finalReports := func(e *env) []string {
		var got []string
		for _, a := range e.audit() {
			if a.Tool == "final_report" {
				got = append(got, string(a.Decision)+" "+string(a.Code))
			}
		}
		return got
	}
	t.Run("retry limit", func(t *testing.T) {
		var turns []scripted.Turn
		for _, name := range []string{"answer", "retry 1", "retry 2", "retry 3"} {
			turns = append(turns, scripted.Turn{Name: name, Match: scripted.HasTools, Text: "I am done, no report today."})
		}
		e := newEnv(t, turns...)
		setup(e)
		r := e.runOpenCode(bin, "Why was I charged twice?")
		if un := e.model.Unplayed(); r.err != nil || len(un) != 1 || un[0] != "retry 3" {
			e.dump(r)
			t.Fatalf("err=%v, unplayed turns %v, want [retry 3]: the turn was held more than twice, or less", r.err, un)
		}
		if n := strings.Count(r.stdout, "I am done, no report today."); n != 3 {
			e.dump(r)
			t.Errorf("opencode run printed %d answers, want 3 (it exited before a retry was answered)", n)
		}
		rs, err := e.store().Reports(context.Background(), warden.ReportFilter{})
		if err != nil || len(rs) != 1 || rs[0].Status != warden.ReportFailed || rs[0].Retries != 2 || rs[0].Turns != 3 {
			t.Fatalf("reports: %+v %v", rs, err)
		}
		if got := finalReports(e); strings.Join(got, ",") != "deny REPORT_INVALID,deny REPORT_INVALID,deny REPORT_INVALID" {
			t.Errorf("final_report audit records: %v", got)
		}
		if e.exists("completed.jsonl") {
			t.Error("on-complete ran for a failed report")
		}
	})
	for _, provider := range []string{"openai-compatible", "anthropic"} {
		t.Run("text and a tool call/"+provider, func(t *testing.T) { testTextAndTool(t, bin, provider, setup, mainRequests, finalReports) })
	}
}

// anthropicOpenCode points OpenCode at the model server through its
// Anthropic provider, whose wire closes an answer's text before it streams
// the tool call: the text is complete before OpenCode knows of the call.
func (e *env) anthropicOpenCode() {
	e.writeJSON("opencode.json", map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{
			"anthropic": map[string]any{
				"options": map[string]any{"baseURL": e.model.URL + "/v1", "apiKey": "test"},
				"models":  map[string]any{"claude-scripted": map[string]any{"name": "claude-scripted"}},
			},
		},
		"model":       "anthropic/claude-scripted",
		"small_model": "anthropic/claude-scripted",
		"autoupdate":  false,
		"share":       "disabled",
	})
}

// testTextAndTool: an answer with text and a tool call is not the end of
// the turn, whichever comes first on the wire: no retry reaches the model,
// nothing is counted, and the answer after the tool is the one checked.
func testTextAndTool(t *testing.T, bin, provider string, setup func(*env), mainRequests func(*env) int, finalReports func(*env) []string) {
	t.Parallel()
	{
		e := newEnv(t,
			scripted.Turn{Name: "look", Match: scripted.All(scripted.HasTools, scripted.Not(scripted.HasToolResult)),
				Text:      "Let me look at the invoice first.",
				ToolCalls: []scripted.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo invoice 42", "description": "Show the invoice"}}}},
			scripted.Turn{Name: "report", Match: scripted.All(scripted.HasTools, scripted.HasToolResult),
				Reply: func(q *scripted.Request) string {
					n := nonceOf(q)
					return "<warden-" + n + "-FINAL>\nRefunded.\n</warden-" + n + "-FINAL>\n" +
						"<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>"
				}},
		)
		setup(e)
		if provider == "anthropic" {
			e.anthropicOpenCode()
		}
		r := e.runOpenCode(bin, "Why was I charged twice?")
		if r.err != nil || len(e.model.Unplayed()) != 0 || mainRequests(e) != 2 || e.modelSaw(retryMarker) {
			e.dump(r)
			t.Fatalf("err=%v, unplayed %v, %d main requests (want 2), retry text sent: %v", r.err, e.model.Unplayed(), mainRequests(e), e.modelSaw(retryMarker))
		}
		rs, err := e.store().Reports(context.Background(), warden.ReportFilter{})
		if err != nil || len(rs) != 1 || rs[0].Status != warden.ReportFinal || rs[0].Retries != 0 || rs[0].Turns != 1 {
			t.Fatalf("reports: %+v %v", rs, err)
		}
		if got := finalReports(e); strings.Join(got, ",") != "allow ALLOWED" {
			t.Errorf("final_report audit records: %v", got)
		}
		if provider == "anthropic" && e.model.Requests()[1].Protocol != scripted.Anthropic {
			t.Errorf("the model was asked over %s, want anthropic", e.model.Requests()[1].Protocol)
		}
	}
}

// TestReportGateUnknownSession runs Claude Code with warden's Stop hook
// alone (its SessionStart hook removed, as in a project wired by hand or
// before warden's start hook was added): warden never sees the session
// start, and the model is never told of the report. The end of its turn is
// checked all the same: held with the report's format, then the model's
// report is stored final; the audit trail says the session was never seen
// starting.
func TestReportGateUnknownSession(t *testing.T) {
	t.Parallel()
	h := reportHosts[0]
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "answer", Match: scripted.All(h.main, scripted.Not(scripted.Contains("-FINAL>"))), Text: "The duplicate is refunded."},
		scripted.Turn{Name: "report", Match: scripted.All(h.main, scripted.Contains("you were not given its format before")),
			Reply: func(q *scripted.Request) string {
				n := nonceOf(q)
				return "<warden-" + n + "-FINAL>\nRefunded.\n</warden-" + n + "-FINAL>\n" +
					"<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>"
			}},
	)
	e.write("warden.yaml", reportPolicy)
	e.reportPlugin()
	if out, err := e.warden("init", "claude", "--bin", wardenBin); err != nil {
		t.Fatalf("warden init claude: %v\n%s", err, out)
	}
	file := filepath.Join(e.project, ".claude", "settings.json")
	var settings map[string]any
	data, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(data, &settings) != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks["Stop"] == nil {
		t.Fatalf("warden init claude wired no Stop hook: %s", data)
	}
	settings["hooks"] = map[string]any{"Stop": hooks["Stop"]}
	e.writeJSON(file, settings)

	r := h.run(e, bin, "Why was I charged twice?")
	if r.err != nil || len(e.model.Unplayed()) != 0 {
		e.dump(r)
		t.Fatalf("claude: %v, unplayed %v", r.err, e.model.Unplayed())
	}
	if e.model.Requests()[0].Contains("-FINAL>") {
		t.Fatal("the model got the report instructions at the start: the session was seen starting")
	}
	rs, err := e.store().Reports(context.Background(), warden.ReportFilter{})
	if err != nil || len(rs) != 1 || rs[0].Status != warden.ReportFinal || rs[0].Retries != 1 || strings.TrimSpace(rs[0].FinalReport) != "Refunded." {
		t.Fatalf("reports: %+v %v", rs, err)
	}
	var got []string
	for _, a := range e.audit() {
		if a.Tool == "final_report" && strings.HasPrefix(a.Reason, "warden never saw this session start") {
			got = append(got, string(a.Decision)+" "+string(a.Code))
		}
	}
	if strings.Join(got, ",") != "deny REPORT_INVALID,allow ALLOWED" {
		t.Errorf("final_report audit records of the unknown session: %v", got)
	}
}

// TestOpenCodeReportGateCompaction: OpenCode compacts in the middle of a
// turn (a small context, as TestOpenCodeCompactReminder sets it); the
// compaction's summary is an answer of OpenCode's compaction agent, not
// the end of the turn: the gate does not check it and no retry reaches the
// model. The turn's real last answer carries the report, which is final.
func TestOpenCodeReportGateCompaction(t *testing.T) {
	t.Parallel()
	h := governedHosts[3]
	bin := requireHost(t, h.spec)
	compaction := scripted.Contains("You are a context summarization agent")
	after := scripted.All(scripted.HasTools, scripted.Not(compaction), scripted.Contains("OPENCODE-SUMMARY-9d2f"))
	big := scripted.ToolCall{Name: "bash", Args: map[string]any{"command": "touch work.txt",
		"description": strings.Repeat("Create the work file for the task. ", 20)}}
	e := newEnv(t,
		scripted.Turn{Name: "summary", Match: compaction, Text: "OPENCODE-SUMMARY-9d2f: work.txt was created; report next."},
		scripted.Turn{Name: "work", Match: scripted.All(scripted.HasTools, scripted.Not(compaction), scripted.Contains("marker-one")),
			ToolCalls: []scripted.ToolCall{big}},
		scripted.Turn{Name: "report", Match: after, Reply: func(q *scripted.Request) string {
			n := nonceOf(q)
			return "<warden-" + n + "-FINAL>\nwork.txt is there.\n</warden-" + n + "-FINAL>\n" +
				"<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>"
		}},
	)
	e.write("warden.yaml", governedPolicy+"report:\n  plugins: [report/support.yaml]\n  retries: 2\n")
	e.reportPlugin()
	e.setupOpenCode()
	var cfg map[string]any
	data, err := os.ReadFile(filepath.Join(e.project, "opencode.json"))
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	model := jsonObject(cfg, "provider", "scripted", "models", "model")
	if err != nil || model == nil {
		t.Fatalf("opencode.json: %v\n%s", err, data)
	}
	model["limit"] = map[string]any{"context": 150, "output": 50}
	e.writeJSON("opencode.json", cfg)
	if out, err := e.warden("init", "opencode", "--bin", wardenBin); err != nil {
		t.Fatalf("warden init opencode: %v\n%s", err, out)
	}
	r := e.runOpenCode(bin, "marker-one: create work.txt, then report")
	if r.err != nil || len(e.model.Unplayed()) != 0 || e.modelSaw(retryMarker) {
		e.dump(r)
		t.Fatalf("err=%v, unplayed %v, retry text sent: %v", r.err, e.model.Unplayed(), e.modelSaw(retryMarker))
	}
	rs, err := e.store().Reports(context.Background(), warden.ReportFilter{})
	if err != nil || len(rs) != 1 || rs[0].Status != warden.ReportFinal || rs[0].Retries != 0 || rs[0].Turns != 1 {
		e.dump(r)
		t.Fatalf("reports: %+v %v", rs, err)
	}
}
