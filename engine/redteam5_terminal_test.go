package engine_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// The fifth red-team pass, terminal side: Codex's write_stdin types text
// into a running process's terminal, where a line editor and an
// interactive shell change the line before it runs. Each finding was
// allowed before its fix under allowListPolicy (echo, ls, cat and git
// status allowed by rule; .env private; src writable). The "allow" cases
// keep plain typed commands, polls and interrupts allowed.
func TestRedteam5TerminalInput(t *testing.T) {
	t.Parallel()
	typed := func(s string) warden.ToolCall {
		return warden.ToolCall{Tool: "write_stdin", Args: map[string]any{"session_id": 1, "chars": s}}
	}
	checkSound(t, []soundCase{
		// Findings: the line editor rewrites the line.
		{"Ctrl-U erases what was typed", typed("echo hi\x15rm -rf src\n"), "deny"},
		{"backspaces erase the allowed command", typed("echo hi" + strings.Repeat("\b", 7) + "cat .env\n"), "deny"},
		{"DEL erases", typed("echo hi" + strings.Repeat("\x7f", 7) + "cat .env\n"), "deny"},
		{"Ctrl-W erases a word", typed("echo \x17\x17cat .env\n"), "deny"},
		{"Ctrl-A moves to the line's start", typed("ls \x01rm -rf src #\n"), "deny"},
		{"Tab completes a private name", typed("cat .en\t\n"), "deny"},
		{"Ctrl-R searches the history", typed("\x12rm\n"), "deny"},
		{"an escape sequence", typed("echo \x1b[Drm -rf src\n"), "deny"},
		{"a C1 control character", typed("echo \u009b1Drm\n"), "deny"},
		// Findings: CR is Enter in a terminal, so two lines run.
		{"CR ends a line", typed("echo hi\rcat .env\r"), "deny"},
		// Findings: an interactive bash's history expansion.
		{"history reference as an argument", typed("ls !-2\n"), "deny"},
		{"history substitution", typed("echo !!:gs,a,b,\n"), "deny"},
		{"history search", typed("echo !?rm?\n"), "deny"},
		{"quick substitution", typed("^echo ^\n"), "deny"},
		// Handled: what the text says is decided as before.
		{"handled: a denied command", typed("rm -rf src\n"), "deny"},
		{"handled: a private read", typed("cat .env\n"), "deny"},
		{"handled: bytes that are not UTF-8 (meta keys)", typed("echo \xe4\n"), "deny"},
		{"handled: quick substitution on a later line", typed("ls\n^ls^cat .env\n"), "deny"},
		// Allowed.
		{"a plain command", typed("git status\n"), "allow"},
		{"Enter as CR LF", typed("ls -la\r\n"), "allow"},
		{"text without Enter", typed("ls -la"), "allow"},
		{"a poll sends nothing", typed(""), "allow"},
		{"an interrupt", typed("\x03"), "allow"},
		{"an end of input", typed("\x04"), "allow"},
		{"test negation", typed("[ ! -f x ] && echo hi\n"), "allow"},
		{"a ! at the end", typed("echo hi!\n"), "allow"},
		{"a caret inside a line", typed("echo a^b\n"), "allow"},
	})
}

// The reason a model gets for typed control characters names the
// character and says what to send instead.
func TestRedteam5TerminalReason(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, allowListPolicy)
	d := e.Decide(warden.ToolCall{Tool: "write_stdin", Args: map[string]any{"session_id": 1, "chars": "echo hi\x15rm -rf src\n"}}, nil).Decision
	if d.Decision != warden.Deny || d.Code != warden.CodeUnparsable {
		t.Fatalf("got %s %s", d.Decision, d.Code)
	}
	for _, want := range []string{"U+0015", "line editor", "plain text"} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason %q lacks %q", d.Reason, want)
		}
	}
}
