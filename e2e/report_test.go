package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
)

// reportPolicy holds every session to a final report with one plugin,
// reportgate/testdata/report/support.yaml, whose on-complete command
// appends what it gets to completed.jsonl.
const reportPolicy = `version: 1
report:
  plugins: [report/support.yaml]
  retries: 2
`

// reportPlugin copies the report gate's test plugin into the project.
func (e *env) reportPlugin() {
	e.t.Helper()
	src := filepath.Join(repoRoot, "reportgate", "testdata", "report")
	if out, err := exec.Command("cp", "-r", src, e.project).CombinedOutput(); err != nil {
		e.t.Fatalf("copy the plugin: %v %s", err, out)
	}
}

// retryMarker heads the retry text (report.Session.feedback).
const retryMarker = "Final answer not accepted yet"

// nonceIn finds the nonce of the instructions in a request, as the host
// shows them to the model (Gemini CLI escapes < and >).
var nonceIn = regexp.MustCompile(`(?:<|&lt;)warden-([0-9a-f]{8})-FINAL(?:>|&gt;)`)

func nonceOf(q *scripted.Request) string {
	if m := nonceIn.FindStringSubmatch(q.Text()); m != nil {
		return m[1]
	}
	return "none"
}

// reportHost is one host the report gate is tested on.
type reportHost struct {
	name string
	spec hostSpec
	// main selects the requests of the main conversation (not a title or
	// a quota probe).
	main  func(*scripted.Request) bool
	setup func(e *env, bin string)
	run   func(e *env, bin, prompt string) result
}

var reportHosts = []reportHost{
	{name: "claude", spec: claudeSpec, main: scripted.HasTools,
		setup: func(e *env, bin string) {},
		run:   func(e *env, bin, prompt string) result { return e.runClaude(bin, prompt) }},
	{name: "codex", spec: codexSpec, main: scripted.HasTools,
		setup: func(e *env, bin string) { e.setupCodexAsUser(); e.pathWith("codex", bin) },
		run:   func(e *env, bin, prompt string) result { return e.runCodexAsUser(bin, prompt) }},
	{name: "gemini", spec: geminiSpec, main: scripted.HasTools,
		setup: func(e *env, bin string) { e.setupGemini() },
		run:   func(e *env, bin, prompt string) result { return e.runGemini(bin, prompt) }},
}

// TestReportGate runs each host, wired by `warden init HOST`, with a policy
// that asks for a final report with the "support" plugin's metadata. The
// model ends its first turn with the final report and no metadata; the
// end-of-turn hook holds the turn open with the retry text, which names
// the plugin and keeps the final report; the model then sends the
// metadata alone. The stored report has the first final report and the
// metadata, the on-complete command ran once, and the model was asked a
// bounded number of times.
func TestReportGate(t *testing.T) {
	t.Parallel()
	for _, h := range reportHosts {
		t.Run(h.name, func(t *testing.T) { testReportGate(t, h, wardenBin) })
	}
	// Through warden-hook: hookd answers, and starts the on-complete.
	t.Run("claude/warden-hook", func(t *testing.T) { testReportGate(t, reportHosts[0], wardenHookBin) })
}

