package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/internal/scripted"
)

// releasePolicy confines every allowed shell command and asks for python
// one-liners: only a grant or a human's approval lets one through, and
// what they release must run confined as well.
const releasePolicy = `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
protected: [".git/**"]
sandbox: {shell: on, network: deny}
rules:
  - id: ask-python
    effect: ask
    tool: shell
    command: ["python3 *"]
    message: Python one-liners need the user's approval.
`

// releaseAttack opens .git/hooks/pre-commit for writing through a path
// computed at run time: the engine cannot see the write, only the sandbox
// can stop it.
const releaseAttack = `python3 -c "import os; open(os.path.join('.git', 'hoo' + 'ks', 'pre-commit'), 'w').write('pwned')"`

// releaseEnv sets up a host's project for a released call: the policy, a
// git repository with a pre-commit hook, and the host's own settings. It
// returns the hook's path.
func releaseEnv(t *testing.T, h governedHost) (*env, string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	e := newEnv(t,
		scripted.Turn{Name: "attack", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell(releaseAttack)}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(1), Text: "Done."},
	)
	e.write("warden.yaml", releasePolicy)
	if out, err := exec.Command("git", "init", "-q", e.project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	hook := filepath.Join(e.project, ".git", "hooks", "pre-commit")
	if err := exectest.WriteFile(hook, []byte(hookBody), 0o755); err != nil {
		t.Fatal(err)
	}
	h.setup(e)
	return e, hook
}

// checkReleased checks what a released attack left: the hook's bytes as
// they were, the model shown the sandbox's refusal (so the command ran,
// and ran confined) and told why, and one audit record of the shell call,
// allowed by rule (grant:ID or approval:ID) and recorded as run confined.
func checkReleased(t *testing.T, e *env, h governedHost, hook, rule string, fail func(string, ...any)) warden.AuditRecord {
	t.Helper()
	if got, err := os.ReadFile(hook); err != nil || string(got) != hookBody {
		fail("the released command changed .git/hooks/pre-commit: %q %v", got, err)
	}
	res := e.lastResults()
	if len(res) < 1 {
		fail("the model got no tool result")
	}
	// Python's own error (the model-facing note names the messages too, and
	// Gemini CLI puts it into the tool result).
	if !hasAny(res[0].Text, "[Errno 30] Read-only file system", "[Errno 13] Permission denied") {
		fail("the model was not shown python's error from the sandbox's refusal of the write (the command did not run, or ran unconfined); it got:\n%s", res[0].Text)
	}
	if !e.modelSaw("runs confined by warden's sandbox") {
		fail("the model was never told that the released command runs confined")
	}
	var shells []warden.AuditRecord
	for _, rec := range e.audit() {
		if rec.Tool == h.tool || (h.name == "codex" && rec.Tool == "exec_command") {
			shells = append(shells, rec)
		}
	}
	if len(shells) != 1 {
		fail("audit: %d shell calls recorded, want 1: %+v", len(shells), shells)
	}
	rec := shells[0]
	if rec.Decision != warden.Allow || rec.Rule != rule {
		fail("audit: the call was %s by %q (%s), want allow by %s", rec.Decision, rec.Rule, rec.Reason, rule)
	}
	if rec.Sandbox == nil || !rec.Sandbox.Ran || rec.Sandbox.Enforced == "" {
		fail("audit: the record of the released call does not say that it ran confined: %+v", rec.Sandbox)
	}
	if cmd := commandOf(rec.Args); cmd != releaseAttack {
		fail("audit: the record holds %q, want the model's command %q", cmd, releaseAttack)
	}
	return rec
}

func commandOf(args map[string]any) string {
	for _, k := range []string{"command", "cmd"} {
		if s, ok := args[k].(string); ok {
			return s
		}
	}
	return ""
}

// releaseClient is a host and the hook it is wired with: `warden hook
// HOST` on each host, and warden-hook (a resident hookd decides) on Claude
// Code.
type releaseClient struct {
	name string
	h    governedHost
	init func(e *env, flags ...string)
}

