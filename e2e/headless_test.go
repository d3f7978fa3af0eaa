package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
)

// headlessPolicy asks before any touch; files in the project are allowed.
const headlessPolicy = `version: 1
default: deny
rules:
  - id: ask-touch
    effect: ask
    tool: shell
    command: ["touch *"]
    message: Creating files needs the user's approval.
    suggestion: Wait for the user's answer.
  - id: files
    effect: allow
    path: ["**"]
`

// headlessHost is a host run headless: each run is a new session.
type headlessHost struct {
	name  string
	spec  hostSpec
	shell func(cmd string) scripted.ToolCall
	setup func(e *env, bin string)
	run   func(e *env, bin, prompt string) result
}

var headlessHosts = []headlessHost{
	{
		name: "claude", spec: claudeSpec, shell: governedHosts[0].shell,
		setup: func(e *env, bin string) {},
		run:   func(e *env, bin, prompt string) result { return e.runClaude(bin, prompt) },
	},
	{
		name: "codex", spec: codexSpec, shell: governedHosts[1].shell,
		setup: func(e *env, bin string) {
			e.setupCodexAsUser()
			e.pathWith("codex", bin)
		},
		run: func(e *env, bin, prompt string) result { return e.runCodexAsUser(bin, prompt) },
	},
	{
		name: "gemini", spec: geminiSpec, shell: governedHosts[2].shell,
		setup: func(e *env, bin string) { e.setupGemini() },
		run:   func(e *env, bin, prompt string) result { return e.runGemini(bin, prompt) },
	},
	{
		name: "opencode", spec: opencodeSpec, shell: governedHosts[3].shell,
		setup: func(e *env, bin string) { e.setupOpenCode() },
		run:   func(e *env, bin, prompt string) result { return e.runOpenCode(bin, prompt) },
	},
}

// pathWith puts a link named name to bin first on the sandbox's PATH.
func (e *env) pathWith(name, bin string) {
	e.t.Helper()
	dir := filepath.Join(e.root, "bin")
	mustMkdir(e.t, dir)
	if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
		e.t.Fatal(err)
	}
	for i, v := range e.vars {
		if p, ok := strings.CutPrefix(v, "PATH="); ok {
			e.vars[i] = "PATH=" + dir + string(os.PathListSeparator) + p
		}
	}
}

