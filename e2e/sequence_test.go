package e2e

import (
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// TestClaudeLoopStopped: a model that repeats a failing command is stopped
// by a repeat: rule on the real Claude Code, and the model gets the loop
// guidance.
func TestClaudeLoopStopped(t *testing.T) {
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "try-1", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("ls no-such-file")}},
		scripted.Turn{Name: "try-2", Match: scripted.MinToolResults(1), ToolCalls: []scripted.ToolCall{h.shell("ls no-such-file")}},
		scripted.Turn{Name: "try-3", Match: scripted.MinToolResults(2), ToolCalls: []scripted.ToolCall{h.shell("ls no-such-file")}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(3), Text: "I will stop and ask."},
	)
	e.write("warden.yaml", `version: 1
default: allow
rules:
  - id: stop-loops
    effect: deny
    tool: shell
    repeat: {count: 2, within: 10m}
    message: This exact command already ran twice; repeating it will not change the result.
    suggestion: Read the last output and change the approach, or ask the user.
`)
	if out, err := e.warden("init", "claude", "--bin", wardenBin); err != nil {
		t.Fatalf("warden init: %v\n%s", err, out)
	}
	r := e.runClaude(bin, "List the file.")
	fail := func(format string, args ...any) {
		t.Helper()
		e.dump(r)
		t.Fatalf(format, args...)
	}
	if r.err != nil || len(e.model.Unplayed()) > 0 {
		fail("claude: %v; unplayed turns %v", r.err, e.model.Unplayed())
	}
	res := e.lastResults()
	if len(res) < 3 || !strings.Contains(res[2].Text, "already ran twice") || !strings.Contains(res[2].Text, "change the approach") {
		fail("the third try did not get the loop guidance: %+v", res)
	}
	var got []string
	for _, a := range e.audit() {
		got = append(got, string(a.Decision)+" "+a.Rule)
	}
	if strings.Join(got, ",") != "allow ,allow ,deny stop-loops" {
		fail("audit: %q", got)
	}
}
