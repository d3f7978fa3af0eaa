package e2e

import (
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// TestClaudeParallelCallsCounted: the real Claude Code runs the reads of
// one model turn at once, each through a `warden hook` process of its own
// on one store. A repeat: rule counts them as it counts reads one after
// the other: of five identical reads sent together, two are allowed and
// three denied with the rule's guidance. (Before the store checked that a
// decision's history was current, a hook could read the history before
// the others were recorded: three or four of the five were allowed in two
// runs of three.)
func TestClaudeParallelCallsCounted(t *testing.T) {
	t.Parallel()
	bin := requireHost(t, claudeSpec)
	e := newEnv(t)
	notes := e.write("notes.txt", "some notes\n")
	read := scripted.ToolCall{Name: "Read", Args: map[string]any{"file_path": notes}}
	e.model.Add(
		scripted.Turn{Name: "reads", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{read, read, read, read, read}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(5), Text: "Read."},
	)
	e.write("warden.yaml", `version: 1
default: allow
rules:
  - id: read-twice
    effect: deny
    tool: read
    repeat: {count: 2, within: 10m}
    message: This file was read twice already; its content has not changed.
    suggestion: Use what the earlier reads returned.
`)
	e.initHost("claude")
	r := e.runClaude(bin, "Read the notes.")
	fail := e.played("claude", r)
	allowed, denied := 0, 0
	for _, a := range e.audit() {
		switch {
		case a.Tool != "Read":
		case a.Decision == "allow":
			allowed++
		case a.Decision == "deny" && a.Rule == "read-twice":
			denied++
		default:
			fail("record %d: %s by %q", a.ID, a.Decision, a.Rule)
		}
	}
	if allowed != 2 || denied != 3 {
		fail("five identical reads at once: %d allowed, %d denied by the rule; want 2 and 3", allowed, denied)
	}
	guided := 0
	for _, res := range e.lastResults() {
		if strings.Contains(res.Text, "read twice already") {
			guided++
		}
	}
	if guided != 3 {
		fail("%d of the model's results carry the rule's message, want 3: %+v", guided, e.lastResults())
	}
}
