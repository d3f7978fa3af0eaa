package engine_test

import (
	"testing"

	"github.com/warden-run/warden"
)

func localShell(argv []any, env map[string]any) warden.ToolCall {
	return warden.ToolCall{Tool: "local_shell", Args: map[string]any{"command": argv, "env": env}}
}

// Class 3 of issue 31, shell tools' environment maps: the Responses API's
// and Codex's local_shell carry an env map the command runs with, which
// was not read, so GIT_EXTERNAL_DIFF or BASH_ENV set there made an allowed
// git diff or bash -lc run any program. The map is now a list of
// assignments before every command of the line, judged as NAME=VALUE cmd.
func TestCallEnvIsAssignments(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		// Findings.
		{"GIT_EXTERNAL_DIFF in env", localShell([]any{"git", "diff"}, map[string]any{"GIT_EXTERNAL_DIFF": "./evil.sh"}), "notAllow"},
		{"GIT_PAGER in env", localShell([]any{"git", "log"}, map[string]any{"GIT_PAGER": "sh -c 'touch /tmp/x'"}), "notAllow"},
		{"BASH_ENV for bash -lc", localShell([]any{"bash", "-lc", "ls"}, map[string]any{"BASH_ENV": "./evil.sh"}), "notAllow"},
		{"PATH in env", localShell([]any{"ls"}, map[string]any{"PATH": "/tmp/evil"}), "notAllow"},
		{"LD_PRELOAD in a string command", warden.ToolCall{Tool: "local_shell", Args: map[string]any{"command": "ls src", "environment": map[string]any{"LD_PRELOAD": "/tmp/x.so"}}}, "notAllow"},
		{"TMPDIR into .git", localShell([]any{"sort", "src/a.go"}, map[string]any{"TMPDIR": ".git/hooks"}), "deny"},
		{"a value that is not text", localShell([]any{"ls"}, map[string]any{"X": 1}), "deny"},
		{"an env that is not a map", warden.ToolCall{Tool: "local_shell", Args: map[string]any{"command": []any{"ls"}, "env": "PATH=/tmp"}}, "deny"},
		// Controls: everyday variables change nothing.
		{"LANG", localShell([]any{"git", "status"}, map[string]any{"LANG": "C.UTF-8", "TERM": "dumb"}), "allow"},
		{"no env", localShell([]any{"bash", "-lc", "ls"}, nil), "allow"},
		{"an empty env", localShell([]any{"ls"}, map[string]any{}), "allow"},
	})
}
