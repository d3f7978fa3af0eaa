package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/doctor"
	"github.com/warden-run/warden/internal/hooktest"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sqlite"
)

// The helpers every test of the hook layer shares.
var (
	project    = hooktest.Project
	claudePre  = hooktest.ClaudePre
	permission = hooktest.Permission
	storeOf    = hooktest.StoreOf
)

const hookTestPolicy = `version: 1
default: deny
rules:
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: Deleting files is blocked.
    suggestion: Move the file to the attic instead.
  - id: allow-ls
    effect: allow
    tool: shell
    command: ["ls *"]
  - id: ask-push
    effect: ask
    tool: shell
    command: ["git push *"]
    message: Pushing needs the user's approval.
    suggestion: Ask the user to push.
`

// runHookCmd runs `warden hook host` with stdin and returns the exit code,
// stdout decoded as JSON (the test fails if it is not) and stderr.
func runHookCmd(t *testing.T, stdin string, args ...string) (int, map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"hook"}, args...), strings.NewReader(stdin), &out, &errb)
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("hook %v answered no JSON (exit %d): %v\nstdout: %s\nstderr: %s", args, code, err, out.String(), errb.String())
	}
	return code, m, errb.String()
}

func TestHookClaudeDecides(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	for _, tc := range []struct {
		cmd, want, reason string
	}{
		{"rm -rf build", "deny", "Deleting files is blocked."},
		{"ls -la && rm x", "deny", "no-rm"},
		{"ls -la", "allow", "allow-ls"},
		{"git push origin main", "ask", "Pushing needs the user's approval."},
		{"make", "deny", "DEFAULT"},
	} {
		code, m, _ := runHookCmd(t, claudePre(cwd, tc.cmd), "claude")
		d, r := permission(m)
		if code != ExitOK || d != tc.want || !strings.Contains(r, tc.reason) {
			t.Errorf("%q: exit %d, %s %q; want %s containing %q", tc.cmd, code, d, r, tc.want, tc.reason)
		}
	}
}

// TestHookAskWithoutPrompt: Codex and OpenCode cannot prompt, so an ask
// must not come back as an allow or an ask they would ignore.
func TestHookAskWithoutPrompt(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	_, m, _ := runHookCmd(t, claudePre(cwd, "git push origin main"), "codex")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "is waiting for a human") || !strings.Contains(r, "warden approvals approve") {
		t.Errorf("codex ask: %s %q", d, r)
	}
	js, _ := json.Marshal(map[string]any{"event": "tool.execute.before", "session_id": "ses_1", "directory": cwd,
		"tool": "bash", "args": map[string]any{"command": "git push"}})
	_, m, _ = runHookCmd(t, string(js), "opencode")
	if m["decision"] != "deny" || !strings.Contains(m["message"].(string), "Pushing needs") {
		t.Errorf("opencode ask: %v", m)
	}
}