func testReportGate(t *testing.T, h reportHost, hookBin string) {
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "final without metadata", Match: scripted.All(h.main, scripted.Not(scripted.Contains(retryMarker))),
			Reply: func(q *scripted.Request) string {
				n := nonceOf(q)
				return "I checked the invoice.\n<warden-" + n + "-FINAL>\nYou were charged twice; the duplicate is refunded.\n</warden-" + n + "-FINAL>"
			}},
		scripted.Turn{Name: "metadata", Match: scripted.All(h.main, scripted.Contains(retryMarker)),
			Reply: func(q *scripted.Request) string {
				n := nonceOf(q)
				return "<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>"
			}},
	)
	e.write("warden.yaml", reportPolicy)
	e.reportPlugin()
	h.setup(e, bin)
	if hookBin == wardenHookBin {
		e.useHookd()
	}
	if out, err := e.warden("init", h.name, "--bin", hookBin); err != nil {
		t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
	}
	r := h.run(e, bin, "Why was I charged twice?")
	failed := false
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			failed = true
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if failed || testing.Verbose() {
			e.dump(r)
			log, _ := os.ReadFile(filepath.Join(e.project, ".warden", "report.log"))
			t.Logf("report.log:\n%s", log)
		}
	}()
	check(r.err == nil, "%s did not finish: %v", h.name, r.err)
	check(len(e.model.Unplayed()) == 0, "turns never played: %v", e.model.Unplayed())

	// The retry text named the plugin and kept the final report.
	var retry *scripted.Request
	for _, q := range e.model.Requests() {
		if q.Turn == "metadata" {
			retry = q
		}
	}
	check(retry != nil, "the model never got the retry text")
	if retry != nil {
		text := retry.Text()
		check(strings.Contains(text, `Metadata for plugin "support" is missing`) && strings.Contains(text, "Do not send it again"),
			"the retry text does not name the missing plugin or keep the final report:\n%s", tail(text, 3000))
	}
	// Bounded: the two answers, and no more requests of the main
	// conversation.
	main := 0
	for _, q := range e.model.Requests() {
		if h.main(q) {
			main++
		}
	}
	check(main == 2, "%d model requests in the main conversation, want 2 (the answer and the retry)", main)

	// The stored report.
	st := e.store()
	ctx := context.Background()
	rs, err := st.Reports(ctx, warden.ReportFilter{})
	if err != nil || len(rs) != 1 {
		t.Fatalf("reports: %+v %v", rs, err)
	}
	rep := rs[0]
	check(rep.Status == warden.ReportFinal && rep.Retries == 1 && rep.Turns == 2, "report: %+v", rep)
	check(strings.TrimSpace(rep.FinalReport) == "You were charged twice; the duplicate is refunded.", "final report: %q", rep.FinalReport)
	check(string(rep.Metas["support"]) == `{"language":"en","solved":true}`, "metadata: %s", rep.Metas["support"])
	check(nonceOf(e.model.Requests()[len(e.model.Requests())-1]) == rep.Nonce || e.modelSaw(rep.Nonce), "the stored nonce %s never reached the model", rep.Nonce)

	// warden report show --json prints the same.
	out, err := e.warden("report", "show", rep.Session, "--json")
	var shown warden.Report
	var meta bytes.Buffer
	check(err == nil && json.Unmarshal([]byte(out), &shown) == nil && shown.Status == warden.ReportFinal &&
		json.Compact(&meta, shown.Metas["support"]) == nil && meta.String() == string(rep.Metas["support"]),
		"warden report show --json: %v\n%s", err, out)

	// The audit trail: the retry, then the accepted report.
	var got []string
	for _, a := range e.audit() {
		if a.Tool == "final_report" {
			got = append(got, string(a.Decision)+" "+string(a.Code))
		}
	}
	check(strings.Join(got, ",") == "deny REPORT_INVALID,allow ALLOWED", "final_report audit records: %v", got)

	// The on-complete command ran once (it runs in a process of its own,
	// which may still be starting when the host has exited).
	var runs []string
	var data []byte
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		data, _ = os.ReadFile(filepath.Join(e.project, "completed.jsonl"))
		if strings.TrimSpace(string(data)) != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if text := strings.TrimSpace(string(data)); text != "" {
		runs = strings.Split(text, "\n")
	}
	check(len(runs) == 1, "on-complete ran %d times, want once:\n%s", len(runs), data)
	if len(runs) == 1 {
		var m map[string]any
		json.Unmarshal([]byte(runs[0]), &m)
		fr, _ := m["final_report"].(string)
		check(m["plugin"] == "support" && m["session_id"] == rep.Session && strings.Contains(fr, "charged twice"),
			"on-complete input: %s", data)
	}
}

