// Package hooktest holds what the tests of the hook layer share: a project
// on disk, a Claude Code event, the answer's decision, the project's store.
// It is imported by tests only.
package hooktest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden/sqlite"
)

// Project makes a project with the policy (none when empty) and returns a
// folder two levels below it: the policy is found from a subfolder.
func Project(t testing.TB, policy string) string {
	t.Helper()
	dir := t.TempDir()
	if policy != "" {
		if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(dir, "sub", "dir")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return sub
}

// ClaudePre is Claude Code's PreToolUse event for a Bash command.
func ClaudePre(cwd, cmd string) string {
	js, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "tool_use_id": "t1"})
	return string(js)
}

// Permission returns the decision and the reason of a Claude Code answer.
func Permission(m map[string]any) (string, string) {
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	d, _ := hs["permissionDecision"].(string)
	r, _ := hs["permissionDecisionReason"].(string)
	return d, r
}

// StoreOf opens the default store of the project that Project made.
func StoreOf(t testing.TB, cwd string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(filepath.Dir(filepath.Dir(cwd)), ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