func TestHookGemini(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	js, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": cwd, "hook_event_name": "BeforeTool",
		"tool_name": "run_shell_command", "tool_input": map[string]any{"command": "rm -r target"}})
	_, m, _ := runHookCmd(t, string(js), "gemini")
	if m["decision"] != "deny" || !strings.Contains(m["reason"].(string), "Move the file to the attic") {
		t.Errorf("gemini deny: %v", m)
	}
	js, _ = json.Marshal(map[string]any{"session_id": "s", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
	_, m, _ = runHookCmd(t, string(js), "gemini")
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	if ctx, _ := hs["additionalContext"].(string); !strings.Contains(ctx, "WARDEN GOVERNANCE") {
		t.Errorf("gemini session start: %v", m)
	}
}

// TestHookFailsClosed: every way of not being able to decide is a deny in
// the host's JSON, never an allow and never silence.
func TestHookFailsClosed(t *testing.T) {
	t.Parallel()
	noPolicy := project(t, "")
	broken := project(t, "version: 1\nrules:\n  - id: x\n    effect: maybe\n")
	for _, tc := range []struct {
		name, stdin string
		code        int
		reason      string
		errCode     string
	}{
		{"no policy", claudePre(noPolicy, "ls"), ExitOK, "no warden.yaml found", "POLICY_ERROR"},
		{"broken policy", claudePre(broken, "ls"), ExitOK, "warden.yaml", "POLICY_ERROR"},
		// Bad input from the host is not a policy problem, and says so.
		{"garbage input", "not json", ExitDeny, "not the expected JSON", "BAD_INPUT"},
		{"empty input", "", ExitDeny, "the input is empty", "BAD_INPUT"},
		{"over the limit", `{"session_id":"` + strings.Repeat("x", 32<<20) + `"}`, ExitDeny, "over warden's limit of 32 MiB", "BAD_INPUT"},
	} {
		code, m, stderr := runHookCmd(t, tc.stdin, "claude")
		d, r := permission(m)
		if tc.errCode == "BAD_INPUT" && strings.Contains(r, "Fix the warden policy") {
			t.Errorf("%s: the answer blames the policy: %q", tc.name, r)
		}
		if code != tc.code || d != "deny" || !strings.Contains(r, tc.reason) || !strings.Contains(r, tc.errCode) {
			t.Errorf("%s: exit %d, %s %q (stderr %q)", tc.name, code, d, r, stderr)
		}
	}
}

func TestHookUnknownEventAnswersEmptyJSON(t *testing.T) {
	noPolicy := project(t, "")
	code, m, _ := runHookCmd(t, `{"session_id":"s","cwd":"`+noPolicy+`","hook_event_name":"Notification","message":"hi"}`, "claude")
	if code != ExitOK || len(m) != 0 {
		t.Errorf("Notification: exit %d, %v", code, m)
	}
}

func TestHookSubagentRole(t *testing.T) {
	cwd := project(t, hookTestPolicy+`roles:
  reviewer:
    tools: [read]
`)
	js, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "agent_id": "a1", "agent_type": "reviewer"})
	_, m, _ := runHookCmd(t, string(js), "claude")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "ROLE_TOOL_DENIED") {
		t.Errorf("reviewer subagent running Bash: %s %q", d, r)
	}
	// A host's own subagent type that is no policy role is not restricted.
	js, _ = json.Marshal(map[string]any{"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "agent_id": "a2", "agent_type": "general-purpose"})
	_, m, _ = runHookCmd(t, string(js), "claude")
	if d, _ := permission(m); d != "allow" {
		t.Errorf("general-purpose subagent running ls: %s", d)
	}
}

func claudeEvent(t *testing.T, fields map[string]any) string {
	t.Helper()
	js, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func additionalContext(m map[string]any) string {
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	s, _ := hs["additionalContext"].(string)
	return s
}

// TestHookSessionLifecycle walks one Claude Code session through the hook:
// start, prompt, a warned call and its guidance, compaction, a subagent.
func TestHookSessionLifecycle(t *testing.T) {
	t.Parallel()
	cwd := project(t, hookTestPolicy+`  - id: warn-make
    effect: warn
    tool: shell
    command: ["make *"]
    message: make rebuilds everything; prefer make test.
roles:
  reviewer:
    description: reads and reports
    tools: [read, shell]
    max_depth: 2
`)
	ev := func(name string, extra map[string]any) map[string]any {
		m := map[string]any{"session_id": "sess-1", "cwd": cwd, "hook_event_name": name, "transcript_path": "/t"}
		for k, v := range extra {
			m[k] = v
		}
		_, out, _ := runHookCmd(t, claudeEvent(t, m), "claude")
		return out
	}
	if ctx := additionalContext(ev("SessionStart", map[string]any{"source": "startup"})); !strings.Contains(ctx, "WARDEN GOVERNANCE") || !strings.Contains(ctx, "DENY no-rm") {
		t.Errorf("session start context:\n%s", ctx)
	}
	if out := ev("UserPromptSubmit", map[string]any{"prompt": "build it"}); additionalContext(out) != "" {
		t.Errorf("governance repeated on the prompt: %v", out)
	}
	pre := ev("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "make all"}, "tool_use_id": "t1"})
	if d, _ := permission(pre); d != "allow" || !strings.Contains(additionalContext(pre), "make rebuilds everything") {
		t.Errorf("warned call: %v", pre)
	}
	post := ev("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "make all"}, "tool_response": map[string]any{"stdout": "ok"}})
	if g := additionalContext(post); !strings.Contains(g, "WARDEN GUIDANCE") || !strings.Contains(g, "make rebuilds everything") {
		t.Errorf("post-tool guidance: %v", post)
	}
	ev("PreCompact", map[string]any{"trigger": "auto"})
	if ctx := additionalContext(ev("SessionStart", map[string]any{"source": "compact"})); !strings.Contains(ctx, "WARDEN REMINDER") {
		t.Errorf("post-compaction context:\n%s", ctx)
	}
	if ctx := additionalContext(ev("SubagentStart", map[string]any{"agent_id": "ag1", "agent_type": "reviewer"})); !strings.Contains(ctx, "reviewer") || !strings.Contains(ctx, "Delegation depth: 1") {
		t.Errorf("subagent start context:\n%s", ctx)
	}
	sub := ev("PreToolUse", map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": cwd + "/x", "content": "x"}, "agent_id": "ag1", "agent_type": "reviewer"})
	if d, r := permission(sub); d != "deny" || !strings.Contains(r, "ROLE_TOOL_DENIED") {
		t.Errorf("reviewer writing: %s %q", d, r)
	}
	ev("SubagentStop", map[string]any{"agent_id": "ag1", "agent_type": "reviewer"})
	if out := ev("SessionEnd", map[string]any{"reason": "other"}); len(out) != 0 {
		t.Errorf("session end answered %v", out)
	}
}

func TestHookStateless(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	_, m, _ := runHookCmd(t, claudePre(cwd, "ls && rm x"), "claude", "--stateless")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "no-rm") {
		t.Errorf("stateless deny: %s %q", d, r)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(cwd)), ".warden")); err == nil {
		t.Errorf("--stateless created the store")
	}
	js, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
	_, m, _ = runHookCmd(t, string(js), "claude", "--stateless")
	if !strings.Contains(additionalContext(m), "WARDEN GOVERNANCE") {
		t.Errorf("stateless session start: %v", m)
	}
}

// TestHookStoreDownDenies: a store that does not answer is a deny, never an
// allow, and the answer comes before the host's hook timeout.
func TestHookStoreDownDenies(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	start := time.Now()
	_, m, _ := runHookCmd(t, claudePre(cwd, "ls"), "claude", "--store", "postgres://warden@127.0.0.1:1/warden?connect_timeout=2", "--timeout", "5s")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "store") {
		t.Errorf("store down: %s %q", d, r)
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Errorf("store down answer took %s", el)
	}
	// A store path that cannot be created.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	_, m, _ = runHookCmd(t, claudePre(cwd, "ls"), "claude", "--store", filepath.Join(blocker, "sub", "w.db"))
	if d, _ := permission(m); d != "deny" {
		t.Errorf("store path blocked: %s", d)
	}
}

func TestHookBadCommandLineDenies(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	code, m, _ := runHookCmd(t, claudePre(cwd, "ls"), "claude", "--no-such-flag")
	if d, r := permission(m); code != ExitDeny || d != "deny" || !strings.Contains(r, "bad command line") {
		t.Errorf("bad flag: exit %d %s %q", code, d, r)
	}
	code, m, _ = runHookCmd(t, claudePre(cwd, "ls"), "cursor")
	if d, r := permission(m); code != ExitDeny || d != "deny" || !strings.Contains(r, "unknown host") {
		t.Errorf("unknown host: exit %d %s %q", code, d, r)
	}
}

// geminiSession sends Gemini CLI events of one session to `warden hook
// gemini` (with extra flags) and reads the session back from the store.
type geminiSession struct {
	t     *testing.T
	cwd   string
	id    string
	flags []string
}

func (g *geminiSession) ev(name string, extra map[string]any) map[string]any {
	g.t.Helper()
	m := map[string]any{"session_id": g.id, "cwd": g.cwd, "hook_event_name": name,
		"transcript_path": "/t.json", "timestamp": "2026-11-21T19:42:04.910Z"}
	for k, v := range extra {
		m[k] = v
	}
	code, out, stderr := runHookCmd(g.t, claudeEvent(g.t, m), append([]string{"gemini"}, g.flags...)...)
	if code != ExitOK {
		g.t.Fatalf("%s: exit %d: %s", name, code, stderr)
	}
	return out
}

// model sends a BeforeModel event for a request with these messages
// (alternately user and model) and returns the answer.
func (g *geminiSession) model(msgs ...string) map[string]any {
	g.t.Helper()
	var ms []map[string]any
	for i, c := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "model"
		}
		ms = append(ms, map[string]any{"role": role, "content": c})
	}
	return g.ev("BeforeModel", map[string]any{"llm_request": map[string]any{"model": "gemini-2.5-flash", "messages": ms,
		"config": map[string]any{"temperature": 1, "topP": 0.95, "topK": 64}}})
}

