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
	described := func(cmd, what string) warden.ToolCall {
		return warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": cmd, "description": what}}
	}
	runDescribed := func(ago time.Duration, cmd, what string) warden.AuditRecord {
		return rec(ago, "Bash", map[string]any{"command": cmd, "description": what}, warden.Allow)
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
		// A call is what it does: the host's timeout, description or
		// background flag, the line's spacing, its shell tool's name and a
		// no-op before it do not make it another call.
		{"a loop with a number argument", timed("make", 600), H{runTimed(3*time.Minute, "make", 600), runTimed(2*time.Minute, "make", 600), runTimed(time.Minute, "make", 600)}, warden.Deny, "no-loops"},
		{"another timeout is the same call", timed("make", 600), H{runTimed(3*time.Minute, "make", 300), runTimed(2*time.Minute, "make", 600), runTimed(time.Minute, "make", 600)}, warden.Deny, "no-loops"},
		{"a timeout added is the same call", timed("make", 600), H{run(3*time.Minute, "make"), run(2*time.Minute, "make"), run(time.Minute, "make")}, warden.Deny, "no-loops"},
		{"another description is the same call", described("./deploy.sh prod", "deploy, third try"), H{runDescribed(3*time.Minute, "./deploy.sh prod", "deploy"), runDescribed(2*time.Minute, "./deploy.sh prod", "deploy again"), runDescribed(time.Minute, "./deploy.sh prod", "retry the deploy")}, warden.Deny, "no-loops"},
		{"spaces do not make another call", bash("./deploy.sh  prod "), H{run(3*time.Minute, "./deploy.sh prod"), run(2*time.Minute, " ./deploy.sh   prod"), run(time.Minute, "./deploy.sh prod\n")}, warden.Deny, "no-loops"},
		{"in the background it is the same call", warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "make", "run_in_background": true}}, H{run(3*time.Minute, "make"), run(2*time.Minute, "make"), run(time.Minute, "make")}, warden.Deny, "no-loops"},
		{"another host's shell tool is the same call", warden.ToolCall{Tool: "run_shell_command", Args: map[string]any{"command": "make", "description": "build"}}, H{run(3*time.Minute, "make"), rec(2*time.Minute, "exec_command", map[string]any{"cmd": "make"}, warden.Allow), run(time.Minute, "make")}, warden.Deny, "no-loops"},
		{"true before it is the same call", bash("true && make"), H{run(3*time.Minute, "make"), run(2*time.Minute, ": ; make"), run(time.Minute, "make")}, warden.Deny, "no-loops"},
		{"a flag spelled otherwise is the same call", bash("rm -fr build"), H{run(3*time.Minute, "rm -rf build"), run(2*time.Minute, "rm -r -f build"), run(time.Minute, "rm --recursive --force build")}, warden.Deny, "no-loops"},
		{"another operand is another call", bash("make test"), H{run(3*time.Minute, "make build"), run(2*time.Minute, "make test"), run(time.Minute, "make test")}, warden.Allow, ""},
		{"twice is not a loop", bash("make"), []warden.AuditRecord{run(2*time.Minute, "make"), run(time.Minute, "make")}, warden.Allow, ""},
		{"old repeats are outside the window", bash("make"), []warden.AuditRecord{run(30*time.Minute, "make"), run(20*time.Minute, "make"), run(15*time.Minute, "make")}, warden.Allow, ""},
		{"allow only after the build", bash("make deploy"), []warden.AuditRecord{run(time.Minute, "make build")}, warden.Allow, "deploy-after-build"},
		{"without the build the allow does not apply", bash("make deploy"), nil, warden.Allow, ""},
	} {
		d := e.Decide(c.call, &engine.Session{History: c.hist, Now: now}).Decision
		if d.Decision != c.want || d.Rule != c.rule {
			t.Errorf("%s: %s %s %q (%s), want %s %q", c.name, d.Decision, d.Code, d.Rule, d.Reason, c.want, c.rule)
		}
	}
	// Rate: 50 calls in the last minute make the next one ask.
	var many []warden.AuditRecord
	for i := 0; i < 50; i++ {
		many = append(many, run(time.Second, "ls"))
	}
	if d := e.Decide(bash("pwd"), &engine.Session{History: many, Now: now}).Decision; d.Decision != warden.Ask || d.Rule != "slow-down" {
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
		// ok counts a run only when its status is the line's, and only
		// options that run the tests.
		{"go test || true is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "go test ./x || true", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test; true is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "go test ./...; true", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test | tail is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "go test ./... | tail -1", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test -n is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "go test -n ./...", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test -list is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "go test -list . ./...", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test -c is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "go test -c -o /dev/null ./x", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test -run ^$ is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "go test -run '^$' ./...", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test --help is no pass", push, H{edit(5 * time.Minute), run(time.Minute, "! go test ./...", ok)}, warden.Deny, "push-after-passing-tests"},
		{"go test && echo is a pass", push, H{edit(5 * time.Minute), run(time.Minute, "go vet ./... && go test ./... && echo ok", ok)}, warden.Allow, ""},
		{"cd && go test is a pass", push, H{edit(5 * time.Minute), run(time.Minute, "cd src && go test -v ./...", ok)}, warden.Allow, ""},
		{"a subshell ending in go test is a pass", push, H{edit(5 * time.Minute), run(time.Minute, "(cd src; go test -run TestX ./...)", ok)}, warden.Allow, ""},
		{"make -n build is no green build", bash("make release"), H{run(time.Minute, "make -n build", ok)}, warden.Ask, "release-after-green-build"},
		{"three failures in a row", bash("go build ./..."), H{run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", fail), run(time.Minute, "go build ./...", fail)}, warden.Deny, "failing-loop"},
		{"two failures are not a loop", bash("go build ./..."), H{run(2*time.Minute, "go build ./...", fail), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"a success ends the row", bash("go build ./..."), H{run(4*time.Minute, "go build ./...", fail), run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", ok), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"an unknown outcome ends the row", bash("go build ./..."), H{run(4*time.Minute, "go build ./...", fail), run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", ""), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"other calls in between do not end the row", bash("go build ./..."), H{run(5*time.Minute, "go build ./...", fail), edit(4 * time.Minute), run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "ls", ok), run(time.Minute, "go build ./...", fail)}, warden.Deny, "failing-loop"},
		{"denied repeats do not count", bash("go build ./..."), H{run(3*time.Minute, "go build ./...", fail), denied(2*time.Minute, "go build ./..."), run(time.Minute, "go build ./...", fail)}, warden.Allow, ""},
		{"failures of another command do not count", bash("go build ./..."), H{run(3*time.Minute, "go vet ./...", fail), run(2*time.Minute, "go vet ./...", fail), run(time.Minute, "go vet ./...", fail)}, warden.Allow, ""},
	} {
		d := e.Decide(c.call, &engine.Session{History: c.hist, Now: now}).Decision
		if d.Decision != c.want || d.Rule != c.rule {
			t.Errorf("%s: %s %s %q (%s), want %s %q", c.name, d.Decision, d.Code, d.Rule, d.Reason, c.want, c.rule)
		}
	}
	// The loop's deny carries the rule's guidance.
	loop := H{run(3*time.Minute, "go build ./...", fail), run(2*time.Minute, "go build ./...", fail), run(time.Minute, "go build ./...", fail)}
	if d := e.Decide(bash("go build ./..."), &engine.Session{History: loop, Now: now}).Decision; !strings.Contains(d.Reason, "failed three times in a row") ||
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
