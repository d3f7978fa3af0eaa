package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// TestClaudeAskUsesHostPrompt: Claude Code has a permission prompt of its
// own, so warden passes an ask through (permissionDecision "ask") instead
// of queueing it. Headless (-p) Claude Code cannot show the prompt and
// refuses the call: the file is not created, the call is listed under
// permission_denials, and no approval is queued in warden.
func TestClaudeAskUsesHostPrompt(t *testing.T) {
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "ask", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("touch asked.txt")}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(1), Text: "Could not."},
	)
	e.write("warden.yaml", approvalPolicy)
	if out, err := e.warden("init", "claude", "--bin", wardenBin); err != nil {
		t.Fatalf("warden init: %v\n%s", err, out)
	}
	r := h.run(e, bin, "Create asked.txt")
	var res struct {
		PermissionDenials []struct {
			ToolName  string         `json:"tool_name"`
			ToolInput map[string]any `json:"tool_input"`
		} `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.err != nil {
		e.dump(r)
		t.Fatalf("claude: %v / %v", r.err, err)
	}
	if e.exists("asked.txt") {
		e.dump(r)
		t.Fatal("asked.txt exists: an ask ran without anyone approving it")
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Bash" {
		e.dump(r)
		t.Errorf("permission_denials %+v, want the Bash call", res.PermissionDenials)
	}
	if out, _ := e.warden("approvals", "ls", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("warden queued an approval although Claude Code prompts itself: %s", out)
	}
	recs := e.audit()
	if len(recs) != 1 || recs[0].Decision != "ask" || recs[0].Rule != "ask-touch" {
		t.Errorf("audit trail %+v, want one ask by ask-touch", recs)
	}
}

// TestGeminiHeadlessAsk: Gemini CLI shows a hook's "ask" as a confirmation
// in its terminal UI, but headless (-p) it would wait forever. warden sees
// that this Gemini CLI is headless and queues the approval instead: the
// run ends, the call did not run, and the model is told what to do. The
// session's intent (which rules' `intent` match) is the user's prompt.
func TestGeminiHeadlessAsk(t *testing.T) {
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
