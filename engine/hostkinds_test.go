package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/claude"
	"github.com/warden-run/warden/host/gemini"
	"github.com/warden-run/warden/host/opencode"
)

// TestListingToolsAreSafe: the listing tools of IDE agents take the default for
// safe calls, and writers the default for destructive ones.
func TestListingToolsAreSafe(t *testing.T) {
	e, _ := newEngine(t, "version: 1\ndefault: {safe: allow, destructive: deny}\n")
	for tool, want := range map[string]warden.Effect{
		"read_directory": warden.Allow, "list_files": warden.Allow, "search_files": warden.Allow,
		"list_directory": warden.Allow, "LS": warden.Allow, "list_dir": warden.Allow,
		"write_to_file": warden.Deny, "frobnicate": warden.Deny,
	} {
		d := e.Decide(warden.ToolCall{Tool: tool, Args: map[string]any{"path": "src"}}, nil).Decision
		if d.Decision != want {
			t.Errorf("%s: %s (%s), want %s", tool, d.Decision, d.Code, want)
		}
	}
}

// TestModelErrorsJSON: with model_errors json for a host, that host's
// rendering of a deny is the structured error, and other hosts keep
// the plain text.
func TestModelErrorsJSON(t *testing.T) {
	e, _ := newEngine(t, `version: 1
model_errors:
  format: json
  hosts: [gemini, opencode]
intents:
  require: [write]
`)
	call := warden.ToolCall{Tool: "write_file", Args: map[string]any{"file_path": "src/a.go", "content": "x"}}
	for host, render := range map[string]func(warden.Decision) string{
		"gemini":   func(d warden.Decision) string { return gemini.Decide(d, gemini.Options{}).Reason },
		"opencode": func(d warden.Decision) string { return opencode.Decide(d).Message },
	} {
		call.Host = host
		d := e.Decide(call, nil).Decision
		if d.Decision != warden.Deny || d.Code != warden.CodeMissingIntent || d.ModelFormat != "json" {
			t.Fatalf("%s: %s %s format %q, want deny MISSING_INTENT json", host, d.Decision, d.Code, d.ModelFormat)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(render(d)), &got); err != nil {
			t.Fatalf("%s: the model's text is not JSON: %v\n%s", host, err, render(d))
		}
		if got["error"] != "MISSING_INTENT" || got["reason"] != d.Reason || got["suggestion"] != d.Suggestion || got["recoverable"] != true || len(got) != 4 {
			t.Errorf("%s: structured error %v, want {error, reason, suggestion, recoverable} of %+v", host, got, d)
		}
		if tr := e.Explain(call, nil); tr.Decision.ModelFormat != "json" {
			t.Errorf("%s: explain's decision has format %q", host, tr.Decision.ModelFormat)
		}
	}
	call.Host = "claude"
	d := e.Decide(call, nil).Decision
	text := claude.Decide(d, claude.Options{}).HookSpecificOutput.PermissionDecisionReason
	if d.ModelFormat != "" || !strings.HasPrefix(text, "warden BLOCKED: MISSING_INTENT") {
		t.Errorf("claude is not in hosts: format %q, text %q", d.ModelFormat, text)
	}
	// An allow carries no format.
	call.Host = "gemini"
	if d := e.Decide(warden.ToolCall{Tool: "read_file", Args: map[string]any{"file_path": "a"}, Host: "gemini"}, nil).Decision; d.Decision != warden.Allow || d.ModelFormat != "" {
		t.Errorf("allow: %s format %q", d.Decision, d.ModelFormat)
	}
}
