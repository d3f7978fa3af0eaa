package reportgate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/reportgate"
	"github.com/warden-run/warden/sqlite"
)

var ctx = context.Background()

// project writes a policy (with the given report section, "" for none)
// next to a copy of testdata/report: the plugin "support", whose
// on-complete command appends its input to completed.jsonl. It opens the
// project's SQLite store.
func project(t *testing.T, section string) (*policy.Policy, warden.Store, string) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join("testdata", "report"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the plugin: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\n"+section), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return pol, st, dir
}

const section = "report:\n  plugins: [report/support.yaml]\n"

var nonceRe = regexp.MustCompile(`<warden-([0-9a-f]{8})-FINAL>`)

// start gives session sid its instructions and returns the nonce in them.
func start(t *testing.T, pol *policy.Policy, st warden.Store, sid string) string {
	t.Helper()
	text, err := reportgate.Instructions(ctx, pol, st, warden.Session{ID: sid})
	if err != nil {
		t.Fatal(err)
	}
	m := nonceRe.FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, `plugin="support"`) || !strings.Contains(text, "whether the request was solved") {
		t.Fatalf("instructions without the tags or the plugin:\n%s", text)
	}
	return m[1]
}

func final(nonce, text string) string {
	return "Here is my answer.\n<warden-" + nonce + "-FINAL>\n" + text + "\n</warden-" + nonce + "-FINAL>\n"
}

func meta(nonce, js string) string {
	return "<warden-" + nonce + `-META plugin="support">` + js + "</warden-" + nonce + "-META>\n"
}

func completed(t *testing.T, dir string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "completed.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("on-complete input %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestGateMissingMetaThenValid: a final report without the metadata is
// held open with the retry text, which names the plugin and does not ask
// for the final report again; the metadata alone then makes the report
// final: stored with the locked final report, in the audit trail, and
// handed to the on-complete command once.
func TestGateMissingMetaThenValid(t *testing.T) {
	pol, st, dir := project(t, section)
	nonce := start(t, pol, st, "s1")
	if again := start(t, pol, st, "s1"); again != nonce {
		t.Fatalf("the nonce changed between calls: %s, then %s", nonce, again)
	}
	g := &reportgate.Gate{Policy: pol, Store: st}
	s := warden.Session{ID: "s1"}

	v, err := g.Stop(ctx, reportgate.Turn{Session: s, Host: "claude", Message: final(nonce, "The fix is in main.go.")})
	if err != nil || !v.Block {
		t.Fatalf("a final report without metadata: %+v %v", v, err)
	}
	for _, want := range []string{`Metadata for plugin "support" is missing`, "Your final report was received and is kept. Do not send it again.",
		`<warden-` + nonce + `-META plugin="support">`} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("retry text lacks %q:\n%s", want, v.Reason)
		}
	}
	if strings.Contains(v.Reason, "your complete final report") {
		t.Errorf("the retry asks for the final report again:\n%s", v.Reason)
	}
	if v.Report.Retries != 1 || v.Report.Status != warden.ReportPending || v.Report.FinalReport == "" {
		t.Errorf("after the first turn: %+v", v.Report)
	}

	// The second answer has only the metadata, and a different FINAL,
	// which is ignored: the first one is locked.
	v, err = g.Stop(ctx, reportgate.Turn{Session: s, Host: "claude", Message: final(nonce, "Something else.") + meta(nonce, `{"language": "en", "solved": true}`)})
	if err != nil || v.Block {
		t.Fatalf("the metadata: %+v %v", v, err)
	}
	r, err := st.Report(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != warden.ReportFinal || strings.TrimSpace(r.FinalReport) != "The fix is in main.go." ||
		string(r.Metas["support"]) != `{"language":"en","solved":true}` || r.Turns != 2 || r.Retries != 1 || !r.Completed || r.Nonce != nonce {
		t.Errorf("stored report: %+v", r)
	}
	runs := completed(t, dir)
	if len(runs) != 1 || runs[0]["plugin"] != "support" || runs[0]["session_id"] != "s1" ||
		strings.TrimSpace(runs[0]["final_report"].(string)) != "The fix is in main.go." {
		t.Fatalf("on-complete runs: %v", runs)
	}
	// Later stops and a second completion change nothing.
	if v, err := g.Stop(ctx, reportgate.Turn{Session: s, Message: "more"}); err != nil || v.Block || v.Changed {
		t.Errorf("a stop after the report was final: %+v %v", v, err)
	}
	if err := reportgate.RunComplete(ctx, pol, st, "s1", nil); err != nil {
		t.Fatal(err)
	}
	if n := len(completed(t, dir)); n != 1 {
		t.Errorf("on-complete ran %d times", n)
	}
	if text, err := reportgate.Instructions(ctx, pol, st, s); err != nil || text != "" {
		t.Errorf("instructions for a final report: %q %v", text, err)
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{Tool: reportgate.Tool})
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit: %+v %v", recs, err)
	}
	if recs[0].Decision != warden.Deny || recs[0].Code != warden.CodeReportInvalid || !strings.Contains(recs[0].Reason, `metadata for plugin "support" missing`) {
		t.Errorf("retry record: %+v", recs[0])
	}
	if recs[1].Decision != warden.Allow || recs[1].Args["metas"].(map[string]any)["support"].(map[string]any)["language"] != "en" {
		t.Errorf("final record: %+v", recs[1])
	}
}

