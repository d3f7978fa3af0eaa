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
		d := e.Decide(warden.ToolCall{Tool: c.tool, Args: args}, nil).Decision
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
		if d := e.Decide(warden.ToolCall{Tool: "Write", Args: args}, nil).Decision; d.Code == warden.CodeBadInput {
			t.Errorf("Write %v: %+v", args, d)
		}
	}
}

// TestCaseTwinArguments: arguments with two keys that differ only in case,
// at any depth, are a BAD_INPUT deny. The engine reads "path", but a tool
// written with Go's encoding/json fills its Path field from "Path" too
// (the last one wins), so it would write a path warden never looked at.
func TestCaseTwinArguments(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, testPolicy)
	many := map[string]any{"path": "src/a.go"}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		many[k] = k
	}
	many["J"] = "x"
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"Write", map[string]any{"file_path": "src/a.go", "File_Path": ".git/config", "content": "x"}, `"File_Path" and "file_path"`},
		{"mcp__files__write_file", map[string]any{"path": "src/a.go", "PATH": "../outside.txt", "content": "x"}, `"PATH" and "path"`},
		{"mcp__files__edit_file", map[string]any{"path": "src/a.go", "edits": []any{map[string]any{"oldText": "a", "OldText": "b"}}}, `"OldText" and "oldText"`},
		{"mcp__files__write_file", map[string]any{"path": "src/a.go", "k": "1", "\u212a": "2"}, "\"k\" and \"\u212a\""},
		{"mcp__files__write_file", many, `"J" and "j"`},
	} {
		d := e.Decide(warden.ToolCall{Tool: c.tool, Args: c.args}, nil).Decision
		if d.Decision != warden.Deny || d.Code != warden.CodeBadInput || !strings.Contains(d.Reason, c.want) || !strings.Contains(d.Suggestion, "each argument once") {
			t.Errorf("%s %v: %+v, want a BAD_INPUT deny naming %s", c.tool, c.args, d, c.want)
		}
	}
	// Keys that only look alike are not twins.
	for _, args := range []map[string]any{
		{"file_path": "src/a.go", "content": "x", "description": "d", "Content-Type": "text"},
		{"file_path": "src/a.go", "content": "x", "1": "a", "2": "b", "meta": map[string]any{"path": "x", "content": "y"}},
	} {
		if d := e.Decide(warden.ToolCall{Tool: "Write", Args: args}, nil).Decision; d.Code == warden.CodeBadInput {
			t.Errorf("Write %v: %+v", args, d)
		}
	}
}
