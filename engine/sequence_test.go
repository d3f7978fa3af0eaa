package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
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
	timed := func(cmd string, timeout float64) warden.ToolCall {
		return warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": cmd, "timeout": timeout}}
	}
	runTimed := func(ago time.Duration, cmd string, timeout float64) warden.AuditRecord {
		return rec(ago, "Bash", map[string]any{"command": cmd, "timeout": timeout}, warden.Allow)
	}
	type H = []warden.AuditRecord
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
		// Arguments that are not text (a timeout) are compared as the audit
		// trail keeps them; another argument makes another call.
		{"a loop with a number argument", timed("make", 600), H{runTimed(3*time.Minute, "make", 600), runTimed(2*time.Minute, "make", 600), runTimed(time.Minute, "make", 600)}, warden.Deny, "no-loops"},
		{"another number is another call", timed("make", 600), H{runTimed(3*time.Minute, "make", 300), runTimed(2*time.Minute, "make", 600), runTimed(time.Minute, "make", 600)}, warden.Allow, ""},
		{"one more argument is another call", timed("make", 600), H{run(3*time.Minute, "make"), run(2*time.Minute, "make"), run(time.Minute, "make")}, warden.Allow, ""},
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

const outcomePolicy = `version: 1
default: {safe: allow, destructive: allow}
rules:
  - id: push-after-passing-tests
    effect: deny
    tool: shell
    command: "git push *"
    after:
      command: "go test *"
      ok: true
      since: {tool: [edit, write]}
    message: The tests have not passed since your last edit.
    suggestion: Run go test ./..., fix what fails, and push when it passes.
  - id: release-after-green-build
    effect: ask
    tool: shell
    command: "make release"
    after: {command: "make build", ok: true}
  - id: failing-loop
    effect: deny
    tool: shell
    repeat: {failures: 3}
    message: This command failed three times in a row; running it again will fail the same way.
    suggestion: Read the last error, change something, or ask the user.
`

