package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// governedPolicy is the project policy of the governed runs. default deny
// makes the compound check meaningful: `git status && rm -rf keepme` is
// allowed only if the whole line were taken as one `git status *` command.
const governedPolicy = `version: 1
mode: enforce
default: deny
rules:
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: Deleting files is blocked in this project.
    suggestion: Move the file into the attic folder instead, or ask the user.
  - id: allow-touch
    effect: allow
    tool: shell
    command: ["touch *"]
  - id: allow-workspace-files
    effect: allow
    path: ["**"]
  - id: allow-git-status
    effect: allow
    tool: shell
    command: ["git status *"]
  - id: warn-echo
    effect: warn
    tool: shell
    command: ["echo *"]
    message: echo is for debugging only; write results to a file instead.
`

// sessionStartMarker is part of the governance text the hook injects at
// session start.
const sessionStartMarker = "WARDEN GOVERNANCE"

// governedHost describes how one host is set up and run.
type governedHost struct {
	name  string // warden's host name (warden init NAME)
	spec  hostSpec
	tool  string // the shell tool's name in the hook (and so in the audit trail)
	shell func(cmd string) scripted.ToolCall
	setup func(e *env)
	run   func(e *env, bin, prompt string) result
}

// governedHostNamed is the governed host of that name.
func governedHostNamed(t *testing.T, name string) governedHost {
	t.Helper()
	for _, h := range governedHosts {
		if h.name == name {
			return h
		}
	}
	t.Fatalf("no governed host %s", name)
	return governedHost{}
}

var governedHosts = []governedHost{
	{
		name: "claude", spec: claudeSpec, tool: "Bash",
		shell: func(cmd string) scripted.ToolCall {
			return scripted.ToolCall{Name: "Bash", Args: map[string]any{"command": cmd, "description": "run " + cmd}}
		},
		setup: func(e *env) {},
		run:   func(e *env, bin, prompt string) result { return e.runClaude(bin, prompt) },
	},
	{
		name: "codex", spec: codexSpec, tool: "Bash",
		shell: func(cmd string) scripted.ToolCall {
			return scripted.ToolCall{Name: "exec_command", Args: map[string]any{"cmd": cmd}}
		},
		setup: func(e *env) { e.setupCodex() },
		run:   func(e *env, bin, prompt string) result { return e.runCodex(bin, prompt) },
	},
	{
		name: "gemini", spec: geminiSpec, tool: "run_shell_command",
		shell: func(cmd string) scripted.ToolCall {
			return scripted.ToolCall{Name: "run_shell_command", Args: map[string]any{"command": cmd, "description": "run " + cmd}}
		},
		setup: func(e *env) { e.setupGemini() },
		run:   func(e *env, bin, prompt string) result { return e.runGemini(bin, prompt) },
	},
	{
		name: "opencode", spec: opencodeSpec, tool: "bash",
		shell: func(cmd string) scripted.ToolCall {
			return scripted.ToolCall{Name: "bash", Args: map[string]any{"command": cmd, "description": "run " + cmd}}
		},
		setup: func(e *env) { e.setupOpenCode() },
		run:   func(e *env, bin, prompt string) result { return e.runOpenCode(bin, prompt) },
	},
}

// TestGoverned runs each real host, wired by `warden init HOST`, through
// one scripted conversation: a denied command, an allowed command, a
// compound bypass attempt, then a final answer.
//
// Each host runs twice: with `warden hook HOST` (a warden process per
// event), and with `warden-hook HOST`, which a resident hookd answers;
// both must govern alike.
func TestGoverned(t *testing.T) {
	t.Parallel()
	for _, h := range governedHosts {
		for _, client := range []string{"warden", "warden-hook"} {
			name := h.name
			if client == "warden-hook" {
				name += "/warden-hook"
			}
			t.Run(name, func(t *testing.T) { testGoverned(t, h, client) })
		}
	}
}

