package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// TestIntentWithoutScopeOwnsNothing: an intent with an empty or absent
// owned_scope puts nothing in scope (seed 002), and the model is told so;
// an unknown id is denied with the ids it can select.
func TestIntentWithoutScopeOwnsNothing(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(dir, "intents.yaml"), []byte(`active_intents:
  - id: INT-1
    name: no scope at all
  - id: INT-2
    name: empty scope
    owned_scope: []
  - id: INT-3
    name: auth
    owned_scope: ["src/auth/**"]
`), 0o644)
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\ndefault: allow\nintents: {file: intents.yaml, require: [write], out_of_scope: deny}\n"), 0o644)
	p, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Compile(p, testView())
	if err != nil {
		t.Fatal(err)
	}
	write := func(id, path string) warden.Decision {
		return e.Decide(warden.ToolCall{Tool: "Write", IntentID: id, Args: map[string]any{"file_path": path, "content": "x"}}, nil).Decision
	}
	for _, id := range []string{"INT-1", "INT-2"} {
		for _, path := range []string{"src/auth/a.go", "README.md"} {
			d := write(id, path)
			if d.Decision != warden.Deny || d.Code != warden.CodeScopeViolation || !strings.Contains(d.Reason, "owns nothing") {
				t.Errorf("%s writes %s: %s %s %q, want deny SCOPE_VIOLATION (owns nothing)", id, path, d.Decision, d.Code, d.Reason)
			}
		}
	}
	if d := write("INT-3", "src/auth/a.go"); d.Decision != warden.Allow {
		t.Errorf("INT-3 in scope: %s %s %q", d.Decision, d.Code, d.Reason)
	}
	d := write("INT-9", "src/auth/a.go")
	if d.Decision != warden.Deny || d.Code != warden.CodeIntentNotFound ||
		!strings.Contains(d.Suggestion, "INT-1 (no scope at all), INT-2 (empty scope), INT-3 (auth)") {
		t.Errorf("unknown intent: %s %s suggestion %q", d.Decision, d.Code, d.Suggestion)
	}
	if d := write("", "src/auth/a.go"); d.Code != warden.CodeMissingIntent || !strings.Contains(d.Suggestion, "INT-3 (auth)") {
		t.Errorf("no intent: %s suggestion %q", d.Code, d.Suggestion)
	}
	list, err := e.Intents()
	if err != nil || len(list) != 3 || list[2].ID != "INT-3" || list[2].OwnedScope[0] != "src/auth/**" {
		t.Errorf("Intents() = %+v, %v", list, err)
	}
}

// TestIntentOfOnlyExclusionsOwnsTheRest: an owned_scope that lists only
// "!" exclusions owns everything inside the workspace but them (seed 002:
// no inclusions means everything except the exclusions); outside the
// workspace it owns nothing, and lint warns about a scope whose every
// inclusion is excluded again.
func TestIntentOfOnlyExclusionsOwnsTheRest(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(dir, "intents.yaml"), []byte(`active_intents:
  - id: INT-1
    name: all but the vendored code
    owned_scope: ["!vendor/**", "!**/*.lock"]
  - id: INT-2
    name: nothing at all
    owned_scope: ["src/**", "!src/**"]
`), 0o644)
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\ndefault: allow\nworkspace: {outside: allow}\nintents: {file: intents.yaml, require: [write], out_of_scope: deny}\n"), 0o644)
	p, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Compile(p, workspace.Live())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, path string
		want     warden.Effect
	}{
		{"INT-1", "src/auth/a.go", warden.Allow},
		{"INT-1", "README.md", warden.Allow},
		{"INT-1", "vendor/x/a.go", warden.Deny},
		{"INT-1", "go.lock", warden.Deny},
		{"INT-1", "/tmp/elsewhere.txt", warden.Deny},
		{"INT-2", "src/a.go", warden.Deny},
	} {
		d := e.Decide(warden.ToolCall{Tool: "Write", IntentID: tc.id, Args: map[string]any{"file_path": tc.path, "content": "x"}}, nil).Decision
		if d.Decision != tc.want || tc.want == warden.Deny && d.Code != warden.CodeScopeViolation {
			t.Errorf("%s writes %s: %s %s %q, want %s", tc.id, tc.path, d.Decision, d.Code, d.Reason, tc.want)
		}
	}
	_, findings, err := policy.ParseIntents("intents.yaml", []byte("active_intents:\n  - id: INT-1\n    owned_scope: [\"!vendor/**\"]\n  - id: INT-2\n    owned_scope: [\"src/**\", \"!src/**\"]\n  - id: INT-3\n    owned_scope: [\"\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.Field+": "+f.Message)
	}
	joined := strings.Join(got, "\n")
	if len(findings) != 2 || !strings.Contains(joined, "intent INT-2 owns nothing: every glob it includes is also excluded") ||
		!strings.Contains(joined, "intent INT-3 owns nothing: its owned_scope has only empty entries") {
		t.Errorf("lint of owned_scope:\n%s", joined)
	}
}