// shellCmd runs a command line as a user types it in the project folder,
// with warden on PATH.
func (e *env) shellCmd(line string) (string, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = e.project
	for _, v := range e.vars {
		if p, ok := strings.CutPrefix(v, "PATH="); ok {
			v = "PATH=" + filepath.Dir(wardenBin) + string(os.PathListSeparator) + p
		}
		cmd.Env = append(cmd.Env, v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runCalls runs the host once (a new session) with a script that makes
// the calls one after the other, and returns the tool results the model
// got in this run, in order.
func (e *env) runCalls(h headlessHost, bin string, cmds ...string) []scripted.ToolResult {
	e.t.Helper()
	before := len(e.model.Requests())
	for i, c := range cmds {
		e.model.Add(scripted.Turn{Name: "call " + c, Match: scripted.All(scripted.HasTools, scripted.MinToolResults(i)),
			ToolCalls: []scripted.ToolCall{h.shell(c)}})
	}
	e.model.Add(scripted.Turn{Name: "final", Match: scripted.All(scripted.HasTools, scripted.MinToolResults(len(cmds))), Text: "Done."})
	r := h.run(e, bin, "Do the task.")
	var best []scripted.ToolResult
	for _, q := range e.model.Requests()[before:] {
		if tr := q.ToolResults(); len(tr) >= len(best) {
			best = tr
		}
	}
	for i := range best {
		best[i].Text = unwrapJSON(best[i].Text)
	}
	if r.err != nil || len(best) != len(cmds) || len(e.model.Unplayed()) > 0 {
		e.dump(r)
		e.t.Fatalf("run of %q: err=%v, %d tool results, unplayed turns %v", cmds, r.err, len(best), e.model.Unplayed())
	}
	return best
}

// unwrapJSON returns the text a model reads in a tool result that is a
// JSON object (Gemini CLI's {"error": "..."}): its string values.
func unwrapJSON(s string) string {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return s
	}
	var parts []string
	for _, v := range m {
		if t, ok := v.(string); ok {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

var (
	printedApprove = regexp.MustCompile(`warden approvals approve (a-[0-9a-f]+) --(once|session|always)`)
	printedReject  = regexp.MustCompile(`warden approvals reject (a-[0-9a-f]+) --message "why not"`)
)

// printed returns the answer command of the given kind exactly as the
// model was told it, and the approval id.
func printed(t *testing.T, text, kind string) (line, id string) {
	t.Helper()
	if kind == "reject" {
		m := printedReject.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("the model was not told how to reject:\n%s", text)
		}
		return m[0], m[1]
	}
	for _, m := range printedApprove.FindAllStringSubmatch(text, -1) {
		if m[2] == kind {
			return m[0], m[1]
		}
	}
	t.Fatalf("the model was not told `warden approvals approve ID --%s`:\n%s", kind, text)
	return "", ""
}

// TestHeadlessApprovals runs Claude Code (-p), Codex (exec, wired by
// `warden init codex` alone: no hook-trust bypass), Gemini CLI (-p) and
// OpenCode (run): each run is a new session. Calls that ask are queued; a human answers
// each with the command the model was told, exactly as printed; the same
// call in a new run then gets what the answer says: --once lets it through
// once, --session lets it through once in the new session (and says so),
// --always lets it through from then on, and a rejection denies it once
// with the human's message, which the model receives.
func TestHeadlessApprovals(t *testing.T) {
	t.Parallel()
	for _, h := range headlessHosts {
		t.Run(h.name, func(t *testing.T) {
			bin := requireHost(t, h.spec)
			e := newEnv(t)
			e.useHookd()
			e.write("warden.yaml", headlessPolicy)
			h.setup(e, bin)
			out, err := e.warden("init", h.name, "--bin", wardenHookBin)
			if err != nil {
				t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
			}
			if h.name == "codex" && !strings.Contains(out, "trusted warden's") {
				t.Errorf("warden init codex did not record the hook trust:\n%s", out)
			}
			answer := func(line string) string {
				out, err := e.shellCmd(line)
				if err != nil {
					t.Fatalf("%s: %v\n%s", line, err, out)
				}
				return out
			}

			// One run asks four calls; the human answers each with the
			// command the model was told; a second run makes each call
			// twice. (Two runs, not one a kind: a host's run is its
			// dearest part.)
			kinds := []string{"once", "session", "always", "reject"}
			var first []string
			for _, k := range kinds {
				first = append(first, "touch "+k+".txt")
			}
			res := e.runCalls(h, bin, first...)
			lines, ids := map[string]string{}, map[string]string{}
			for i, k := range kinds {
				if e.exists(k+".txt") || !strings.Contains(res[i].Text, "waiting for a human") {
					t.Fatalf("touch %s.txt was not held for approval: %s", k, res[i].Text)
				}
				lines[k], ids[k] = printed(t, res[i].Text, k)
			}
			const msg = "Use the fixture file instead."
			answer(lines["once"])
			// --session: covers the session that asked; the new run's
			// identical call goes through once, and the human is told so.
			if out := answer(lines["session"]); !strings.Contains(out, "new session") {
				t.Errorf("approve --session does not say what it covers for a new session:\n%s", out)
			}
			answer(lines["always"])
			answer(strings.Replace(lines["reject"], `"why not"`, `"`+msg+`"`, 1))
			var second []string
			for _, c := range first {
				second = append(second, c, c)
			}
			res = e.runCalls(h, bin, second...)

			// --once: the next identical call, from a new run, goes
			// through; the one after asks again.
			if !e.exists("once.txt") || strings.Contains(res[0].Text, "waiting") || !strings.Contains(res[1].Text, "waiting for a human") {
				t.Errorf("--once: file %v, results %q / %q", e.exists("once.txt"), res[0].Text, res[1].Text)
			}
			if !auditHas(e, "touch once.txt", warden.Allow, "approval:"+ids["once"]) {
				t.Errorf("--once: no allow by approval:%s in the audit trail", ids["once"])
			}
			if !e.exists("session.txt") || !strings.Contains(res[3].Text, "waiting for a human") {
				t.Errorf("--session: file %v, results %q / %q", e.exists("session.txt"), res[2].Text, res[3].Text)
			}
			if !auditHas(e, "touch session.txt", warden.Allow, "approval:"+ids["session"]) {
				t.Errorf("--session: no allow by approval:%s in the audit trail", ids["session"])
			}
			// --always: every identical call from now on.
			if !e.exists("always.txt") || strings.Contains(res[4].Text+res[5].Text, "waiting") {
				t.Errorf("--always: file %v, results %q / %q", e.exists("always.txt"), res[4].Text, res[5].Text)
			}
			if !auditHas(e, "touch always.txt", warden.Allow, "grant:g-") {
				t.Errorf("--always: no allow by grant:ID in the audit trail")
			}
			// reject with a message: the next identical call is denied with
			// it, once.
			if e.exists("reject.txt") || !strings.Contains(res[6].Text, msg) || !strings.Contains(res[6].Text, "APPROVAL_REJECTED") {
				t.Errorf("reject: file %v, result %q", e.exists("reject.txt"), res[6].Text)
			}
			if !strings.Contains(res[7].Text, "waiting for a human") {
				t.Errorf("reject: the rejection reached two calls: %q", res[7].Text)
			}
			if !e.modelSaw(msg) {
				t.Errorf("the model's request log does not show the rejection message")
			}
		})
	}
}

// auditHas reports whether the audit trail has a record of the command
// with the decision and a rule starting with rule.
func auditHas(e *env, command string, d warden.Effect, rule string) bool {
	for _, r := range e.audit() {
		if c, _ := r.Args["command"].(string); strings.Contains(c, command) && r.Decision == d && strings.HasPrefix(r.Rule, rule) {
			return true
		}
	}
	return false
}

// TestCodexInitAlone: a user's Codex, with no trust recorded, wired by
// `warden init codex` alone (no hook-trust bypass flag): Codex runs
// warden's hooks, so a write to a protected file is blocked and recorded,
// the session is tracked, and Codex reports no error item (the SessionEnd
// timeout is within the 3 s Codex allows).
func TestCodexInitAlone(t *testing.T) {
	t.Parallel()
	h := headlessHosts[1]
	bin := requireHost(t, h.spec)
	e := newEnv(t)
	e.write("warden.yaml", "version: 1\ndefault: allow\nprotected: [\"**/.env\"]\n")
	h.setup(e, bin)
	if out, err := e.warden("init", "codex", "--bin", wardenBin); err != nil {
		t.Fatalf("warden init codex: %v\n%s", err, out)
	}
	res := e.runCalls(h, bin, "echo hi > .env")
	if e.exists(".env") || !strings.Contains(res[0].Text, "PROTECTED_PATH") {
		t.Errorf(".env exists: %v; the model got: %s", e.exists(".env"), res[0].Text)
	}
	recs := e.audit()
	if len(recs) != 1 || recs[0].Code != warden.CodeProtectedPath || recs[0].Session == "" {
		t.Errorf("audit trail %+v, want one PROTECTED_PATH deny with a session", recs)
	}
	// Codex reports a hook it could not run as an error item in its JSONL.
	r := h.run(e, bin, "Say done.")
	if hookErr := regexp.MustCompile(`"type":"error","message":"[^"]*(?i:hook|timeout)`); hookErr.MatchString(r.stdout) {
		t.Errorf("codex reported an error:\n%s\n%s", tail(r.stdout, 3000), tail(r.stderr, 2000))
	}
}