func releaseClients() []releaseClient {
	initWith := func(bin string, hookd bool) func(e *env, h governedHost, flags ...string) {
		return func(e *env, h governedHost, flags ...string) {
			e.t.Helper()
			if hookd {
				e.useHookd()
			}
			if out, err := e.warden(append([]string{"init", h.name, "--bin", bin}, flags...)...); err != nil {
				e.t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
			}
		}
	}
	var out []releaseClient
	add := func(name string, h governedHost, in func(e *env, h governedHost, flags ...string)) {
		out = append(out, releaseClient{name: name, h: h, init: func(e *env, flags ...string) { in(e, h, flags...) }})
	}
	for _, h := range governedHosts { // claude -p, codex exec, gemini -p, opencode run
		add(h.name, h, initWith(wardenBin, false))
	}
	add("claude/warden-hook", governedHosts[0], initWith(wardenHookBin, true))
	return out
}

var grantID = regexp.MustCompile(`\bg-[0-9a-f]+\b`)

// TestSandboxReleaseGrant: the policy asks for python one-liners; a
// grant for the exact line (`warden grants add shell --command LINE`,
// made before the run) lets the scripted model's call through on each
// real host, and the released call runs confined: the write to
// .git/hooks/pre-commit, which the engine cannot see, is refused by the
// sandbox, the hook's bytes are unchanged, the model is told why, and the
// audit record names the grant and says the call ran confined.
func TestSandboxReleaseGrant(t *testing.T) {
	t.Parallel()
	for _, c := range releaseClients() {
		h := c.h
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := requireHost(t, h.spec)
			e, hook := releaseEnv(t, h)
			c.init(e)
			out, err := e.warden("grants", "add", "shell", "--command", releaseAttack)
			g := grantID.FindString(out)
			if err != nil || g == "" {
				t.Fatalf("warden grants add: %v\n%s", err, out)
			}
			r := h.run(e, bin, "Set up the project.")
			fail := e.played(h.name, r)
			if testing.Verbose() {
				e.dump(r)
			}
			checkReleased(t, e, h, hook, "grant:"+g, fail)
		})
	}
}

// approveFirst approves, as a human at another terminal would, the first
// approval that waits in e's store, once (with the approve command's
// extra arguments), and returns its id and the command's output through
// the returned function (which stops the polling).
func approveFirst(e *env, extra ...string) func() (id, out string) {
	var wg sync.WaitGroup
	var id, approveOut string
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			out, err := e.warden("approvals", "ls", "--json")
			if err != nil {
				continue
			}
			var list []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			}
			if json.Unmarshal([]byte(out), &list) != nil || len(list) == 0 || list[0].Status != "pending" {
				continue
			}
			id = list[0].ID
			approveOut, _ = e.warden(append([]string{"approvals", "approve", id, "--once"}, extra...)...)
			return
		}
	}()
	return func() (string, string) {
		close(stop)
		wg.Wait()
		return id, approveOut
	}
}

// TestSandboxReleaseApproval: headless (nobody at the host's terminal),
// wired with `warden init HOST --wait 60s`, the ask for the python
// one-liner queues a warden approval and the hook waits; a human approves
// it with `warden approvals approve ID --once` from another process, and
// the call it releases runs confined: the hook's bytes are unchanged, the
// model is told why the write failed, and the audit record names the
// approval and says the call ran confined.
func TestSandboxReleaseApproval(t *testing.T) {
	t.Parallel()
	for _, c := range releaseClients() {
		h := c.h
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := requireHost(t, h.spec)
			e, hook := releaseEnv(t, h)
			c.init(e, "--wait", "60s")
			done := approveFirst(e)
			r := h.run(e, bin, "Set up the project.")
			id, approveOut := done()
			fail := e.played(h.name, r)
			if testing.Verbose() {
				e.dump(r)
			}
			if id == "" {
				fail("no approval was queued for the ask")
			}
			rec := checkReleased(t, e, h, hook, "approval:"+id, fail)
			if rec.Approval != id {
				fail("audit: the record names approval %q, want %q (approve said: %s)", rec.Approval, id, strings.TrimSpace(approveOut))
			}
		})
	}
}

