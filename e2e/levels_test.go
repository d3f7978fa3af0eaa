package e2e

import (
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

const levelsPolicy = `version: 1
default: deny
roles:
  reviewer:
    description: reads code and reports, never changes it
    tools: [read, list]
    first: [read]
rules:
  - id: allow-delegate
    effect: allow
    tool: delegate
  - id: files
    effect: allow
    path: ["**"]
governance:
  levels:
    0:
      files: [docs/plan.md]
    1:
      sections: [rules]
      state: []
    2:
      sections: [first]
      state: []
`

// TestClaudeLevels: governance.levels on a real host. Claude Code's main
// agent (depth 0) reads the whole session-start text with the phase and
// the level's file; the subagent it starts with its Agent tool (depth 1,
// told at SubagentStart) reads its level's share: the rules, without the
// phase, the required first action or the file. The audit trail records
// the subagent's call at depth 1.
func TestClaudeLevels(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	main, sub := scripted.Contains("main-marker"), scripted.Contains("sub-marker")
	e := newEnv(t)
	e.write("warden.yaml", levelsPolicy)
	e.write("docs/plan.md", "PLAN-MARKER: the parser ships first.\n")
	notes := e.write("notes.txt", "some notes\n")
	e.model.Add(
		scripted.Turn{Name: "delegate", Match: main, ToolCalls: []scripted.ToolCall{{Name: "Agent", Args: map[string]any{
			"description": "review the notes", "prompt": "sub-marker: read the notes", "subagent_type": "reviewer"}}}},
		scripted.Turn{Name: "sub-read", Match: scripted.All(sub, scripted.Not(main)), ToolCalls: []scripted.ToolCall{{Name: "Read",
			Args: map[string]any{"file_path": notes}}}},
		scripted.Turn{Name: "sub-done", Match: scripted.All(sub, scripted.Not(main), scripted.MinToolResults(1)), Text: "Reviewed."},
		scripted.Turn{Name: "final", Match: scripted.All(main, scripted.MinToolResults(1)), Text: "All done."},
	)
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code\ntools: Read\n---\nYou review code.\n")
	e.initHost("claude")
	r := e.runClaude(bin, "main-marker: get the notes reviewed")
	fail := e.played("claude", r)

	// What each depth's requests carried.
	var top, deep []string
	for _, q := range e.model.Requests() {
		switch q.Turn {
		case "delegate", "final":
			top = append(top, q.Text())
		case "sub-read", "sub-done":
			deep = append(deep, q.Text())
		}
	}
	checkLevelTexts(t, e, fail, top, deep, []string{"Delegation depth: 0", "Current phase: init", "### File docs/plan.md", "PLAN-MARKER: the parser ships first."},
		"Agent allow ALLOWED  0", "Read allow ALLOWED reviewer 1")
}

// TestClaudeLevelsNested: Claude Code lets a subagent start a subagent of
// its own, and its SubagentStart names the main session only. warden finds
// the subagent that delegated (the one whose Agent call is still open), so
// the nested reviewer lies at depth 2, under the general-purpose subagent,
// and reads level 2: its first action, not the rules of level 1 nor the
// main agent's file.
func TestClaudeLevelsNested(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	main, sub, nested := scripted.Contains("main-marker"), scripted.Contains("sub-marker"), scripted.Contains("nested-marker")
	e := newEnv(t)
	e.write("warden.yaml", levelsPolicy)
	e.write("docs/plan.md", "PLAN-MARKER: the parser ships first.\n")
	notes := e.write("notes.txt", "some notes\n")
	e.model.Add(
		scripted.Turn{Name: "delegate", Match: main, ToolCalls: []scripted.ToolCall{{Name: "Agent", Args: map[string]any{
			"description": "plan", "prompt": "sub-marker: get it reviewed", "subagent_type": "general-purpose"}}}},
		scripted.Turn{Name: "sub-delegate", Match: scripted.All(sub, scripted.Not(main)), ToolCalls: []scripted.ToolCall{{Name: "Agent", Args: map[string]any{
			"description": "review", "prompt": "nested-marker: read the notes", "subagent_type": "reviewer"}}}},
		scripted.Turn{Name: "nested-read", Match: scripted.All(nested, scripted.Not(sub)), ToolCalls: []scripted.ToolCall{{Name: "Read",
			Args: map[string]any{"file_path": notes}}}},
		scripted.Turn{Name: "nested-done", Match: scripted.All(nested, scripted.Not(sub), scripted.MinToolResults(1)), Text: "Reviewed."},
		scripted.Turn{Name: "sub-done", Match: scripted.All(sub, scripted.Not(main), scripted.MinToolResults(1)), Text: "Sub done."},
		scripted.Turn{Name: "final", Match: scripted.All(main, scripted.MinToolResults(1)), Text: "All done."},
	)
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code\ntools: Read\n---\nYou review code.\n")
	e.initHost("claude")
	r := e.runClaude(bin, "main-marker: get the notes reviewed")
	fail := e.played("claude", r)
	var subText, nestedText string
	for _, q := range e.model.Requests() {
		switch q.Turn {
		case "sub-delegate":
			subText = q.Text()
		case "nested-read":
			nestedText = q.Text()
		}
	}
	for _, want := range []string{"Delegation depth: 1", "### Rules"} {
		if !strings.Contains(subText, want) {
			fail("the subagent's request lacks %q", want)
		}
	}
	for _, want := range []string{"You are: reviewer", "Delegation depth: 2", "Use read before any other tool."} {
		if !strings.Contains(nestedText, want) {
			fail("the nested subagent's request lacks %q", want)
		}
	}
	for _, not := range []string{"### Rules", "PLAN-MARKER", "Current phase:"} {
		if strings.Contains(nestedText, not) {
			fail("the nested subagent's request has %q, which level 2 does not read", not)
		}
	}
	got := e.roleAudit()
	want := []string{"Agent allow ALLOWED  0", "Agent allow ALLOWED  1", "Read allow ALLOWED reviewer 2"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOpenCodeLevels: OpenCode gives its subagent a session of its own,
// whose system prompt warden fills on every request: the main agent's
// requests carry level 0 (the file), the subagent's level 1 (the rules,
// no phase, no file).
func TestOpenCodeLevels(t *testing.T) {
	t.Parallel()
	h := governedHosts[3]
	bin := requireHost(t, h.spec)
	main, sub := scripted.Contains("main-marker"), scripted.Contains("sub-marker")
	e := newEnv(t)
	e.write("warden.yaml", levelsPolicy)
	e.write("docs/plan.md", "PLAN-MARKER: the parser ships first.\n")
	notes := e.write("notes.txt", "some notes\n")
	e.model.Add(
		scripted.Turn{Name: "delegate", Match: scripted.All(main, scripted.HasTools), ToolCalls: []scripted.ToolCall{{Name: "task", Args: map[string]any{
			"description": "review the notes", "prompt": "sub-marker: read the notes", "subagent_type": "reviewer"}}}},
		scripted.Turn{Name: "sub-read", Match: scripted.All(sub, scripted.Not(main), scripted.HasTools), ToolCalls: []scripted.ToolCall{{Name: "read",
			Args: map[string]any{"filePath": notes}}}},
		scripted.Turn{Name: "sub-done", Match: scripted.All(sub, scripted.Not(main), scripted.MinToolResults(1)), Text: "Reviewed."},
		scripted.Turn{Name: "final", Match: scripted.All(main, scripted.MinToolResults(1)), Text: "All done."},
	)
	e.write(".opencode/agent/reviewer.md", "---\ndescription: Reviews code\nmode: subagent\n---\nYou review code.\n")
	h.setup(e)
	e.initHost("opencode")
	r := h.run(e, bin, "main-marker: get the notes reviewed")
	fail := e.played("opencode", r)
	var top, deep []string
	for _, q := range e.model.Requests() {
		switch q.Turn {
		case "delegate":
			top = append(top, q.Text())
		case "sub-read", "sub-done":
			deep = append(deep, q.Text())
		}
	}
	checkLevelTexts(t, e, fail, top, deep, []string{"Delegation depth: 0", "Current phase: init", "PLAN-MARKER: the parser ships first."},
		"task allow ALLOWED  0", "read allow ALLOWED reviewer 1")
}

// checkLevelTexts checks what the main agent (top: its requests' text)
// and its reviewer subagent (deep) read under the levels policy: the main
// agent's first request holds topWant, every subagent request its role's
// short text and nothing its level does not read; and the audit trail is
// audit.
func checkLevelTexts(t *testing.T, e *env, fail func(string, ...any), top, deep, topWant []string, audit ...string) {
	t.Helper()
	if len(top) == 0 || len(deep) == 0 {
		fail("requests: %d of the main agent, %d of the subagent", len(top), len(deep))
	}
	for _, want := range topWant {
		if !strings.Contains(top[0], want) {
			fail("the main agent's first request lacks %q", want)
		}
	}
	for i, text := range deep {
		for _, want := range []string{"You are: reviewer", "Delegation depth: 1", "You may use only these tools: read, list."} {
			if !strings.Contains(text, want) {
				fail("the subagent's request %d lacks %q", i, want)
			}
		}
		for _, not := range []string{"PLAN-MARKER", "Current phase:", "### Required first action"} {
			if strings.Contains(text, not) {
				fail("the subagent's request %d has %q, which its level does not read", i, not)
			}
		}
	}
	if got := e.roleAudit(); strings.Join(got, "\n") != strings.Join(audit, "\n") {
		t.Errorf("audit trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(audit, "\n"))
	}
}