// TestReportGateLimits runs Claude Code twice more. A model that never
// sends a report gets the retry text twice (the policy's retries), then
// the turn ends: the report is stored as failed, with one audit record per
// held turn and one for the failure, and nothing ran on-complete. Without
// a report section nothing changes: no instructions, no retry, no report.
func TestReportGateLimits(t *testing.T) {
	t.Parallel()
	h := reportHosts[0]
	bin := requireHost(t, h.spec)
	t.Run("retry limit", func(t *testing.T) {
		var turns []scripted.Turn
		for _, name := range []string{"answer", "retry 1", "retry 2", "retry 3"} {
			turns = append(turns, scripted.Turn{Name: name, Match: h.main, Text: "I am done, no report today."})
		}
		e := newEnv(t, turns...)
		e.write("warden.yaml", reportPolicy)
		e.reportPlugin()
		if out, err := e.warden("init", h.name, "--bin", wardenBin); err != nil {
			t.Fatalf("warden init: %v\n%s", err, out)
		}
		r := h.run(e, bin, "Why was I charged twice?")
		if r.err != nil {
			e.dump(r)
			t.Fatalf("claude: %v", r.err)
		}
		if un := e.model.Unplayed(); len(un) != 1 || un[0] != "retry 3" {
			e.dump(r)
			t.Fatalf("unplayed turns %v, want [retry 3]: the gate held the turn open more than twice, or less", un)
		}
		rs, err := e.store().Reports(context.Background(), warden.ReportFilter{})
		if err != nil || len(rs) != 1 || rs[0].Status != warden.ReportFailed || rs[0].Retries != 2 || rs[0].Turns != 3 {
			t.Fatalf("reports: %+v %v", rs, err)
		}
		var got []string
		for _, a := range e.audit() {
			if a.Tool == "final_report" {
				got = append(got, string(a.Decision)+" "+string(a.Code))
			}
		}
		if strings.Join(got, ",") != "deny REPORT_INVALID,deny REPORT_INVALID,deny REPORT_INVALID" {
			t.Errorf("final_report audit records: %v", got)
		}
		if out, err := e.warden("report", "ls", "--status", "failed"); err != nil || !strings.Contains(out, rs[0].Session) {
			t.Errorf("warden report ls --status failed: %v\n%s", err, out)
		}
		if e.exists("completed.jsonl") {
			t.Error("on-complete ran for a failed report")
		}
	})
	// A model that shows the format in a code fence and echoes the
	// instructions' placeholder before it works has not reported: the gate
	// holds the turn, and the retry text says why; the real report of the
	// next turn is the one stored.
	t.Run("format shown, placeholder echoed", func(t *testing.T) {
		e := newEnv(t,
			scripted.Turn{Name: "shown", Match: scripted.All(h.main, scripted.Not(scripted.Contains(retryMarker))),
				Reply: func(q *scripted.Request) string {
					n := nonceOf(q)
					return "I will answer in this format:\n```\n<warden-" + n + "-FINAL>\nyour final report\n</warden-" + n + "-FINAL>\n" +
						"<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>\n```\n" +
						"<warden-" + n + "-FINAL>\nyour final report\n</warden-" + n + "-FINAL>"
				}},
			scripted.Turn{Name: "real", Match: scripted.All(h.main, scripted.Contains(retryMarker)),
				Reply: func(q *scripted.Request) string {
					n := nonceOf(q)
					return "<warden-" + n + "-FINAL>\nThe duplicate charge is refunded.\n</warden-" + n + "-FINAL>\n" +
						"<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>"
				}},
		)
		e.write("warden.yaml", reportPolicy)
		e.reportPlugin()
		if out, err := e.warden("init", h.name, "--bin", wardenBin); err != nil {
			t.Fatalf("warden init: %v\n%s", err, out)
		}
		r := h.run(e, bin, "Why was I charged twice?")
		if r.err != nil || len(e.model.Unplayed()) != 0 {
			e.dump(r)
			t.Fatalf("claude: %v, unplayed %v", r.err, e.model.Unplayed())
		}
		var retry string
		for _, q := range e.model.Requests() {
			if q.Turn == "real" {
				retry = q.Text()
			}
		}
		if !strings.Contains(retry, "send the final report exactly once") {
			t.Errorf("the retry text does not say the report must be sent once:\n%s", tail(retry, 3000))
		}
		rs, err := e.store().Reports(context.Background(), warden.ReportFilter{})
		if err != nil || len(rs) != 1 || rs[0].Status != warden.ReportFinal || strings.TrimSpace(rs[0].FinalReport) != "The duplicate charge is refunded." {
			t.Fatalf("reports: %+v %v", rs, err)
		}
	})
	t.Run("no report section", func(t *testing.T) {
		e := newEnv(t, scripted.Turn{Name: "answer", Match: h.main, Text: "Done."})
		e.write("warden.yaml", "version: 1\n")
		if out, err := e.warden("init", h.name, "--bin", wardenBin); err != nil {
			t.Fatalf("warden init: %v\n%s", err, out)
		}
		r := h.run(e, bin, "Why was I charged twice?")
		main := 0
		for _, q := range e.model.Requests() {
			if h.main(q) {
				main++
			}
		}
		if r.err != nil || main != 1 || e.modelSaw("-FINAL>") || e.modelSaw(retryMarker) {
			e.dump(r)
			t.Fatalf("err=%v, %d main requests, report text seen by the model: %v", r.err, main, e.modelSaw("-FINAL>"))
		}
		if rs, err := e.store().Reports(context.Background(), warden.ReportFilter{}); err != nil || len(rs) != 0 {
			t.Errorf("reports without a report section: %+v %v", rs, err)
		}
	})
}