// TestSandboxReleaseGeminiInteractive: Gemini CLI interactive in a terminal
// (tmux), wired by `warden init gemini`: the hook sees a host that can
// prompt, answers the python one-liner's ask with Gemini CLI's own
// confirmation and the input rewrite (hookSpecificOutput.tool_input), and
// the user accepts in Gemini CLI's dialog. What runs is the rewritten
// line: the write to .git/hooks/pre-commit is refused by the sandbox, and
// the audit record (an ask the host's prompt answered) says the call ran
// confined.
func TestSandboxReleaseGeminiInteractive(t *testing.T) {
	t.Parallel()
	h := governedHosts[2]
	entry := requireHost(t, h.spec)
	requireTmux(t)
	e, hook := releaseEnv(t, h)
	e.initHost(h.name)
	vars := []string{"GOOGLE_GEMINI_BASE_URL=" + e.model.URL, "GEMINI_API_KEY=test", "GEMINI_CLI_TRUST_WORKSPACE=true"}
	for _, v := range e.vars {
		if !strings.HasPrefix(v, "TERM=") { // tmux sets the terminal's TERM
			vars = append(vars, v)
		}
	}
	term := startTerminal(t, e.project, vars, "node", entry, "-m", "gemini-2.5-flash", "--yolo", "-i", "Set up the project.")
	t.Cleanup(func() {
		if t.Failed() {
			e.dump(result{stdout: term.screen()})
		}
	})
	s := term.waitFor("Gemini CLI's confirmation of the python one-liner", 60*time.Second, e.unsettled,
		"Python one-liners need the user's approval.", "Allow execution of", "1. Allow once")
	t.Logf("the confirmation:\n%s", s)
	// Gemini CLI merges the rewrite into the call before its dialog: the
	// user is shown, and accepts, the line that runs confined.
	if !strings.Contains(s, "warden-sandbox") {
		t.Errorf("the confirmation does not show the rewritten line (warden-sandbox ...):\n%s", s)
	}
	noWardenApproval(t, e, "Gemini CLI")
	term.send("Enter") // "1. Allow once"
	term.waitFor("the model's final answer", 45*time.Second, nil, "Done.")
	fail := func(format string, args ...any) { t.Helper(); t.Fatalf(format, args...) }
	if got, err := os.ReadFile(hook); err != nil || string(got) != hookBody {
		fail("the command the user accepted changed .git/hooks/pre-commit: %q %v", got, err)
	}
	res := e.lastResults()
	if len(res) != 1 || !hasAny(res[0].Text, "[Errno 30] Read-only file system", "[Errno 13] Permission denied") {
		fail("the model was not shown python's error from the sandbox's refusal; it got %+v", res)
	}
	var recs []warden.AuditRecord
	for _, r := range e.audit() {
		if r.Tool == h.tool {
			recs = append(recs, r)
		}
	}
	if len(recs) != 1 || recs[0].Decision != warden.Ask || recs[0].Rule != "ask-python" || recs[0].Approval != "" {
		fail("audit: %+v, want one ask by ask-python that the host's prompt answered", recs)
	}
	if sb := recs[0].Sandbox; sb == nil || !sb.Ran || sb.Enforced == "" {
		fail("audit: the record of the asked call does not say that it ran confined: %+v", sb)
	}
}