// TestGateProblems: invalid metadata (a schema violation), a missing
// final report, the retry limit, a report that is not required, a session
// the contract does not cover, and a policy without a report section.
func TestGateProblems(t *testing.T) {
	t.Run("invalid meta", func(t *testing.T) {
		pol, st, _ := project(t, section)
		nonce := start(t, pol, st, "s")
		g := &reportgate.Gate{Policy: pol, Store: st}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "s"}, Message: final(nonce, "ok") + meta(nonce, `{"language": "klingon", "solved": true}`)})
		if err != nil || !v.Block || !strings.Contains(v.Reason, `Metadata for plugin "support" failed schema validation`) ||
			!strings.Contains(v.Reason, `The schema for plugin "support" is:`) {
			t.Fatalf("%+v %v", v, err)
		}
	})
	t.Run("missing final", func(t *testing.T) {
		pol, st, _ := project(t, section)
		nonce := start(t, pol, st, "s")
		g := &reportgate.Gate{Policy: pol, Store: st}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "s"}, Message: "Done. " + meta(nonce, `{"language": "de", "solved": false}`)})
		if err != nil || !v.Block || !strings.Contains(v.Reason, "The final report is missing") ||
			!strings.Contains(v.Reason, `Metadata for plugin "support" was accepted. Do not send it again.`) {
			t.Fatalf("%+v %v", v, err)
		}
	})
	t.Run("retry limit", func(t *testing.T) {
		pol, st, dir := project(t, section+"  retries: 1\n")
		start(t, pol, st, "s")
		g := &reportgate.Gate{Policy: pol, Store: st}
		s := warden.Session{ID: "s"}
		if v, err := g.Stop(ctx, reportgate.Turn{Session: s, Message: "no report"}); err != nil || !v.Block {
			t.Fatalf("first: %+v %v", v, err)
		}
		v, err := g.Stop(ctx, reportgate.Turn{Session: s, Message: "still none"})
		if err != nil || v.Block || v.Report.Status != warden.ReportFailed || !strings.Contains(v.Report.Problem, "after 1 retries") {
			t.Fatalf("second: %+v %v", v, err)
		}
		if v, err := g.Stop(ctx, reportgate.Turn{Session: s, Message: "and again"}); err != nil || v.Block || v.Changed {
			t.Fatalf("after the failure: %+v %v", v, err)
		}
		recs, _ := st.Audit(ctx, warden.AuditFilter{Tool: reportgate.Tool})
		if len(recs) != 2 || !strings.HasPrefix(recs[1].Reason, "retry limit (1) reached") {
			t.Errorf("audit: %+v", recs)
		}
		if len(completed(t, dir)) != 0 {
			t.Error("on-complete ran for a failed report")
		}
	})
	t.Run("not required", func(t *testing.T) {
		pol, st, _ := project(t, section+"  required: false\n")
		start(t, pol, st, "s")
		g := &reportgate.Gate{Policy: pol, Store: st}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "s"}, Message: "no report"})
		if err != nil || v.Block || v.Report.Status != warden.ReportPending || v.Report.Problem == "" {
			t.Fatalf("%+v %v", v, err)
		}
	})
	t.Run("host cannot hold the turn", func(t *testing.T) {
		pol, st, _ := project(t, section)
		start(t, pol, st, "s")
		g := &reportgate.Gate{Policy: pol, Store: st}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "s"}, Host: "opencode", Message: "no report", CannotHold: true})
		if err != nil || v.Block || v.Report.Status != warden.ReportPending || v.Report.Retries != 0 || !strings.Contains(v.Report.Problem, "The final report is missing") {
			t.Fatalf("%+v %v", v, err)
		}
	})
	t.Run("roles", func(t *testing.T) {
		pol, st, _ := project(t, "roles:\n  coder: {}\n"+section+"  roles: [coder]\n")
		g := &reportgate.Gate{Policy: pol, Store: st}
		if v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "top"}, Message: "x"}); err != nil || v.Block || v.Changed {
			t.Fatalf("a session without the role: %+v %v", v, err)
		}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "top/a1", Role: "coder", Depth: 1}, Message: "x"})
		if err != nil || !v.Block || !strings.Contains(v.Reason, "you were not given its format before") || nonceRe.FindString(v.Reason) == "" {
			t.Fatalf("a coder subagent that never got its instructions: %+v %v", v, err)
		}
	})
	t.Run("no report section", func(t *testing.T) {
		pol, st, _ := project(t, "")
		if text, err := reportgate.Instructions(ctx, pol, st, warden.Session{ID: "s"}); text != "" || err != nil {
			t.Fatalf("instructions: %q %v", text, err)
		}
		g := &reportgate.Gate{Policy: pol, Store: st}
		if v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "s"}, Message: "x"}); err != nil || v.Block || v.Changed {
			t.Fatalf("%+v %v", v, err)
		}
		if rs, _ := st.Reports(ctx, warden.ReportFilter{}); len(rs) != 0 {
			t.Errorf("reports stored: %+v", rs)
		}
	})
	t.Run("store fails", func(t *testing.T) {
		pol, st, _ := project(t, section)
		start(t, pol, st, "s")
		st.Close()
		g := &reportgate.Gate{Policy: pol, Store: st}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "s"}, Message: "no report"})
		if err == nil || v.Block {
			t.Fatalf("a closed store: %+v %v", v, err)
		}
	})
}

