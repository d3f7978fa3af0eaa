package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
)

// outcomePolicy is subagentPolicy with a first tool for the reviewer: a
// reviewer whose first call is a shell command breaks two rules at once
// (its tool list and its first tool).
var outcomePolicy = strings.Replace(subagentPolicy, "    tools: [read, list]\n", "    tools: [read, list]\n    first: [read]\n", 1)

// TestOpenCodeOutcomeHistory: on OpenCode, a subagent (task) whose answer
// says it failed is recorded as failed, in the history and on the task
// call's audit record; the subagent's first call, a shell command its role
// may not use and not its first tool, has a history entry for each of the
// two rules it broke.
func TestOpenCodeOutcomeHistory(t *testing.T) {
	t.Parallel()
	h := governedHosts[3]
	bin := requireHost(t, h.spec)
	main, sub := scripted.Contains("main-marker"), scripted.Contains("sub-marker")
	e := newEnv(t,
		scripted.Turn{Name: "delegate", Match: scripted.All(main, scripted.HasTools), ToolCalls: []scripted.ToolCall{{Name: "task", Args: map[string]any{
			"description": "review the files", "prompt": "sub-marker: check the files", "subagent_type": "reviewer"}}}},
		scripted.Turn{Name: "sub-bash", Match: scripted.All(sub, scripted.Not(main), scripted.HasTools), ToolCalls: []scripted.ToolCall{h.shell("touch sub.txt")}},
		scripted.Turn{Name: "sub-failed", Match: scripted.All(sub, scripted.Not(main), scripted.MinToolResults(1)), Text: "The review failed: I could not run the checks."},
		scripted.Turn{Name: "final", Match: scripted.All(main, scripted.MinToolResults(1)), Text: "The review did not happen."},
	)
	e.write("warden.yaml", outcomePolicy)
	e.write(".opencode/agent/reviewer.md", "---\ndescription: Reviews code\nmode: subagent\n---\nYou review code.\n")
	h.setup(e)
	e.initHost("opencode")
	r := h.run(e, bin, "main-marker: get the files reviewed")
	fail := e.played("opencode", r)

	st := e.store()
	ps, err := st.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var taskOutcome, bashViolations []string
	for _, hi := range ps.History {
		switch {
		case strings.HasPrefix(hi.Action, "outcome:task"):
			taskOutcome = append(taskOutcome, hi.Result+" "+hi.Action)
		case strings.HasPrefix(hi.Action, "violation:") && strings.HasSuffix(hi.Action, ":bash"):
			bashViolations = append(bashViolations, hi.Action+" "+hi.Result+" "+hi.Agent)
		}
	}
	if len(taskOutcome) != 1 || !strings.HasPrefix(taskOutcome[0], "fail outcome:task") || !strings.Contains(taskOutcome[0], "review failed") {
		fail("task outcome in the history: %q, want one fail with the subagent's answer", taskOutcome)
	}
	want := "violation:first_tool:bash fail reviewer|violation:role_tool_denied:bash fail reviewer"
	if strings.Join(bashViolations, "|") != want {
		fail("the reviewer's bash in the history:\n%s\nwant:\n%s", strings.Join(bashViolations, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
	var taskRec []string
	for _, a := range e.audit() {
		if a.Tool == "task" {
			taskRec = append(taskRec, string(a.Decision)+" "+a.Outcome)
		}
	}
	if strings.Join(taskRec, ",") != "allow "+warden.OutcomeFail {
		fail("the task call's audit record: %v, want allow with outcome fail", taskRec)
	}
}