// TestSequenceOutcomes: after.ok counts only an earlier call that
// succeeded (unknown does not), since: resets it, and repeat.failures stops
// the same call failing N times in a row.
func TestSequenceOutcomes(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, outcomePolicy)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	run := func(ago time.Duration, cmd, outcome string) warden.AuditRecord {
		return warden.AuditRecord{Time: now.Add(-ago), Tool: "Bash", Args: map[string]any{"command": cmd},
			Decision: warden.Allow, Mode: "enforce", Outcome: outcome}
	}
	denied := func(ago time.Duration, cmd string) warden.AuditRecord {
		r := run(ago, cmd, "")
		r.Decision = warden.Deny
		return r
	}
	edit := func(ago time.Duration) warden.AuditRecord {
		return warden.AuditRecord{Time: now.Add(-ago), Tool: "Edit", Args: map[string]any{"file_path": "src/a.go", "old_string": "a", "new_string": "b"},
			Decision: warden.Allow, Mode: "enforce", Outcome: warden.OutcomeOK}
	}
	ok, fail := warden.OutcomeOK, warden.OutcomeFail
	push := bash("git push origin main")
	type H = []warden.AuditRecord
	for _, c := range []struct {
		name string
		call warden.ToolCall
		hist H
		want warden.Effect
		rule string
	}{
		{"push after passing tests", push, H{edit(5 * time.Minute), run(time.Minute, "go test ./...", ok)}, warden.Allow, ""},
		{"push after failing tests", push, H{edit(5 * time.Minute), run(time.Minute, "go test ./...", fail)}, warden.Deny, "push-after-passing-tests"},
		{"push after tests of unknown outcome", push, H{edit(5 * time.Minute), run(time.Minute, "go test ./...", "")}, warden.Deny, "push-after-passing-tests"},
		{"push before any test", push, H{edit(time.Minute)}, warden.Deny, "push-after-passing-tests"},
		{"a pass, then an edit, resets", push, H{run(5*time.Minute, "go test ./...", ok), edit(time.Minute)}, warden.Deny, "push-after-passing-tests"},
		{"a pass after a failure since the edit", push, H{edit(9 * time.Minute), run(5*time.Minute, "go test ./...", fail), run(time.Minute, "go test ./...", ok)}, warden.Allow, ""},
		{"a pass before the edit and a failure after it", push, H{run(9*time.Minute, "go test ./...", ok), edit(5 * time.Minute), run(time.Minute, "go test ./...", fail)}, warden.Deny, "push-after-passing-tests"},
		{"ask before a green build", bash("make release"), H{run(time.Minute, "make build", fail)}, warden.Ask, "release-after-green-build"},
		{"no ask after a green build", bash("make release"), H{run(time.Minute, "make build", ok)}, warden.Allow, ""},
		{"three failures in a row", bash("go build ./..."), H{run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", fail), run(time.Minute, "go build ./...", fail)}, warden.Deny, "failing-loop"},
		{"two failures are not a loop", bash("go build ./..."), H{run(2*time.Minute, "go build ./...", fail), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"a success ends the row", bash("go build ./..."), H{run(4*time.Minute, "go build ./...", fail), run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", ok), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"an unknown outcome ends the row", bash("go build ./..."), H{run(4*time.Minute, "go build ./...", fail), run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", ""), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"other calls in between do not end the row", bash("go build ./..."), H{run(5*time.Minute, "go build ./...", fail), edit(4 * time.Minute), run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "ls", ok), run(time.Minute, "go build ./...", fail)}, warden.Deny, "failing-loop"},
		{"denied repeats do not count", bash("go build ./..."), H{run(3*time.Minute, "go build ./...", fail), denied(2*time.Minute, "go build ./..."), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"failures of another command do not count", bash("go build ./..."), H{run(3*time.Minute, "go vet ./...", fail), run(2*time.Minute, "go vet ./...", fail), run(time.Minute, "go vet ./...", fail)}, warden.Allow, ""},
	} {
		d := e.DecideSession(c.call, &engine.Session{History: c.hist, Now: now})
		if d.Decision != c.want || d.Rule != c.rule {
			t.Errorf("%s: %s %s %q (%s), want %s %q", c.name, d.Decision, d.Code, d.Rule, d.Reason, c.want, c.rule)
		}
	}
	// The loop's deny carries the rule's guidance.
	loop := H{run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", fail), run(time.Minute, "go build ./...", fail)}
	if d := e.DecideSession(bash("go build ./..."), &engine.Session{History: loop, Now: now}); !strings.Contains(d.Reason, "failed three times in a row") ||
		!strings.Contains(d.Suggestion, "Read the last error") {
		t.Errorf("loop guidance: %q / %q", d.Reason, d.Suggestion)
	}
	// explain says what the latest test run did, and counts the row.
	checks := func(call warden.ToolCall, h H) string {
		var b strings.Builder
		for _, c := range e.Explain(call, &engine.Session{History: h, Now: now}).Checks {
			b.WriteString(c.Detail + "\n")
		}
		return b.String()
	}
	if got := checks(push, H{edit(5 * time.Minute), run(time.Minute, "go test ./...", fail)}); !strings.Contains(got, "that succeeded since the last") || !strings.Contains(got, ") failed") {
		t.Errorf("explain after a failing test:\n%s", got)
	}
	if got := checks(push, H{edit(5 * time.Minute), run(time.Minute, "go test ./...", "")}); !strings.Contains(got, "no outcome the host reported") {
		t.Errorf("explain after a test of unknown outcome:\n%s", got)
	}
	if got := checks(bash("go build ./..."), loop); !strings.Contains(got, "failed 3 time(s) in a row (limit 3)") {
		t.Errorf("explain of the loop:\n%s", got)
	}
}

// TestSequenceOutcomeErrors: ok: false and a repeat with both count and
// failures are refused, naming the field.
func TestSequenceOutcomeErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ rule, want string }{
		{`{id: x, effect: ask, tool: shell, after: {command: "go test *", ok: false}}`, ".after.ok: only ok: true"},
		{`{id: x, effect: ask, tool: shell, repeat: {count: 2, failures: 2, within: 1m}}`, "both count and failures"},
		{`{id: x, effect: ask, tool: shell, rate: {failures: 2}}`, `.rate.failures: unknown key "failures"`},
		{`{id: x, effect: ask, tool: shell, repeat: {within: 1m}}`, "needs a count (with within) or failures"},
	} {
		_, err := policy.LoadBytes("/p/warden.yaml", []byte("version: 1\nrules:\n  - "+c.rule+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.rule, err, c.want)
		}
	}
}