// TestLastMessage reads the last assistant message of Claude Code's and
// Codex's transcripts.
func TestLastMessage(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude.jsonl")
	os.WriteFile(claude, []byte(strings.Join([]string{
		`{"type":"user","message":{"role":"user","content":"do it"}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"first"}]}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"thinking","thinking":"hm"}]}}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"part one"}]}}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"part two"}]}}`,
		`{"type":"system","subtype":"stop_hook_summary"}`,
		`{"type":"assist`, // cut short while written
	}, "\n")), 0o644)
	if got, err := reportgate.LastMessage(claude); err != nil || got != "part one\npart two" {
		t.Errorf("claude: %q %v", got, err)
	}
	codex := filepath.Join(dir, "codex.jsonl")
	os.WriteFile(codex, []byte(strings.Join([]string{
		`{"type":"session_meta","payload":{"id":"x"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"do it"}]}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"old"}]}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"the answer"}]}}`,
		`{"type":"event_msg","payload":{"type":"task_complete"}}`,
	}, "\n")), 0o644)
	if got, err := reportgate.LastMessage(codex); err != nil || got != "the answer" {
		t.Errorf("codex: %q %v", got, err)
	}
	if _, err := reportgate.LastMessage(filepath.Join(dir, "none.jsonl")); err == nil {
		t.Error("a missing transcript is no error")
	}
}

// finalReportAudit returns the gate's audit records as
// "DECISION CODE: REASON" lines.
func finalReportAudit(t *testing.T, st warden.Store) []string {
	t.Helper()
	recs, err := st.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if r.Tool == reportgate.Tool {
			out = append(out, string(r.Decision)+" "+string(r.Code)+": "+r.Reason)
		}
	}
	return out
}

