package e2e

import (
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

const subagentPolicy = `version: 1
default: deny
roles:
  reviewer:
    description: reads code and reports, never changes it
    tools: [read, list]
rules:
  - id: allow-delegate
    effect: allow
    tool: delegate
  - id: allow-touch
    effect: allow
    tool: shell
    command: ["touch *"]
  - id: files
    effect: allow
    path: ["**"]
`

// TestClaudeSubagentRole: Claude Code delegates to a project subagent
// whose type is a role of the policy. The subagent gets its role's
// governance text at SubagentStart, its Bash call is denied by the role's
// tool list (though the policy allows `touch` to the main agent), and the
// audit trail records the role and depth 1.
func TestClaudeSubagentRole(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	main, sub := scripted.Contains("main-marker"), scripted.Contains("sub-marker")
	e := newEnv(t,
		scripted.Turn{Name: "delegate", Match: main, ToolCalls: []scripted.ToolCall{{Name: "Agent", Args: map[string]any{
			"description": "review the files", "prompt": "sub-marker: check the files", "subagent_type": "reviewer"}}}},
		scripted.Turn{Name: "sub-bash", Match: scripted.All(sub, scripted.Not(main)), ToolCalls: []scripted.ToolCall{h.shell("touch sub.txt")}},
		scripted.Turn{Name: "sub-done", Match: scripted.All(sub, scripted.Not(main), scripted.MinToolResults(1)), Text: "Reviewed."},
		scripted.Turn{Name: "final", Match: scripted.All(main, scripted.MinToolResults(1)), Text: "All done."},
	)
	e.write("warden.yaml", subagentPolicy)
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code\ntools: Bash, Read\n---\nYou review code.\n")
	e.initHost("claude")
	r := e.runClaude(bin, "main-marker: get the files reviewed")
	fail := e.played("claude", r)
	if e.exists("sub.txt") {
		fail("sub.txt exists: the reviewer ran Bash")
	}
	var subResult string
	for _, q := range e.model.Requests() {
		if q.Turn == "sub-done" {
			if res := q.ToolResults(); len(res) > 0 {
				subResult = res[len(res)-1].Text
			}
		}
	}
	if !strings.Contains(subResult, "ROLE_TOOL_DENIED") {
		fail("the subagent's Bash result lacks ROLE_TOOL_DENIED: %q", subResult)
	}
	if !e.modelSaw("You are: reviewer") {
		fail("the subagent never got its role's governance text")
	}
	got := e.roleAudit()
	want := []string{"Agent allow ALLOWED  0", "Bash deny ROLE_TOOL_DENIED reviewer 1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOpenCodeSubagentRole: OpenCode's task tool runs a subagent in a
// session of its own. warden links it to its parent (depth 1) and gives it
// the role named by the subagent's agent, whose tool list then applies.
func TestOpenCodeSubagentRole(t *testing.T) {
	t.Parallel()
	h := governedHosts[3]
	bin := requireHost(t, h.spec)
	main, sub := scripted.Contains("main-marker"), scripted.Contains("sub-marker")
	e := newEnv(t,
		scripted.Turn{Name: "delegate", Match: scripted.All(main, scripted.HasTools), ToolCalls: []scripted.ToolCall{{Name: "task", Args: map[string]any{
			"description": "review the files", "prompt": "sub-marker: check the files", "subagent_type": "reviewer"}}}},
		scripted.Turn{Name: "sub-bash", Match: scripted.All(sub, scripted.Not(main), scripted.HasTools), ToolCalls: []scripted.ToolCall{h.shell("touch sub.txt")}},
		scripted.Turn{Name: "sub-done", Match: scripted.All(sub, scripted.Not(main), scripted.MinToolResults(1)), Text: "Reviewed."},
		scripted.Turn{Name: "final", Match: scripted.All(main, scripted.MinToolResults(1)), Text: "All done."},
	)
	e.write("warden.yaml", subagentPolicy)
	e.write(".opencode/agent/reviewer.md", "---\ndescription: Reviews code\nmode: subagent\n---\nYou review code.\n")
	h.setup(e)
	e.initHost("opencode")
	r := h.run(e, bin, "main-marker: get the files reviewed")
	fail := e.played("opencode", r)
	if e.exists("sub.txt") {
		fail("sub.txt exists: the reviewer ran bash")
	}
	if !e.modelSaw("You are: reviewer") {
		fail("the subagent never got its role's governance text")
	}
	got := e.roleAudit()
	want := []string{"task allow ALLOWED  0", "bash deny ROLE_TOOL_DENIED reviewer 1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
