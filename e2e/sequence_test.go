package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/scripted"
)

// TestClaudeLoopStopped: a model that repeats a failing command is stopped
// by a repeat: rule on the real Claude Code, and the model gets the loop
// guidance.
func TestClaudeLoopStopped(t *testing.T) {
	t.Parallel()
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
	e.initHost("claude")
	r := e.runClaude(bin, "List the file.")
	fail := e.played("claude", r)
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

// TestClaudeFailingLoopStopped: on the real Claude Code, a command that
// fails (PostToolUseFailure) is recorded as failed on its own call's audit
// record (tool_use_id), and a repeat: {failures: 2} rule stops the model's
// third try of it with the loop guidance; a command that succeeded in
// between is not part of the row. The model changing its description, the
// line's spacing, the timeout and a true && before it does not make it
// another call.
func TestClaudeFailingLoopStopped(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "ok-1", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("ls warden.yaml")}},
		// The model changes its description, the line's spacing and the
		// timeout at every try: the same failing call all the same.
		scripted.Turn{Name: "try-1", Match: scripted.MinToolResults(1), ToolCalls: []scripted.ToolCall{{Name: "Bash", Args: map[string]any{"command": "ls no-such-file", "description": "list the file"}}}},
		scripted.Turn{Name: "try-2", Match: scripted.MinToolResults(2), ToolCalls: []scripted.ToolCall{{Name: "Bash", Args: map[string]any{"command": "ls  no-such-file ", "description": "try again", "timeout": 60000}}}},
		scripted.Turn{Name: "try-3", Match: scripted.MinToolResults(3), ToolCalls: []scripted.ToolCall{{Name: "Bash", Args: map[string]any{"command": "true && ls no-such-file", "description": "one more time"}}}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(4), Text: "I will stop and ask."},
	)
	e.write("warden.yaml", `version: 1
default: allow
rules:
  - id: stop-failing-loop
    effect: deny
    tool: shell
    repeat: {failures: 2}
    message: This exact command failed twice in a row; running it again will fail the same way.
    suggestion: Read the last error and fix its cause, or ask the user.
`)
	e.initHost("claude")
	r := e.runClaude(bin, "List the file.")
	fail := e.played("claude", r)
	res := e.lastResults()
	if len(res) < 4 || !strings.Contains(res[3].Text, "failed twice in a row") || !strings.Contains(res[3].Text, "fix its cause") {
		fail("the third try did not get the loop guidance: %+v", res)
	}
	var got []string
	for _, a := range e.audit() {
		got = append(got, string(a.Decision)+" "+a.Rule+" "+a.Outcome)
		if a.ToolUse == "" {
			fail("record %d has no tool_use id", a.ID)
		}
	}
	if strings.Join(got, ",") != "allow  ok,allow  fail,allow  fail,deny stop-failing-loop " {
		fail("audit: %q", got)
	}
}

// TestHaltStopsRunningSessions: `warden halt` given while the real Claude
// Code is running stops its next call; a project-wide halt stops a Codex
// run's first call too; `warden resume` lets calls through again.
func TestHaltStopsRunningSessions(t *testing.T) {
	t.Parallel()
	claude, codex := governedHosts[0], governedHosts[1]
	cbin := requireHost(t, claude.spec)
	xbin := requireHost(t, codex.spec)
	var e *env
	var once sync.Once
	var haltOut string
	halt := func(r *scripted.Request) bool {
		if !scripted.MinToolResults(1)(r) {
			return false
		}
		once.Do(func() { haltOut, _ = e.warden("halt", "--message", "Stop: the staging database is being restored.") })
		return true
	}
	e = newEnv(t,
		scripted.Turn{Name: "first", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{claude.shell("touch one.txt")}},
		scripted.Turn{Name: "second", Match: scripted.All(halt, scripted.Not(scripted.MinToolResults(2))), ToolCalls: []scripted.ToolCall{claude.shell("touch two.txt")}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(2), Text: "Stopped."},
	)
	e.write("warden.yaml", "version: 1\ndefault: allow\n")
	e.initHost("claude")
	r := e.runClaude(cbin, "Make two files.")
	fail := e.played("claude", r)
	if !strings.Contains(haltOut, "halted") || !e.exists("one.txt") || e.exists("two.txt") {
		fail("halt %q; one.txt %v, two.txt %v (want the second call stopped)", haltOut, e.exists("one.txt"), e.exists("two.txt"))
	}
	res := e.lastResults()
	if len(res) < 2 || !strings.Contains(res[1].Text, "HALTED") || !strings.Contains(res[1].Text, "staging database") {
		fail("the model was not told of the halt: %+v", res)
	}
	if out, err := e.warden("state"); err != nil || !strings.Contains(out, "HALTED: every session") {
		fail("warden state does not show the halt: %v %s", err, out)
	}

	// The same project halt stops a Codex run in the project.
	e.model.Add(
		scripted.Turn{Name: "codex-call", Match: scripted.All(scripted.MinToolResults(0), scripted.Contains("codex-marker"), scripted.Not(scripted.MinToolResults(1))), ToolCalls: []scripted.ToolCall{codex.shell("touch three.txt")}},
		scripted.Turn{Name: "codex-final", Match: scripted.All(scripted.Contains("codex-marker"), scripted.MinToolResults(1)), Text: "Stopped."},
	)
	codex.setup(e)
	e.initHost("codex")
	fail = e.played("codex", codex.run(e, xbin, "codex-marker: make a file"))
	if e.exists("three.txt") {
		fail("three.txt exists: the halted project ran Codex's call")
	}
	if out, err := e.warden("resume"); err != nil || !strings.Contains(out, "resumed") {
		fail("resume: %v %s", err, out)
	}
	var codes []string
	for _, a := range e.audit() {
		codes = append(codes, string(a.Code))
	}
	if strings.Join(codes, ",") != "DEFAULT,HALTED,HALTED" {
		fail("audit codes: %v", codes)
	}
}