// TestGateUnknownSession: a Stop for a session warden never saw start is
// checked all the same. With a report required and none given, the turn
// is held with the format (the session never got it); a valid report
// next turn is final. Each turn has one audit record that says the
// session was never seen starting. A session whose role is unknown is held
// when the contract names roles (fail closed); a known role the contract
// does not name is not.
func TestGateUnknownSession(t *testing.T) {
	t.Run("required", func(t *testing.T) {
		pol, st, _ := project(t, section)
		g := &reportgate.Gate{Policy: pol, Store: st}
		in := reportgate.Turn{Session: warden.Session{ID: "ghost"}, Host: "claude", Message: "Done, no report.", Unknown: true}
		v, err := g.Stop(ctx, in)
		if err != nil || !v.Block || !strings.Contains(v.Reason, "you were not given its format before") {
			t.Fatalf("an unknown session without a report: %+v %v", v, err)
		}
		nonce := nonceRe.FindStringSubmatch(v.Reason)
		if nonce == nil {
			t.Fatalf("the retry text has no format:\n%s", v.Reason)
		}
		in.Message = final(nonce[1], "Refunded.") + meta(nonce[1], `{"language": "en", "solved": true}`)
		if v, err = g.Stop(ctx, in); err != nil || v.Block || v.Report.Status != warden.ReportFinal {
			t.Fatalf("the report next turn: %+v %v", v, err)
		}
		got := finalReportAudit(t, st)
		if len(got) != 2 || !strings.HasPrefix(got[0], "deny REPORT_INVALID: warden never saw this session start") ||
			!strings.HasPrefix(got[1], "allow ALLOWED: warden never saw this session start") {
			t.Errorf("audit records:\n%s", strings.Join(got, "\n"))
		}
		// A later Stop of the same (still unknown) session: one more record,
		// nothing checked again.
		if v, err = g.Stop(ctx, in); err != nil || v.Block || v.Changed {
			t.Fatalf("after the final report: %+v %v", v, err)
		}
		if got = finalReportAudit(t, st); len(got) != 3 || !strings.Contains(got[2], "the report is final already") {
			t.Errorf("audit records:\n%s", strings.Join(got, "\n"))
		}
	})
	t.Run("not required", func(t *testing.T) {
		pol, st, _ := project(t, section+"  required: false\n")
		g := &reportgate.Gate{Policy: pol, Store: st}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "ghost"}, Host: "claude", Message: "Done.", Unknown: true})
		if err != nil || v.Block || !v.Changed || v.Report.Problem == "" {
			t.Fatalf("not required: %+v %v", v, err)
		}
		if got := finalReportAudit(t, st); len(got) != 1 || !strings.HasPrefix(got[0], "allow ALLOWED: warden never saw this session start") {
			t.Errorf("audit records:\n%s", strings.Join(got, "\n"))
		}
	})
	t.Run("roles", func(t *testing.T) {
		pol, st, _ := project(t, section+"  roles: [support]\nroles:\n  support: {}\n  coder: {}\n")
		g := &reportgate.Gate{Policy: pol, Store: st}
		v, err := g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "ghost"}, Host: "claude", Message: "Done.", Unknown: true})
		if err != nil || !v.Block {
			t.Fatalf("an unknown session of unknown role: %+v %v", v, err)
		}
		v, err = g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "ghost2", Role: "coder"}, Host: "claude", Message: "Done.", Unknown: true})
		if err != nil || v.Block || v.Changed {
			t.Fatalf("an unknown session of a role the contract does not name: %+v %v", v, err)
		}
		// A known session without a role is not held when the contract
		// names roles (as before).
		v, err = g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "known"}, Host: "claude", Message: "Done."})
		if err != nil || v.Block || v.Changed {
			t.Fatalf("a known session without a role: %+v %v", v, err)
		}
	})
}

// TestGateTentative: a tentative Stop (OpenCode, as an answer's text
// completes) that would hold the turn returns the retry text but stores
// and records nothing, except a nonce drawn for a session that had none;
// the Stop that follows when the turn has ended gives the same text and
// stores the held turn. A tentative Stop that would not hold stores its
// verdict at once.
func TestGateTentative(t *testing.T) {
	pol, st, _ := project(t, section)
	g := &reportgate.Gate{Policy: pol, Store: st}
	nonce := start(t, pol, st, "t1")
	in := reportgate.Turn{Session: warden.Session{ID: "t1"}, Host: "opencode", Message: final(nonce, "Refunded."), Tentative: true}
	v, err := g.Stop(ctx, in)
	if err != nil || !v.Block {
		t.Fatalf("tentative, metadata missing: %+v %v", v, err)
	}
	if r, _ := st.Report(ctx, "t1"); r.Turns != 0 || r.Retries != 0 || r.FinalReport != "" {
		t.Fatalf("a tentative hold stored %+v", r)
	}
	if got := finalReportAudit(t, st); len(got) != 0 {
		t.Fatalf("a tentative hold was recorded: %q", got)
	}
	in.Tentative = false
	v2, err := g.Stop(ctx, in)
	if err != nil || !v2.Block || v2.Reason != v.Reason || v2.Report.Turns != 1 || v2.Report.Retries != 1 {
		t.Fatalf("the stored hold: %+v %v (tentative text %q)", v2, err, v.Reason)
	}
	// The metadata next: final at once, even tentatively.
	in.Message, in.Tentative = meta(nonce, `{"language": "en", "solved": true}`), true
	if v, err = g.Stop(ctx, in); err != nil || v.Block || v.Report.Status != warden.ReportFinal {
		t.Fatalf("tentative, complete: %+v %v", v, err)
	}

	// A session without a nonce: the tentative hold keeps the nonce of its
	// retry text, and the stored turn uses it.
	v, err = g.Stop(ctx, reportgate.Turn{Session: warden.Session{ID: "t2"}, Host: "opencode", Message: "Done.", Tentative: true})
	m := nonceRe.FindStringSubmatch(v.Reason)
	if err != nil || !v.Block || m == nil {
		t.Fatalf("tentative, no nonce yet: %+v %v", v, err)
	}
	if r, err := st.Report(ctx, "t2"); err != nil || r.Nonce != m[1] || r.Turns != 0 {
		t.Fatalf("the nonce of the tentative retry text is not kept: %+v %v", r, err)
	}
}
