package engine_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// TestMalformedPathArgument: a path argument of the wrong type is a
// malformed call (BAD_INPUT), recoverable, told to send the call again
// with the argument as it should be; every path argument is checked the
// same way (none is silently ignored), and a well-typed call is decided as
// usual.
func TestMalformedPathArgument(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, testPolicy)
	for _, c := range []struct {
		tool, key string
		v         any
		want      string // in the reason
	}{
		{"Write", "file_path", 5.0, `"file_path" must be a string, not a number`},
		{"Write", "path", true, `"path" must be a string, not true or false`},
		{"Write", "filePath", []any{"a.go"}, `"filePath" must be a string, not a list`},
		{"Edit", "notebook_path", map[string]any{"p": "x"}, `"notebook_path" must be a string, not an object`},
		{"Write", "paths", 5.0, `"paths" must be a string or a list of strings, not a number`},
		{"Write", "paths", map[string]any{}, `"paths" must be a string or a list of strings, not an object`},
		{"Write", "paths", []any{"src/a.go", 5.0}, `"paths" must be a string or a list of strings, not a number`},
		{"Read", "paths", 5.0, `"paths" must be a string or a list of strings`},
		{"run_shell_command", "dir_path", 5.0, `"dir_path" must be a string, not a number`},
		{"move_file", "source", 5.0, `"source" must be a string, not a number`},
	} {
		args := map[string]any{c.key: c.v, "content": "x"}
		if c.tool == "run_shell_command" {
			args["command"] = "ls"
		}
		if c.tool == "move_file" {
			args["destination"] = "src/b.go"
		}
		d := e.Decide(warden.ToolCall{Tool: c.tool, Args: args})
		if d.Decision != warden.Deny || d.Code != warden.CodeBadInput || !d.Recoverable ||
			!strings.Contains(d.Reason, c.want) || !strings.Contains(d.Suggestion, "Send the call again with \""+c.key+"\" as ") {
			t.Errorf("%s %s=%v: %+v, want a recoverable BAD_INPUT deny with %q", c.tool, c.key, c.v, d, c.want)
		}
	}
	// The same calls with strings (or no value) are decided by the policy.
	for _, args := range []map[string]any{
		{"file_path": "src/a.go", "content": "x"},
		{"paths": []any{"src/a.go", "src/b.go"}, "content": "x"},
		{"paths": "src/a.go", "content": "x"},
		{"file_path": nil, "paths": nil, "path": "src/a.go", "content": "x"},
	} {
		if d := e.Decide(warden.ToolCall{Tool: "Write", Args: args}); d.Code == warden.CodeBadInput {
			t.Errorf("Write %v: %+v", args, d)
		}
	}
}
