package engine_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// allowDefaultPolicy allows whatever no rule covers: only what warden
// reads in a line, and the deny rules, stand between a call and running.
const allowDefaultPolicy = `version: 1
default: allow
workspace: {root: ., outside: deny}
protected: [".git/**", "**/.env"]
private: ["**/.env", "~/.ssh/**"]
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: Recursive forced deletion is blocked.
    suggestion: Delete specific files.
`

func checkAllowDefault(t *testing.T, cases []soundCase) {
	t.Helper()
	checkSoundPolicy(t, allowDefaultPolicy, cases)
}

// Class 1 of issue 31, one rule for what warden cannot read: a command
// whose words warden cannot read all of (shell.Command.Risk: program text,
// an option or subcommand its table does not know, input from a file)
// was only kept from allow rules, so under default: allow it was allowed.
// It is now a computed command, as $X is: no rule and no default allow it.
func TestComputedCommandNeverAllowed(t *testing.T) {
	t.Parallel()
	checkAllowDefault(t, []soundCase{
		// Findings (allowed before).
		{"awk program runs a command", sh(`awk 'BEGIN{x="rm -r"; system(x " src")}'`), "notAllow"},
		{"sed e command", sh("sed 's/a/b/e' src/a.go"), "notAllow"},
		{"an option ls does not know", sh("ls --weird src"), "notAllow"},
		{"a git subcommand warden does not know", sh("git frobnicate"), "notAllow"},
		{"set -k", sh("set -k; git diff GIT_EXTERNAL_DIFF=x"), "notAllow"},
		{"git -c core.fsmonitor", sh("git -c core.fsmonitor=./x status"), "notAllow"},
		{"hash -p rebinds a name", sh("hash -p /tmp/x ls; ls"), "notAllow"},
		// The same as before.
		{"a computed program", sh("$X -rf build"), "notAllow"},
		{"a deny rule still denies", sh("rm -rf src"), "deny"},
		// Controls: nothing harmless started asking.
		{"ls", sh("ls -la src"), "allow"},
		{"git status", sh("git status"), "allow"},
		{"an alias whose value is read as a line", sh("alias ll='ls -la'"), "allow"},
		{"shopt of a glob option", sh("shopt -s extglob nullglob"), "allow"},
		{"shopt -s expand_aliases", sh("shopt -s expand_aliases"), "allow"},
		{"a plain sed", sh("sed -n 1,5p src/a.go"), "allow"},
		{"a program warden has no table for", sh("frobtool --x src"), "allow"},
	})
}

// A computed command may write anything: where intents are required for
// writes, it needs an active intent, as $X does.
func TestComputedCommandNeedsIntent(t *testing.T) {
	t.Parallel()
	const pol = `version: 1
default: allow
workspace: {root: ., outside: deny}
intents: {file: intents.yaml, require: [write]}
`
	e, _ := newEngine(t, pol)
	for _, c := range []string{"$X build", `awk 'BEGIN{system("make")}'`, "git frobnicate"} {
		if d := e.Decide(sh(c), nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeMissingIntent {
			t.Errorf("%s without an intent: %s %s (%s)", c, d.Decision, d.Code, d.Reason)
		}
	}
	if d := e.Decide(sh("ls src"), nil).Decision; d.Decision != warden.Allow {
		t.Errorf("ls without an intent: %s %s", d.Decision, d.Code)
	}
}

// The reason names what warden cannot read, not a default.
func TestComputedCommandReason(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, allowDefaultPolicy)
	d := e.Decide(sh("sed 's/a/b/e' src/a.go"), nil).Decision
	if d.Decision != warden.Ask || d.Code != warden.CodeUnparsable || !contains(d.Reason, "sed script") {
		t.Errorf("got %s %s: %s", d.Decision, d.Code, d.Reason)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