func (g *geminiSession) session() warden.Session {
	g.t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(filepath.Dir(filepath.Dir(g.cwd)), ".warden", "warden.db"))
	if err != nil {
		g.t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Session(ctx, g.id)
	if err != nil {
		g.t.Fatalf("session %s: %v", g.id, err)
	}
	return s
}

// addedText returns the text a BeforeModel answer adds to the request's
// first message (first is the message as sent): "" for an empty answer. An
// answer that changes the request in any other way fails the test.
func addedText(t *testing.T, m map[string]any, first string) string {
	t.Helper()
	if len(m) == 0 {
		return ""
	}
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	lr, _ := hs["llm_request"].(map[string]any)
	msgs, _ := lr["messages"].([]any)
	if hs["hookEventName"] != "BeforeModel" || len(msgs) != 1 || m["decision"] != nil || len(lr) != 1 {
		t.Fatalf("BeforeModel answer %v: want one message in llm_request, nothing else", m)
	}
	msg, _ := msgs[0].(map[string]any)
	content, _ := msg["content"].(string)
	rest, ok := strings.CutPrefix(content, first+"\n\n<hook_context>")
	if msg["role"] != "user" || !ok || !strings.HasSuffix(rest, "</hook_context>") {
		t.Fatalf("BeforeModel answer's message %v: want the first message with a <hook_context> block after it", msg)
	}
	return strings.TrimSuffix(rest, "</hook_context>")
}