// TestHaltStopsMCPProxyAndOtherHosts: a project-wide `warden halt` denies a
// call through `warden mcp proxy` (driven by the real MCP inspector, in
// front of the real filesystem server) and the hook calls of Gemini CLI and
// OpenCode, with the HALTED code and the message; after `warden resume`, a
// halt of one proxy session leaves another session's call through.
func TestHaltStopsMCPProxyAndOtherHosts(t *testing.T) {
	t.Parallel()
	e := newMCPProxyEnv(t)
	doc := filepath.Join(e.project, "docs", "a.txt")
	hookCall := func(host string, in map[string]any) string {
		t.Helper()
		data, _ := json.Marshal(in)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, wardenBin, "hook", host)
		cmd.Dir, cmd.Env, cmd.Stdin = e.project, e.vars, bytes.NewReader(data)
		out, err := cmd.Output()
		if ctx.Err() != nil {
			t.Fatalf("warden hook %s did not finish in time", host)
		}
		t.Logf("warden hook %s: %v\n%s", host, err, out)
		return string(out)
	}
	gemini := map[string]any{"session_id": "g1", "cwd": e.project, "hook_event_name": "BeforeTool",
		"tool_name": "run_shell_command", "tool_input": map[string]any{"command": "touch gemini.txt"}}
	opencode := map[string]any{"event": "tool.execute.before", "session_id": "o1", "directory": e.project,
		"tool": "bash", "call_id": "call-1", "args": map[string]any{"command": "touch opencode.txt"}}

	if out, code := e.call("reader", "m1", "read_text_file", "path="+doc); code != 0 || !strings.Contains(out, "hello from docs") {
		t.Fatalf("before the halt: read_text_file exit %d", code)
	}
	if out, err := e.warden("halt", "--message", "Stop: the staging database is being restored."); err != nil {
		t.Fatalf("warden halt: %v\n%s", err, out)
	}
	out, code := e.call("reader", "m1", "read_text_file", "path="+doc)
	if code != 5 || !strings.Contains(out, "HALTED") || !strings.Contains(out, "staging database") || strings.Contains(out, "hello from docs") {
		t.Errorf("MCP proxy call under a project halt: exit %d, want 5 and HALTED with the message", code)
	}
	for host, in := range map[string]map[string]any{"gemini": gemini, "opencode": opencode} {
		if out := hookCall(host, in); !strings.Contains(out, `"deny"`) || !strings.Contains(out, "HALTED") || !strings.Contains(out, "staging database") {
			t.Errorf("%s hook call under a project halt: %s, want a HALTED deny with the message", host, out)
		}
	}
	if out, err := e.warden("resume"); err != nil {
		t.Fatalf("warden resume: %v\n%s", err, out)
	}

	// A session's halt stops that proxy session only.
	if out, err := e.warden("halt", "--session", "m1", "--message", "m1 is looping."); err != nil {
		t.Fatalf("warden halt --session: %v\n%s", err, out)
	}
	if out, code := e.call("reader", "m1", "read_text_file", "path="+doc); code != 5 || !strings.Contains(out, "m1 is looping") {
		t.Errorf("halted session m1: exit %d, want 5 and its message", code)
	}
	if out, code := e.call("reader", "m2", "read_text_file", "path="+doc); code != 0 || !strings.Contains(out, "hello from docs") {
		t.Errorf("session m2 beside the halted m1: exit %d", code)
	}

	var got []string
	starts := 0
	for _, r := range e.audit() {
		if r.Tool == "warden_mcp_server_start" {
			starts++ // each proxy run records its server's start (confined or not)
			continue
		}
		got = append(got, r.Host+" "+string(r.Code))
	}
	if starts != 4 {
		t.Errorf("the proxy's four runs recorded %d server starts, want 4", starts)
	}
	want := "mcp DEFAULT,mcp HALTED,gemini HALTED,opencode HALTED,mcp HALTED,mcp DEFAULT"
	gotS := strings.Join(got, ",")
	// The two hook calls run in map order.
	if gotS != want && gotS != strings.Replace(want, "gemini HALTED,opencode HALTED", "opencode HALTED,gemini HALTED", 1) {
		t.Errorf("audit: %s\nwant %s", gotS, want)
	}
}