// TestSandboxReleaseClaudeInteractive: Claude Code interactive in a
// terminal (tmux), wired by `warden init claude`: the hook answers the
// python one-liner's ask with permissionDecision "ask" and updatedInput;
// Claude Code (in its default auto mode) shows its own permission dialog
// with the rewritten line, the user accepts, and that line runs: the
// write to .git/hooks/pre-commit is refused by the sandbox, and the audit
// record (an ask the host's prompt answered) says the call ran confined.
func TestSandboxReleaseClaudeInteractive(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	requireTmux(t)
	e, hook := releaseEnv(t, h)
	e.initHost(h.name)
	// Claude Code's first-run screens, answered ahead: onboarding done,
	// the project trusted, the test API key accepted, warden's MCP server
	// (.mcp.json) left out (its dialog is not what this test is about).
	e.writeJSON(filepath.Join(e.home, ".claude.json"), map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 5,
		"customApiKeyResponses": map[string]any{"approved": []string{"test"}, "rejected": []string{}},
		"projects": map[string]any{e.project: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true,
			"disabledMcpjsonServers": []string{"warden"}}},
	})
	vars := e.claudeVars()
	for _, v := range e.vars {
		if !strings.HasPrefix(v, "TERM=") {
			vars = append(vars, v)
		}
	}
	term := startTerminal(t, e.project, vars, bin, "Set up the project.")
	t.Cleanup(func() {
		if t.Failed() {
			e.dump(result{stdout: term.screen()})
		}
	})
	s := term.waitFor("Claude Code's permission dialog for the python one-liner", 60*time.Second, e.unsettled, "Do you want to proceed?")
	t.Logf("the dialog:\n%s", s)
	// Claude Code shows the rewritten line in its dialog: the user accepts
	// the line that runs confined.
	if !strings.Contains(s, "warden-sandbox") {
		t.Errorf("the dialog does not show the rewritten line (warden-sandbox ...):\n%s", s)
	}
	noWardenApproval(t, e, "Claude Code")
	term.send("Enter") // "1. Yes"
	term.waitFor("the model's final answer", 45*time.Second, nil, "Done.")
	// Let the turn's Stop hook finish and leave Claude Code, so that no
	// hook still writes the store when the test's folder is removed
	// (Claude Code's screen names a running Stop hook; its status line
	// varies between runs, so nothing else of it is waited for).
	deadline := time.Now().Add(30 * time.Second)
	for !term.exited() && time.Now().Before(deadline) {
		if !strings.Contains(term.screen(), "running Stop hook") {
			term.send("C-c")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got, err := os.ReadFile(hook); err != nil || string(got) != hookBody {
		t.Fatalf("the command the user accepted changed .git/hooks/pre-commit: %q %v", got, err)
	}
	res := e.lastResults()
	if len(res) != 1 || !hasAny(res[0].Text, "[Errno 30] Read-only file system", "[Errno 13] Permission denied") {
		t.Fatalf("the model was not shown python's error from the sandbox's refusal; it got %+v", res)
	}
	var recs []warden.AuditRecord
	for _, r := range e.audit() {
		if r.Tool == h.tool {
			recs = append(recs, r)
		}
	}
	if len(recs) != 1 || recs[0].Decision != warden.Ask || recs[0].Rule != "ask-python" || recs[0].Approval != "" {
		t.Fatalf("audit: %+v, want one ask by ask-python that the host's prompt answered", recs)
	}
	if sb := recs[0].Sandbox; sb == nil || !sb.Ran || sb.Enforced == "" {
		t.Fatalf("audit: the record of the asked call does not say that it ran confined: %+v", sb)
	}
}

// unsettled is a waitFor check for a call the host must ask its user
// about: a tool result the model got means it was settled without them.
func (e *env) unsettled() string {
	if res := e.lastResults(); len(res) > 0 {
		return fmt.Sprintf("the call was settled without asking the user; the model got %+v", res)
	}
	return ""
}

// noWardenApproval checks that warden queued no approval of its own for
// a call whose host asks its user itself.
func noWardenApproval(t *testing.T, e *env, host string) {
	t.Helper()
	if out, err := e.warden("approvals", "ls", "--json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("warden approvals ls: %v\n%s\nwant [] (%s asks its user itself)", err, out, host)
	}
}