const geminiEnv = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"

// TestHookGeminiCompaction walks a headless Gemini CLI session through the
// hook: PreCompress (which Gemini CLI fires before every model turn) is no
// compaction; a main-chat request that lost warden's text is one, and gets
// the reminder, in every request until the next prompt's BeforeAgent puts
// it into the history; a subagent's request is none of warden's business.
func TestHookGeminiCompaction(t *testing.T) {
	t.Parallel()
	g := &geminiSession{t: t, cwd: project(t, hookTestPolicy), id: "gem-1"}
	gov := additionalContext(g.ev("SessionStart", map[string]any{"source": "startup"}))
	if !strings.Contains(gov, "WARDEN GOVERNANCE") {
		t.Fatalf("session start: %q", gov)
	}
	// Headless, the SessionStart text is part of the prompt: it is no part
	// of the user's request.
	prompt := "<hook_context>" + gov + "</hook_context>\n\nplan the work"
	if out := g.ev("BeforeAgent", map[string]any{"prompt": prompt}); len(out) != 0 {
		t.Errorf("first prompt: %v, want nothing (the governance text was given)", out)
	}
	if s := g.session(); s.Intent != "plan the work" {
		t.Errorf("intent %q, want the user's request alone", s.Intent)
	}
	first := geminiEnv + prompt
	for i := 0; i < 3; i++ {
		if out := g.ev("PreCompress", map[string]any{"trigger": "auto"}); len(out) != 0 {
			t.Errorf("PreCompress: %v", out)
		}
		if out := g.model(first, "I will plan.", "Please continue."); len(out) != 0 {
			t.Errorf("a request with the governance text: %v", out)
		}
	}
	if out := g.model("Your task is to find the store.", "Looking."); len(out) != 0 {
		t.Errorf("a subagent's request: %v", out)
	}
	if s := g.session(); s.Compactions != 0 || !s.GovernanceInjected {
		t.Fatalf("no compression yet: compactions %d, governance injected %v", s.Compactions, s.GovernanceInjected)
	}

	// The history was compressed: the summary replaced the first prompt.
	compressed := geminiEnv + "<state_snapshot>planning</state_snapshot>"
	for i := 0; i < 2; i++ {
		r := addedText(t, g.model(compressed, "Got it. Thanks for the additional context!", "Please continue."), compressed)
		if !strings.Contains(r, "WARDEN REMINDER") || !strings.Contains(r, "The user's latest request: plan the work\n") || strings.Contains(r, "hook_context") {
			t.Errorf("request %d after the compression: added %q, want the reminder with the user's request", i+1, r)
		}
		if s := g.session(); s.Compactions != 1 {
			t.Errorf("request %d after the compression: compactions %d, want 1", i+1, s.Compactions)
		}
	}
	if out := g.model("Your task is to find the store.", "Looking."); len(out) != 0 {
		t.Errorf("a subagent's request after the compression: %v", out)
	}
	// The next prompt puts the reminder into the history.
	r := additionalContext(g.ev("BeforeAgent", map[string]any{"prompt": "now write it"}))
	if !strings.Contains(r, "WARDEN REMINDER") || !strings.Contains(r, "The user's latest request: now write it") {
		t.Errorf("the prompt after the compression: %q, want the reminder", r)
	}
	withReminder := compressed + "now write it<hook_context>" + r + "</hook_context>"
	if out := g.model(withReminder); len(out) != 0 {
		t.Errorf("a request with the reminder in its history: %v", out)
	}
	if s := g.session(); s.Compactions != 1 || !s.GovernanceInjected {
		t.Errorf("compactions %d, governance injected %v; want 1, true", s.Compactions, s.GovernanceInjected)
	}
	// A second compression.
	if r := addedText(t, g.model(geminiEnv+"<state_snapshot>written</state_snapshot>", "Got it."), geminiEnv+"<state_snapshot>written</state_snapshot>"); !strings.Contains(r, "WARDEN REMINDER") {
		t.Errorf("after the second compression: %q", r)
	}
	if s := g.session(); s.Compactions != 2 {
		t.Errorf("compactions %d, want 2", s.Compactions)
	}
	// A session warden does not know gets nothing.
	other := &geminiSession{t: t, cwd: g.cwd, id: "gem-unknown"}
	if out := other.model(geminiEnv + "hello"); len(out) != 0 {
		t.Errorf("unknown session: %v", out)
	}
}