// TestReportOpenCode runs OpenCode, wired by `warden init opencode`, with
// a model whose first answer is complete: the report is stored final with
// its metadata, and the model is asked once. (A report that is not
// complete holds the turn: TestOpenCodeReportGate.)
func TestReportOpenCode(t *testing.T) {
	t.Parallel()
	bin := requireHost(t, opencodeSpec)
	e := newEnv(t, scripted.Turn{Name: "answer", Match: scripted.HasTools, Reply: func(q *scripted.Request) string {
		n := nonceOf(q)
		return "<warden-" + n + "-FINAL>\nRefunded.\n</warden-" + n + "-FINAL>\n<warden-" + n + `-META plugin="support">{"language": "de", "solved": true}</warden-` + n + "-META>"
	}})
	e.write("warden.yaml", reportPolicy)
	e.reportPlugin()
	e.setupOpenCode()
	if out, err := e.warden("init", "opencode", "--bin", wardenBin); err != nil {
		t.Fatalf("warden init opencode: %v\n%s", err, out)
	}
	r := e.runOpenCode(bin, "Why was I charged twice?")
	main := 0
	for _, q := range e.model.Requests() {
		if q.HasTools() {
			main++
		}
	}
	if r.err != nil || main != 1 {
		e.dump(r)
		t.Fatalf("err=%v, %d main requests, want 1", r.err, main)
	}
	// The report is checked as the text completes, before opencode exits.
	rs, err := e.store().Reports(context.Background(), warden.ReportFilter{})
	if err != nil || len(rs) != 1 {
		t.Fatalf("reports: %+v %v", rs, err)
	}
	if rep := rs[0]; rep.Status != warden.ReportFinal || strings.TrimSpace(rep.FinalReport) != "Refunded." || string(rep.Metas["support"]) != `{"language":"de","solved":true}` {
		e.dump(r)
		t.Fatalf("report: %+v", rep)
	}
}