func testGoverned(t *testing.T, h governedHost, client string) {
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "deny", Match: scripted.MinToolResults(0), Text: "Removing the file.",
			ToolCalls: []scripted.ToolCall{h.shell("rm victim.txt")}},
		scripted.Turn{Name: "allow", Match: scripted.MinToolResults(1),
			ToolCalls: []scripted.ToolCall{h.shell("touch made-by-agent.txt")}},
		scripted.Turn{Name: "compound", Match: scripted.MinToolResults(2),
			ToolCalls: []scripted.ToolCall{h.shell("git status && rm -rf keepme")}},
		scripted.Turn{Name: "warn", Match: scripted.MinToolResults(3),
			ToolCalls: []scripted.ToolCall{h.shell("echo hello")}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(4), Text: "All done."},
	)
	e.write("warden.yaml", governedPolicy)
	e.write("victim.txt", "precious\n")
	e.write("keepme/data.txt", "precious too\n")
	h.setup(e)
	hookBin, sock := wardenBin, ""
	if client == "warden-hook" {
		hookBin, sock = wardenHookBin, e.useHookd()
	}
	if out, err := e.warden("init", h.name, "--bin", hookBin); err != nil {
		t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
	}

	r := h.run(e, bin, "Tidy up this project.")
	if client == "warden" {
		captureTools(t, h.name, e.model.Requests())
	}
	if sock != "" {
		// The first event started hookd, which answered the rest.
		if out, err := e.warden("hookd", "status", "--socket", sock); err != nil {
			t.Errorf("no hookd runs on %s after the session: %v %s", sock, err, out)
		}
	}
	failed := false
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			failed = true
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if failed || testing.Verbose() {
			e.dump(r)
		}
	}()
	check(r.err == nil, "%s did not finish: %v", h.name, r.err)
	check(len(e.model.Unplayed()) == 0, "turns never played: %v", e.model.Unplayed())

	// 1. The denied command did not run, and the model got warden's reason.
	check(e.exists("victim.txt"), "victim.txt was deleted: the denied command ran")
	res := e.lastResults()
	check(len(res) >= 4, "the model got %d tool results, want 4", len(res))
	if len(res) >= 1 {
		check(strings.Contains(res[0].Text, "Deleting files is blocked in this project.") &&
			strings.Contains(res[0].Text, "no-rm") &&
			strings.Contains(res[0].Text, "Move the file into the attic folder"),
			"the model did not get warden's reason and suggestion for `rm victim.txt`; it got:\n%s", res[0].Text)
	}
	// 2. The allowed command ran.
	check(e.exists("made-by-agent.txt"), "made-by-agent.txt is missing: the allowed command did not run")
	if len(res) >= 2 {
		check(!strings.Contains(res[1].Text, "warden BLOCKED"), "the allowed command was blocked:\n%s", res[1].Text)
	}
	// 3. The compound bypass was denied as a whole.
	check(e.exists("keepme/data.txt"), "keepme/ was deleted: the compound bypass ran")
	if len(res) >= 3 {
		check(strings.Contains(res[2].Text, "warden BLOCKED: RULE_DENY") && strings.Contains(res[2].Text, "no-rm"),
			"the model did not get warden's deny for `git status && rm -rf keepme`; it got:\n%s", res[2].Text)
	}
	// 4. The session-start text reached the model's context.
	check(e.modelSaw(sessionStartMarker) && e.modelSaw("DENY no-rm: Deleting files is blocked"),
		"no request to the model contained the session-start governance text (%q with the policy's rules)", sessionStartMarker)
	// 5. A warned call ran, and the model was told about the rule it broke.
	if len(res) >= 4 {
		check(strings.Contains(res[3].Text, "hello"), "the warned `echo hello` did not run: %s", res[3].Text)
	}
	check(e.modelSaw("echo is for debugging only"), "the model never saw the warn rule's message")
	// 6. The audit trail holds every call, in order, with its decision.
	recs := e.audit()
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s %s %s", r.Host, r.Tool, r.Decision, r.Rule))
		check(r.Session != "" && r.Session == recs[0].Session, "audit record %d has session %q, want the run's one session %q", r.ID, r.Session, recs[0].Session)
	}
	want := []string{
		h.name + " " + h.tool + " deny no-rm",
		h.name + " " + h.tool + " allow allow-touch",
		h.name + " " + h.tool + " deny no-rm",
		h.name + " " + h.tool + " allow warn-echo",
	}
	check(strings.Join(got, "\n") == strings.Join(want, "\n"), "audit trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
}

// TestBrokenPolicyFailsClosed runs Claude Code with a policy that does not
// load: the tool call must be denied with warden's reason, not run, and the
// run must end: at Stop the failure gives the model no context, so Claude
// Code does not ask the model again and again (it did, 379 requests in
// 90 s, when warden answered Stop with "BLOCKED: POLICY_ERROR" context).
func TestBrokenPolicyFailsClosed(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "call", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("touch should-not-exist.txt")}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(1), Text: "Stopped."},
	)
	e.write("warden.yaml", governedPolicy)
	if out, err := e.warden("init", h.name, "--bin", wardenBin); err != nil {
		t.Fatalf("warden init: %v\n%s", err, out)
	}
	e.write("warden.yaml", "version: 1\nrules:\n  - id: x\n    effect: maybe\n")
	r := h.run(e, bin, "Make a file.")
	if r.err != nil {
		e.dump(r)
		t.Fatalf("claude: %v", r.err)
	}
	if _, err := os.Stat(filepath.Join(e.project, "should-not-exist.txt")); err == nil {
		e.dump(r)
		t.Fatal("the call ran although the policy does not load (fail open)")
	}
	res := e.lastResults()
	if len(res) != 1 || !strings.Contains(res[0].Text, "POLICY_ERROR") || !strings.Contains(res[0].Text, "warden.yaml") {
		e.dump(r)
		t.Fatalf("the model did not get a POLICY_ERROR deny naming warden.yaml: %+v", res)
	}
	// One request for the call, one for the final answer, and a few the
	// host makes on its own (a title, a quota probe): not one per stop.
	main := 0
	for _, q := range e.model.Requests() {
		if q.HasTools() {
			main++
		}
	}
	if main > 3 {
		e.dump(r)
		t.Errorf("%d model requests with tools for one call and one answer: the Stop hook made Claude Code go on", main)
	}
}