// TestHookGeminiFirstRequestNoCompaction: a prompt given on Gemini CLI's
// command line (-i) can reach the model before SessionStart's text reaches
// the history. That first request, which the model has not answered, lost
// nothing: it gets the session-start text and no compaction is recorded.
// A request the model has answered that lacks the text is a compaction.
func TestHookGeminiFirstRequestNoCompaction(t *testing.T) {
	g := &geminiSession{t: t, cwd: project(t, hookTestPolicy), id: "gem-race"}
	if gov := additionalContext(g.ev("SessionStart", map[string]any{"source": "startup"})); !strings.Contains(gov, "WARDEN GOVERNANCE") {
		t.Fatalf("session start: %q", gov)
	}
	first := geminiEnv + "plan the work"
	for i := 0; i < 2; i++ { // a tool call's result adds no message of the model's text
		if r := addedText(t, g.model(first), first); !strings.Contains(r, "WARDEN GOVERNANCE") || strings.Contains(r, "WARDEN REMINDER") {
			t.Errorf("request %d, not yet answered, without the text: added %q, want the session-start text", i+1, r)
		}
		if s := g.session(); s.Compactions != 0 || !s.GovernanceInjected {
			t.Errorf("request %d, not yet answered: compactions %d, governance injected %v; want 0, true", i+1, s.Compactions, s.GovernanceInjected)
		}
	}
	// Answered, and still without the text: the history lost it.
	if r := addedText(t, g.model(first, "I will plan.", "go on"), first); !strings.Contains(r, "WARDEN REMINDER") {
		t.Errorf("an answered request without the text: added %q, want the reminder", r)
	}
	if s := g.session(); s.Compactions != 1 {
		t.Errorf("an answered request without the text: compactions %d, want 1", s.Compactions)
	}
}

