package engine

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// TestEveryToolPathArgumentChecked walks the built-in tool table: for every
// tool, every argument name warden reads a path from is checked, so a write
// aimed at a protected path through any of them is denied, and a read of a
// private path through any of them is denied.
func TestEveryToolPathArgumentChecked(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	src := "version: 1\ndefault: allow\nworkspace: {outside: allow}\nprotected: [\".git/**\"]\nprivate: [\"secret/**\"]\n"
	file := filepath.Join(dir, "warden.yaml")
	os.WriteFile(file, []byte(src), 0o644)
	p, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Compile(p, workspace.Live())
	if err != nil {
		t.Fatal(err)
	}
	tools := make([]string, 0, len(policy.BuiltinKinds))
	for name := range policy.BuiltinKinds {
		tools = append(tools, name)
	}
	sort.Strings(tools)
	checked := 0
	for _, tool := range tools {
		kind := policy.BuiltinKinds[tool]
		var calls []map[string]any
		switch kind {
		case "write", "edit", "delete":
			for _, k := range pathKeys {
				calls = append(calls, map[string]any{k: ".git/config"})
			}
			calls = append(calls, map[string]any{"paths": []any{"src/x", ".git/config"}},
				map[string]any{"destination": ".git/config", "source": "src/x"},
				map[string]any{"source": ".git/config", "destination": "src/x"})
			for _, k := range patchKeys {
				calls = append(calls, map[string]any{k: "*** Begin Patch\n*** Add File: .git/config\n+x\n*** End Patch"})
			}
		case "read", "list":
			for _, k := range pathKeys {
				calls = append(calls, map[string]any{k: "secret/key"})
			}
			calls = append(calls, map[string]any{"paths": []any{"src/x", "secret/key"}})
		case "shell":
			for _, k := range []string{"command", "cmd"} {
				calls = append(calls, map[string]any{k: "cat secret/key"}, map[string]any{k: "echo x > .git/config"},
					map[string]any{k: []any{"bash", "-lc", "echo x > .git/config"}})
			}
			for _, k := range workdirKeys {
				calls = append(calls, map[string]any{"command": "echo x > config", k: ".git"})
			}
		default:
			continue // fetch, delegate, todo, intent: no path
		}
		for _, args := range calls {
			d := e.Decide(warden.ToolCall{Tool: tool, Args: args}, nil).Decision
			checked++
			if d.Decision != warden.Deny || d.Code != warden.CodeProtectedPath {
				t.Errorf("%s (%s) %v: got %s %s, want deny PROTECTED_PATH", tool, kind, args, d.Decision, d.Code)
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d calls checked", checked)
	}
}
