package policy_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

// TestToolTableClasses walks the built-in tool table: every entry is a
// known kind; every tool whose name says it reads, lists or searches is of
// a safe kind, and every tool whose name says it writes, runs or deletes
// is destructive; the usual safe and destructive tools of IDE agents are
// classed so.
func TestToolTableClasses(t *testing.T) {
	t.Parallel()
	var p policy.Policy
	names := make([]string, 0, len(policy.BuiltinKinds))
	for n := range policy.BuiltinKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	safeWords := []string{"read", "list", "ls", "search", "grep", "glob", "tree", "info", "intent", "dir", "directory", "files", "file", "definition"}
	destructiveWords := []string{"write", "edit", "delete", "exec", "shell", "bash", "patch", "move", "create", "replace", "diff", "command", "task", "agent", "run", "apply"}
	words := func(name string) []string {
		name = strings.NewReplacer(".", "_", "-", "_").Replace(name)
		var out []string
		// split snake_case and CamelCase
		cur := ""
		for _, r := range name {
			switch {
			case r == '_':
				out, cur = append(out, cur), ""
			case r >= 'A' && r <= 'Z' && cur != "" && !(cur[len(cur)-1] >= 'A' && cur[len(cur)-1] <= 'Z'):
				out, cur = append(out, cur), string(r+32)
			default:
				if r >= 'A' && r <= 'Z' {
					r += 32
				}
				cur += string(r)
			}
		}
		return append(out, cur)
	}
	has := func(ws []string, set []string) bool {
		for _, w := range ws {
			for _, s := range set {
				if w == s {
					return true
				}
			}
		}
		return false
	}
	for _, n := range names {
		kind := policy.BuiltinKinds[n]
		if !policy.IsKind(kind) {
			t.Errorf("%s: kind %q is not a tool kind", n, kind)
		}
		safe := policy.SafeKinds[p.KindOf(n)]
		ws := words(n)
		switch {
		case has(ws, []string{"todo", "todos", "plan", "goal", "topic", "wakeup", "findings"}):
			if kind != "todo" {
				t.Errorf("%s (%s): a todo list tool, want kind todo", n, kind)
			}
		case has(ws, []string{"web", "fetch"}):
			if kind != "fetch" {
				t.Errorf("%s (%s): a web tool, want kind fetch", n, kind)
			}
		case has(ws, []string{"output"}):
			if !safe {
				t.Errorf("%s (%s): reads a command's output, want a safe kind", n, kind)
			}
		case has(ws, destructiveWords) && safe:
			t.Errorf("%s (%s) is classed safe, but its name says it changes something", n, kind)
		case !has(ws, destructiveWords) && has(ws, safeWords) && !safe:
			t.Errorf("%s (%s) is classed destructive, but its name says it only reads or lists", n, kind)
		}
	}
	// The safe and destructive tools of IDE agents (docs/policy.md, "Tool kinds and classes").
	for _, n := range []string{"read_file", "search_files", "list_files", "read_directory", "grep", "select_active_intent"} {
		if !policy.SafeKinds[p.KindOf(n)] {
			t.Errorf("the safe tool %s is classed %s, a destructive kind", n, p.KindOf(n))
		}
	}
	for _, n := range []string{"write_to_file", "delete_file", "execute_command", "apply_patch", "edit_file", "not_a_known_tool"} {
		if policy.SafeKinds[p.KindOf(n)] {
			t.Errorf("the destructive tool %s is classed %s, a safe kind", n, p.KindOf(n))
		}
	}
}