// TestHookGeminiResumePrompt: a resumed headless session gets the resume
// note in its prompt; the intent stays the user's text, so resume notes do
// not nest.
func TestHookGeminiResumePrompt(t *testing.T) {
	g := &geminiSession{t: t, cwd: project(t, hookTestPolicy), id: "gem-r"}
	prompt := "first request"
	for i := 0; i < 3; i++ {
		source := "startup"
		if i > 0 {
			source = "resume"
		}
		text := additionalContext(g.ev("SessionStart", map[string]any{"source": source}))
		if strings.Contains(text, "hook_context") {
			t.Fatalf("start %d: the governance text quotes hook text:\n%s", i, text)
		}
		// Gemini CLI escapes < and > in a hook's text.
		wrapped := "<hook_context>" + strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(text) + "</hook_context>\n\n" + prompt
		g.ev("BeforeAgent", map[string]any{"prompt": wrapped})
		if s := g.session(); s.Intent != prompt {
			t.Errorf("start %d: intent %q, want %q", i, s.Intent, prompt)
		}
		prompt = fmt.Sprintf("request %d", i+2)
	}
}

// TestHookGeminiRolePrompt: a role's own prompt from the policy need not
// carry warden's markers; a request that carries it is no compaction.
func TestHookGeminiRolePrompt(t *testing.T) {
	g := &geminiSession{t: t, cwd: project(t, hookTestPolicy+`roles:
  builder:
    description: builds things
    prompt: "Builder rules for {{.Role}}: no deleting.\nAsk before pushing."
    reminder: "Builder reminder: you are still the {{.Role}}.\nLatest request: {{.Intent}}"
`), id: "gem-role", flags: []string{"--role", "builder"}}
	text := additionalContext(g.ev("SessionStart", map[string]any{"source": "startup"}))
	if !strings.HasPrefix(text, "Builder rules for builder") {
		t.Fatalf("session start: %q", text)
	}
	g.ev("BeforeAgent", map[string]any{"prompt": "<hook_context>" + text + "</hook_context>\n\nbuild it"})
	if out := g.model(geminiEnv + "<hook_context>" + text + "</hook_context>\n\nbuild it"); len(out) != 0 {
		t.Errorf("a request with the role's prompt: %v", out)
	}
	if s := g.session(); s.Compactions != 0 {
		t.Errorf("compactions %d, want 0", s.Compactions)
	}
	r := addedText(t, g.model(geminiEnv+"<state_snapshot>x</state_snapshot>", "Got it. Thanks for the additional context!"), geminiEnv+"<state_snapshot>x</state_snapshot>")
	if r != "Builder reminder: you are still the builder.\nLatest request: build it" {
		t.Errorf("after the compression: added %q, want the role's reminder", r)
	}
	if s := g.session(); s.Compactions != 1 {
		t.Errorf("compactions %d, want 1", s.Compactions)
	}
	// The role's reminder in the history is found too.
	if out := g.model(geminiEnv + "<hook_context>" + r + "</hook_context>"); len(out) != 0 {
		t.Errorf("a request with the role's reminder: %v", out)
	}
}

