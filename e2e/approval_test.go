package e2e

import (
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

const approvalPolicy = `version: 1
default: deny
rules:
  - id: ask-touch
    effect: ask
    tool: shell
    command: ["touch *"]
    message: Creating files needs the user's approval.
    suggestion: Wait for the user's answer.
  - id: files
    effect: allow
    path: ["**"]
`

// TestApprovalQueue runs every host headless, where it cannot ask its user
// (Claude Code -p, Codex exec, Gemini CLI -p, OpenCode run), with
// `warden init HOST --wait 60s`: an ask waits in warden's queue while the
// host waits on the hook, a human approves it with `warden approvals
// approve`, and the call runs in the same run.
func TestApprovalQueue(t *testing.T) {
	t.Parallel()
	for _, h := range governedHosts {
		t.Run(h.name, func(t *testing.T) {
			bin := requireHost(t, h.spec)
			e := newEnv(t,
				scripted.Turn{Name: "ask", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("touch approved.txt")}},
				scripted.Turn{Name: "final", Match: scripted.MinToolResults(1), Text: "Created."},
			)
			e.write("warden.yaml", approvalPolicy)
			h.setup(e)
			if out, err := e.warden("init", h.name, "--bin", wardenBin, "--wait", "60s"); err != nil {
				t.Fatalf("warden init: %v\n%s", err, out)
			}
			// The human: approve the first pending approval once it shows.
			done := approveFirst(e, "--message", "ok, go ahead")
			r := h.run(e, bin, "Create approved.txt")
			approved, approveOut := done()
			if r.err != nil || approved == "" || !e.exists("approved.txt") {
				e.dump(r)
				t.Fatalf("err=%v approval=%q (%s); approved.txt exists: %v", r.err, approved, approveOut, e.exists("approved.txt"))
			}
			var rec []string
			for _, a := range e.audit() {
				rec = append(rec, string(a.Decision)+" "+a.Rule+" "+a.Approval)
			}
			if len(rec) != 1 || !strings.HasPrefix(rec[0], "allow approval:"+approved) {
				t.Errorf("audit trail %q, want one allow by approval %s", rec, approved)
			}
		})
	}
}
