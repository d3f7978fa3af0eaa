package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
)

const sequencePolicy = `version: 1
default: {safe: allow, destructive: allow}
rules:
  - id: read-before-edit
    effect: deny
    tool: [edit, write]
    after: {tool: read, same_path: true}
    message: Read a file before you change it.
    suggestion: Read the file first, then edit it.
  - id: test-before-push
    effect: deny
    tool: shell
    command: "git push *"
    after:
      command: "go test *"
      since: {tool: [edit, write]}
    message: Run the tests after your last edit before pushing.
    suggestion: Run go test ./... and push when it passes.
  - id: no-loops
    effect: deny
    tool: shell
    repeat: {count: 3, within: 10m}
    message: The same command ran three times in ten minutes; it is not going to work this way.
    suggestion: Stop, read the last error, and try something different or ask the user.
  - id: slow-down
    effect: ask
    rate: {count: 50, within: 1m}
    message: This session made more than 50 calls in a minute.
  - id: deploy-after-build
    effect: allow
    tool: shell
    command: "make deploy"
    after: {command: "make build"}
`

func TestSequenceRules(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, sequencePolicy)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	rec := func(ago time.Duration, tool string, args map[string]any, d warden.Effect) warden.AuditRecord {
		return warden.AuditRecord{Time: now.Add(-ago), Tool: tool, Args: args, Decision: d, Mode: "enforce"}
	}
	read := func(p string) warden.AuditRecord {
		return rec(time.Minute, "Read", map[string]any{"file_path": p}, warden.Allow)
	}
	run := func(ago time.Duration, cmd string) warden.AuditRecord {
		return rec(ago, "Bash", map[string]any{"command": cmd}, warden.Allow)
	}
	edit := func(ago time.Duration, p string) warden.AuditRecord {
		return rec(ago, "Edit", map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}, warden.Allow)
	}
	editCall := warden.ToolCall{Tool: "Edit", Args: map[string]any{"file_path": "src/a.go", "old_string": "a", "new_string": "b"}}
	for _, c := range []struct {
		name string
		call warden.ToolCall
		hist []warden.AuditRecord
		want warden.Effect
		rule string
	}{
		{"edit with no read", editCall, nil, warden.Deny, "read-before-edit"},
		{"edit after a read of it", editCall, []warden.AuditRecord{read("src/a.go")}, warden.Allow, ""},
		{"edit after cat of it", editCall, []warden.AuditRecord{run(time.Minute, "cat src/a.go")}, warden.Allow, ""},
		{"edit after a read of another file", editCall, []warden.AuditRecord{read("src/b.go")}, warden.Deny, "read-before-edit"},
		{"a denied read does not count", editCall, []warden.AuditRecord{rec(time.Minute, "Read", map[string]any{"file_path": "src/a.go"}, warden.Deny)}, warden.Deny, "read-before-edit"},
		{"push with no test", bash("git push origin main"), nil, warden.Deny, "test-before-push"},
		{"push after a test", bash("git push origin main"), []warden.AuditRecord{edit(5*time.Minute, "src/a.go"), run(time.Minute, "go test ./...")}, warden.Allow, ""},
		{"push after an edit that came after the test", bash("git push origin main"), []warden.AuditRecord{run(5*time.Minute, "go test ./..."), edit(time.Minute, "src/a.go")}, warden.Deny, "test-before-push"},
		{"a loop", bash("make"), []warden.AuditRecord{run(3*time.Minute, "make"), run(2*time.Minute, "make"), run(time.Minute, "make")}, warden.Deny, "no-loops"},
		{"twice is not a loop", bash("make"), []warden.AuditRecord{run(2*time.Minute, "make"), run(time.Minute, "make")}, warden.Allow, ""},
		{"old repeats are outside the window", bash("make"), []warden.AuditRecord{run(30*time.Minute, "make"), run(20*time.Minute, "make"), run(15*time.Minute, "make")}, warden.Allow, ""},
		{"allow only after the build", bash("make deploy"), []warden.AuditRecord{run(time.Minute, "make build")}, warden.Allow, "deploy-after-build"},
		{"without the build the allow does not apply", bash("make deploy"), nil, warden.Allow, ""},
	} {
		d := e.DecideSession(c.call, &engine.Session{History: c.hist, Now: now})
		if d.Decision != c.want || d.Rule != c.rule {
			t.Errorf("%s: %s %s %q (%s), want %s %q", c.name, d.Decision, d.Code, d.Rule, d.Reason, c.want, c.rule)
		}
	}
	// Rate: 50 calls in the last minute make the next one ask.
	var many []warden.AuditRecord
	for i := 0; i < 50; i++ {
		many = append(many, run(time.Second, "ls"))
	}
	if d := e.DecideSession(bash("pwd"), &engine.Session{History: many, Now: now}); d.Decision != warden.Ask || d.Rule != "slow-down" {
		t.Errorf("rate: %+v", d)
	}
	// explain shows the history it used.
	tr := e.Explain(editCall, &engine.Session{History: []warden.AuditRecord{read("src/b.go")}, Now: now})
	found := false
	for _, ch := range tr.Checks {
		if ch.Name == "sequence" && strings.Contains(ch.Detail, "read-before-edit") && strings.Contains(ch.Detail, "no earlier") {
			found = true
		}
	}
	if !found {
		t.Errorf("explain does not show the history: %+v", tr.Checks)
	}
	if !e.NeedsHistory() || e.HistoryWindow() != 10*time.Minute {
		t.Errorf("NeedsHistory %v, window %s", e.NeedsHistory(), e.HistoryWindow())
	}
}