// TestHookGeminiModelStatelessAndFailure: stateless, a main-chat request
// without the governance text gets the session-start text; a failure at
// BeforeModel is a message for the user and never blocks the request.
func TestHookGeminiModelStatelessAndFailure(t *testing.T) {
	g := &geminiSession{t: t, cwd: project(t, hookTestPolicy), id: "gem-s", flags: []string{"--stateless"}}
	if r := addedText(t, g.model(geminiEnv+"<state_snapshot>x</state_snapshot>"), geminiEnv+"<state_snapshot>x</state_snapshot>"); !strings.Contains(r, "WARDEN GOVERNANCE") {
		t.Errorf("stateless, without the governance text: added %q", r)
	}
	if out := g.model(geminiEnv + "## WARDEN GOVERNANCE ..."); len(out) != 0 {
		t.Errorf("stateless, with the governance text: %v", out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(g.cwd)), ".warden")); err == nil {
		t.Errorf("--stateless created the store")
	}

	broken := &geminiSession{t: t, cwd: project(t, ""), id: "gem-f"}
	out := broken.model(geminiEnv + "<state_snapshot>x</state_snapshot>")
	if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "no warden.yaml found") || out["decision"] != nil || out["continue"] != nil {
		t.Errorf("no policy at BeforeModel: %v, want a message only", out)
	}
	// A request with the governance text needs nothing, not even a policy.
	if out := broken.model(geminiEnv + "## WARDEN GOVERNANCE"); len(out) != 0 {
		t.Errorf("no policy, request with the governance text: %v", out)
	}
}

// TestHookRoleUnknown: the operator's --role is not the model's doing.
// Under a policy with roles, a role it does not define is denied
// ROLE_UNKNOWN, with the defined roles named and the setup blamed; under a
// policy without roles, calls are decided as without a role, the model is
// told nothing, and the hook's stderr tells the operator at session start;
// doctor says the same of the wired command.
func TestHookRoleUnknown(t *testing.T) {
	t.Parallel()
	withRoles := project(t, hookTestPolicy+"roles:\n  builder:\n    tools: [shell, read]\n")
	code, m, _ := runHookCmd(t, claudePre(withRoles, "ls -la"), "claude", "--role", "bulider")
	if d, r := permission(m); code != 0 || d != "deny" || !strings.Contains(r, "ROLE_UNKNOWN") || !strings.Contains(r, "its roles are: builder") || !strings.Contains(r, "not something you did") {
		t.Errorf("an undefined role under a policy with roles: exit %d, %s %q", code, d, r)
	}
	without := project(t, hookTestPolicy)
	code, m, stderr := runHookCmd(t, claudePre(without, "ls -la"), "claude", "--role", "builder")
	if d, r := permission(m); code != 0 || d != "allow" || strings.Contains(r, "builder") {
		t.Errorf("a role under a policy without roles: exit %d, %s %q", code, d, r)
	}
	if strings.Contains(stderr, "builder") {
		t.Errorf("stderr before a tool: %q", stderr)
	}
	start := claudeEvent(t, map[string]any{"session_id": "r1", "cwd": without, "hook_event_name": "SessionStart", "source": "startup"})
	if _, _, stderr := runHookCmd(t, start, "claude", "--role", "builder"); !strings.Contains(stderr, "--role builder: warden.yaml defines no roles") {
		t.Errorf("stderr at session start: %q", stderr)
	}
	pol, err := policy.Load(filepath.Join(filepath.Dir(filepath.Dir(withRoles)), "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := doctor.RoleCheck(pol, []string{"warden-hook", "claude", "--role", "bulider"}); err == nil || !strings.Contains(err.Error(), "its roles: builder") {
		t.Errorf("doctor, an undefined role: %v", err)
	}
	if note, err := doctor.RoleCheck(pol, []string{"warden-hook", "claude", "--role=builder"}); err != nil || note != "" {
		t.Errorf("doctor, a defined role: %q %v", note, err)
	}
	pol.Roles = nil
	if note, err := doctor.RoleCheck(pol, []string{"warden-hook", "claude", "--role", "builder"}); err != nil || !strings.Contains(note, "defines no roles") {
		t.Errorf("doctor, a role under a policy without roles: %q %v", note, err)
	}
}
