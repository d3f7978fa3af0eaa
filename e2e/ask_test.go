package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// TestClaudeHeadlessAskQueues: interactive Claude Code has a permission
// prompt of its own, but headless (-p) it has nobody to ask and would
// refuse the call. warden sees the headless run (CLAUDE_CODE_ENTRYPOINT in
// the hook's environment) and queues the approval like on the other
// headless hosts: the call does not run, the model is told the approval's
// id and how to answer it, and `warden approvals ls` lists it.
func TestClaudeHeadlessAskQueues(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "ask", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("touch asked.txt")}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(1), Text: "Could not."},
	)
	e.write("warden.yaml", approvalPolicy)
	e.initHost("claude")
	r := h.run(e, bin, "Create asked.txt")
	res := e.lastResults()
	if r.err != nil || e.exists("asked.txt") || len(res) != 1 || !strings.Contains(res[0].Text, "is waiting for a human") {
		e.dump(r)
		t.Fatalf("err=%v, asked.txt exists=%v, results=%+v", r.err, e.exists("asked.txt"), res)
	}
	out, _ := e.warden("approvals", "ls", "--json")
	var list []struct {
		ID, Status string
	}
	if json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].Status != "pending" || !strings.Contains(res[0].Text, list[0].ID) {
		t.Errorf("approvals ls: %s; the model was told: %s", out, res[0].Text)
	}
	recs := e.audit()
	if len(recs) != 1 || recs[0].Decision != "ask" || recs[0].Rule != "ask-touch" || recs[0].Approval == "" {
		t.Errorf("audit trail %+v, want one ask by ask-touch with its approval", recs)
	}
}

// TestGeminiHeadlessAsk: Gemini CLI shows a hook's "ask" as a confirmation
// in its terminal UI, but headless (-p) it would wait forever. warden sees
// that this Gemini CLI is headless and queues the approval instead: the
// run ends, the call did not run, and the model is told what to do. The
// session's intent (which rules' `intent` match) is the user's prompt.
func TestGeminiHeadlessAsk(t *testing.T) {
	t.Parallel()
	h := governedHosts[2]
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "ask", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("touch asked.txt")}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(1), Text: "Waiting for approval."},
	)
	e.write("warden.yaml", approvalPolicy)
	h.setup(e)
	if out, err := e.warden("init", h.name, "--bin", wardenBin); err != nil {
		t.Fatalf("warden init: %v\n%s", err, out)
	}
	r := h.run(e, bin, "Create asked.txt")
	res := e.lastResults()
	if r.err != nil || e.exists("asked.txt") || len(res) != 1 || !strings.Contains(res[0].Text, "is waiting for a human") {
		e.dump(r)
		t.Fatalf("err=%v, asked.txt exists=%v, results=%+v", r.err, e.exists("asked.txt"), res)
	}
	if out, _ := e.warden("approvals", "ls", "--json"); !strings.Contains(out, `"status": "pending"`) {
		t.Errorf("no pending approval: %s", out)
	}
	// Headless, Gemini CLI puts the SessionStart text into the prompt it
	// reports at BeforeAgent; the recorded intent is the user's request.
	if got := storedIntent(t, e); got != "Create asked.txt" {
		t.Errorf("recorded intent %q, want the user's request alone", got)
	}
}
