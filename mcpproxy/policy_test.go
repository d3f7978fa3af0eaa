package mcpproxy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if d := first.Decide(call); d.Code != warden.CodeRoleToolDenied {
		t.Fatalf("reader's write = %s, want ROLE_TOOL_DENIED", d.Code)
	}
	write(strings.Replace(testPolicy, "tools: [read, list]\n", "tools: [read, list, write]\n", 1))
	second, err := p.Compiled()
	if err != nil {
		t.Fatal(err)
	}
	if d := second.Decide(call); d.Decision != warden.Allow {
		t.Errorf("after the edit, reader's write in docs/ = %s %s, want allow", d.Decision, d.Code)
	}
	write("version: 1\nrules: [\n")
	if _, err := p.Compiled(); err == nil {
		t.Error("a policy that no longer parses compiled")
	}
}
