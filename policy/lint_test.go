package policy_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

// TestLintRuleScope checks the warnings for rules too broad or too narrow, the
// hosts' tool names and text that is not terminal-safe: each at its
// file:line:col, and none for the good forms.
func TestLintRuleScope(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		src       string
		line, col int
		parts     []string
	}{
		// A deny of the whole delegate tool (task "*": deny).
		{"tool-wide deny of task", "version: 1\nrules:\n  - id: no-task\n    effect: deny\n    tool: task\n    message: m\n    suggestion: s\n", 5, 11,
			[]string{"rules[0] (no-task).tool", "blocks every delegation (task)", "subagent_type"}},
		{"tool-wide deny of the delegate kind", "version: 1\nrules:\n  - {id: d, effect: deny, tool: [read, delegate], message: m, suggestion: s}\n", 3, 33,
			[]string{"blocks every delegation (delegate)"}},
		{"tool-wide deny of Claude's Agent", "version: 1\nrules:\n  - {id: d, effect: deny, tool: Agent, message: m, suggestion: s}\n", 3, 33,
			[]string{"blocks every delegation (Agent)"}},
		{"ask on every call", "version: 1\nrules:\n  - id: ask-all\n    effect: ask\n", 3, 5,
			[]string{"this ask matches every call", "ask only for actions that reach external systems"}},
		{"ask on a whole kind", "version: 1\nrules:\n  - {id: a, effect: ask, tool: shell}\n", 3, 5,
			[]string{"this ask matches every shell call"}},
		{"ask on every command", "version: 1\nrules:\n  - {id: a, effect: ask, tool: shell, command: \"*\"}\n", 3, 5,
			[]string{"this ask matches every command"}},
		{"ask on every path", "version: 1\nrules:\n  - {id: a, effect: ask, tool: write, path: \"**\"}\n", 3, 5,
			[]string{"this ask matches every path"}},
		{"OpenCode's bash", "version: 1\nrules:\n  - id: a\n    effect: allow\n    tool: [read, bash]\n    command: \"git status\"\n", 5, 18,
			[]string{"rules[0] (a).tool", "bash (OpenCode)", "does not match Bash (Claude Code)", "kind shell"}},
		{"Claude's Grep", "version: 1\nrules:\n  - {id: a, effect: allow, tool: Grep}\n", 3, 34,
			[]string{"does not match grep (OpenCode)", "kind read"}},
		{"no host's spelling", "version: 1\nrules:\n  - {id: a, effect: allow, tool: BASH, command: ls}\n", 3, 34,
			[]string{"tool BASH is no host's spelling", "Bash (Claude Code) or bash (OpenCode)", "kind shell"}},
		{"a role's tools", "version: 1\nroles:\n  r:\n    tools: [read, task]\n", 4, 19,
			[]string{"roles.r.tools", "task (OpenCode)", "Task (Claude Code)", "kind delegate"}},
		// A slip of the keyboard in a tool name: the rule matched nothing,
		// and a deny so written denied nothing, without a word.
		{"a kind mistyped", "version: 1\nrules:\n  - {id: d, effect: deny, tool: shel, command: \"rm *\", message: m, suggestion: s}\n", 3, 33,
			[]string{"rules[0] (d).tool", "tool shel is no kind and no tool of any host", "did you mean shell?"}},
		{"letters swapped", "version: 1\nrules:\n  - {id: d, effect: deny, tool: [wirte, edit], path: \".env\", message: m, suggestion: s}\n", 3, 34,
			[]string{"tool wirte", "did you mean write?"}},
		{"a host's tool mistyped", "version: 1\nrules:\n  - {id: a, effect: allow, tool: WebFecth}\n", 3, 34,
			[]string{"did you mean WebFetch?"}},
		{"a role's tool mistyped", "version: 1\nroles:\n  r:\n    tools: [raed]\n", 4, 13,
			[]string{"roles.r.tools", "did you mean read?"}},
		{"a sequence rule's tool mistyped", "version: 1\nrules:\n  - id: p\n    effect: ask\n    tool: shell\n    command: \"git push *\"\n    after:\n      command: \"go test *\"\n      since: {tool: [wirte, edit]}\n", 9, 22,
			[]string{"after.since.tool", "did you mean write?"}},
		// Specific denies, as the lint warnings ask for, written as warden patterns.
		{"an option after --", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: [\"rm -- -rf *\"]\n    message: m\n    suggestion: s\n", 6, 14,
			[]string{"rules[0] (d).command", `-rf comes after "--"`}},
		{"wildcard glued to a flag", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: [\"chmod 777*\", \"rm -rf*\"]\n    message: m\n    suggestion: s\n", 6, 14,
			[]string{"rules[0] (d).command", `"rm -rf*": the wildcard is glued to the flag -rf*`, `"rm -rf *"`}},
		{"emoji in a message", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: \"rm -rf *\"\n    message: \"\u26a0\ufe0f blocked\"\n    suggestion: s\n", 7, 14,
			[]string{"rules[0] (d).message", "not terminal-safe", "U+26A0"}},
		{"box drawing in a suggestion", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: \"rm -rf *\"\n    message: m\n    suggestion: \"\u2503 use git revert\"\n", 8, 17,
			[]string{"rules[0] (d).suggestion", "U+2503"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, fs := parse(t, c.src)
			f, ok := finding(fs, c.parts...)
			if !ok {
				t.Fatalf("no finding with %q in %v", c.parts, fs)
			}
			if f.Pos.Line != c.line || f.Pos.Col != c.col || f.Severity != policy.SevWarning {
				t.Errorf("finding %q at %d:%d %s, want %d:%d warning", f.String(), f.Pos.Line, f.Pos.Col, f.Severity, c.line, c.col)
			}
			if !strings.Contains(f.String(), "warden.yaml:") {
				t.Errorf("finding does not name file:line:col: %q", f.String())
			}
		})
	}
}

// TestLintRuleScopeGoodForms: specific denies and allow-lists, kinds, a
// role that leaves delegation out, and a policy's own tool names draw no
// warnings.
func TestLintRuleScopeGoodForms(t *testing.T) {
	t.Parallel()
	_, fs := parse(t, `version: 1
tools:
  task: delegate
roles:
  builder:
    tools: [read, edit, shell]
rules:
  - id: no-builder-subagent
    effect: deny
    tool: delegate
    args: {subagent_type: idumb-builder}
    message: The coordinator delegates to idumb-builder, not this agent.
    suggestion: Delegate to general instead.
  - id: builder-no-task
    effect: deny
    tool: delegate
    roles: [builder]
    message: The builder is a leaf; it does not delegate.
    suggestion: Do the step yourself.
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: Destructive deletion blocked for safety.
    suggestion: Use git revert, or ask the user -> they decide.
  - id: ask-push
    effect: ask
    tool: shell
    command: "git push *"
  - id: ask-send
    effect: ask
    tool: gmail.send
  - id: ask-mail
    effect: ask
    tool: [send_email, mcp__mail__send, "mcp__github__*", exec]
  - id: ask-delete
    effect: ask
    tool: delete
    message: Deleting cannot be undone.
  - id: own-task-name
    effect: allow
    tool: task
    args: {subagent_type: general}
`)
	for _, f := range fs {
		t.Errorf("unexpected finding: %s", f)
	}
}

// TestModelErrorsOption: model_errors takes a format, or {format, hosts};
// a bad value is an error and an unknown host a warning, each at its
// position.
func TestModelErrorsOption(t *testing.T) {
	t.Parallel()
	p, fs := parse(t, "version: 1\nmodel_errors: json\n")
	if len(fs) != 0 || p.ModelFormat("claude") != "json" {
		t.Errorf("shorthand: findings %v, format %q", fs, p.ModelFormat("claude"))
	}
	p, fs = parse(t, "version: 1\nmodel_errors: {format: json, hosts: [gemini]}\n")
	if len(fs) != 0 || p.ModelFormat("gemini") != "json" || p.ModelFormat("claude") != "text" {
		t.Errorf("hosts: findings %v, gemini %q, claude %q", fs, p.ModelFormat("gemini"), p.ModelFormat("claude"))
	}
	if p, _ := parse(t, "version: 1\n"); p.ModelFormat("gemini") != "text" {
		t.Errorf("default format %q, want text", p.ModelFormat("gemini"))
	}
	for _, c := range []struct {
		src       string
		line, col int
		severity  string
		part      string
	}{
		{"version: 1\nmodel_errors: xml\n", 2, 15, policy.SevError, `model_errors: "xml" is not one of text, json`},
		{"version: 1\nmodel_errors: {format: yaml}\n", 2, 24, policy.SevError, `model_errors.format: "yaml"`},
		{"version: 1\nmodel_errors: {format: json, hostz: [x]}\n", 2, 30, policy.SevError, `unknown key "hostz"`},
		{"version: 1\nmodel_errors: {format: json, hosts: [claude, cursor]}\n", 2, 46, policy.SevWarning, `"cursor" is not a host warden knows`},
	} {
		_, fs := parse(t, c.src)
		f, ok := finding(fs, c.part)
		if !ok {
			t.Errorf("%q: no finding %q in %v", c.src, c.part, fs)
			continue
		}
		if f.Pos.Line != c.line || f.Pos.Col != c.col || f.Severity != c.severity {
			t.Errorf("%q: %s, want %d:%d %s", c.src, f, c.line, c.col, c.severity)
		}
	}
}

// TestLintPatternMeaning: lint names each command pattern whose meaning
// differs from its spelling (issue 31, class 11), at the command's
// file:line:col, with what to write instead; the good forms draw none.
func TestLintPatternMeaning(t *testing.T) {
	t.Parallel()
	rule := func(effect, pat string) string {
		return "version: 1\nrules:\n  - id: r\n    effect: " + effect + "\n    tool: shell\n    command: [" + pat + "]\n    message: m\n    suggestion: s\n"
	}
	cases := []struct {
		name, effect, pat string
		parts             []string
	}{
		{"quotes that would group words", "deny", `"bash -c 'rm -rf x'"`, []string{`'rm meets no call`, "put * for the quoted text"}},
		{"a quoted wildcard", "deny", `"git commit -m '*'"`, []string{`'*' is still a wildcard`}},
		{"Claude Code's prefix form after a subcommand", "deny", `"git status:*"`, []string{"status:* is Claude Code's prefix form", `write "git status *"`}},
		{"Claude Code's prefix form as the program", "deny", `"ls:*"`, []string{"a program named ls:*", `write "ls *"`}},
		{"an assignment before the program", "deny", `"FOO=1 make *"`, []string{"FOO=1 is read as the program's name", `("make *")`}},
		{"&& in a pattern", "deny", `"cd * && rm *"`, []string{"&& is compared as a word", "one pattern per command"}},
		{"; in a pattern", "deny", `"rm x; ls"`, []string{"x; is compared as a word"}},
		{"a redirection in a pattern", "deny", `"echo > x"`, []string{"> is compared as a word", "matched by a path rule"}},
		{"an operand written with ./", "deny", `"rm -rf ./build"`, []string{"./build does not meet build", "two patterns"}},
		{"a long option under the program *", "deny", `"* --version"`, []string{"with the program *", "--version does not meet", "name the programs"}},
		{"a misspelt option", "deny", `"git push --forse *"`, []string{"--forse is not an option of git push", "misspelt"}},
		{"spaces around the pattern", "allow", `"ls "`, []string{"spaces around the pattern are ignored", `write "ls *"`}},
		{"an allow for sudo", "allow", `"sudo make *"`, []string{"the command sudo runs as a part of its own", "vouches for sudo alone"}},
		{"an allow for timeout", "allow", `"timeout 5 go test *"`, []string{"vouches for timeout alone"}},
		{"an allow for bash -c", "allow", `"bash -c *"`, []string{"vouches for bash alone"}},
		{"an allow for xargs", "allow", `"xargs cat *"`, []string{"vouches for xargs alone"}},
		{"an allow for env with a command", "warn", `"env FOO=1 go test *"`, []string{"this warn vouches for env alone"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, fs := parse(t, rule(c.effect, c.pat))
			f, ok := finding(fs, append([]string{"rules[0] (r).command"}, c.parts...)...)
			if !ok {
				t.Fatalf("no finding with %q in %v", c.parts, fs)
			}
			if f.Pos.Line != 6 || f.Pos.Col != 14 || f.Severity != policy.SevWarning {
				t.Errorf("finding %q at %d:%d %s, want 6:14 warning", f.String(), f.Pos.Line, f.Pos.Col, f.Severity)
			}
			if !strings.Contains(f.String(), "warden.yaml:6:14") {
				t.Errorf("finding does not name file:line:col: %q", f.String())
			}
		})
	}
	// Good forms: no warning about the pattern.
	for _, pat := range []string{`"git push --force *"`, `"npm run test:*"`, `"sudo *"`, `"sudo rm *"`, `"env"`, `"rm -rf build"`,
		`"curl * | sh"`, `"git commit -m *"`, `"rm -r -f *"`, `"* -rf *"`} {
		effect := "deny"
		if pat == `"env"` {
			effect = "allow"
		}
		_, fs := parse(t, rule(effect, pat))
		for _, f := range fs {
			if strings.Contains(f.String(), ".command") {
				t.Errorf("%s: unexpected %q", pat, f.String())
			}
		}
	}
}
