package mcpproxy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/mcpproxy"
)

func TestPolicyCompilesAgainWhenTheFileChanges(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "warden.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &mcpproxy.Policy{File: file}
	call := warden.ToolCall{Tool: "mcp__files__write_file", Role: "reader", Args: map[string]any{"path": "docs/a.txt"}}
	write(testPolicy)
	first, err := p.Compiled()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.Compiled(); again != first {
		t.Error("an unchanged policy was compiled again")
	}
	if d := first.Decide(call, nil).Decision; d.Code != warden.CodeRoleToolDenied {
		t.Fatalf("reader's write = %s, want ROLE_TOOL_DENIED", d.Code)
	}
	write(strings.Replace(testPolicy, "tools: [read, list]\n", "tools: [read, list, write]\n", 1))
	second, err := p.Compiled()
	if err != nil {
		t.Fatal(err)
	}
	if d := second.Decide(call, nil).Decision; d.Decision != warden.Allow {
		t.Errorf("after the edit, reader's write in docs/ = %s %s, want allow", d.Decision, d.Code)
	}
	write("version: 1\nrules: [\n")
	if _, err := p.Compiled(); err == nil {
		t.Error("a policy that no longer parses compiled")
	}
}

// TestPolicyEditWithTheSameStampIsSeen: two writes of the same size in one
// tick of the file system's clock leave the same stamp (size, modification
// time); a policy read within that tick is read again, so the second write
// takes effect. A stamp read long after the file changed is trusted.
func TestPolicyEditWithTheSameStampIsSeen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	intents := filepath.Join(dir, "intents.yaml")
	tick := time.Now().Truncate(time.Second)
	write := func(path, s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	readers := "tools: [read, list]\n"
	writers := "tools: [read, edit]\n" // same length: the same size
	if len(readers) != len(writers) {
		t.Fatal("the two versions must have the same size")
	}
	call := warden.ToolCall{Tool: "mcp__files__list_directory", Role: "reader", Args: map[string]any{"path": "docs"}}
	p := &mcpproxy.Policy{File: file}
	write(file, testPolicy, tick)
	if eng, err := p.Compiled(); err != nil {
		t.Fatal(err)
	} else if d := eng.Decide(call, nil).Decision; d.Decision == warden.Deny {
		t.Fatalf("reader's listing = %s %s, want it not denied", d.Decision, d.Code)
	}
	write(file, strings.Replace(testPolicy, readers, writers, 1), tick)
	eng, err := p.Compiled()
	if err != nil {
		t.Fatal(err)
	}
	if d := eng.Decide(call, nil).Decision; d.Code != warden.CodeRoleToolDenied {
		t.Errorf("after an edit with the same size and modification time, reader's listing = %s %s, want ROLE_TOOL_DENIED", d.Decision, d.Code)
	}

	// The same for the intents file.
	old := tick.Add(-time.Hour)
	write(intents, "intents:\n  - id: INT-001\n    name: Docs\n    owned_scope: [\"docs/**\"]\n", tick)
	write(file, testPolicy+"intents:\n  file: intents.yaml\n", old)
	first, err := p.Compiled()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.Compiled(); again != first {
		t.Error("an unchanged policy was compiled again")
	}
	write(intents, "intents:\n  - id: INT-002\n    name: Docs\n    owned_scope: [\"docs/**\"]\n", tick)
	second, err := p.Compiled()
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Error("an edit of the intents file with the same size and modification time was not seen")
	}
}
