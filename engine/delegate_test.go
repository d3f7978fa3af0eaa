package engine_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden"
)

// chainRoles is a role matrix of four roles: the coordinator and governance read
// and delegate, the validator reads and runs checks, the builder writes.
const chainRoles = `version: 1
roles:
  idumb-supreme-coordinator:
    tools: [todo, read, list, delegate]
    delegates: [idumb-high-governance]
  idumb-high-governance:
    tools: [todo, read, list, delegate]
    delegates: [idumb-low-validator, idumb-builder]
  idumb-low-validator:
    tools: [todo, read, list, shell]
  idumb-builder:
    tools: [todo, read, write, edit, shell]
`

// TestRoleDenyHintSkipsDeniedRoles: a role whose tools include the tool
// but whom a deny rule takes it from is not named, and a role a deny rule
// takes every delegation from is told to report back.
func TestRoleDenyHintSkipsDeniedRoles(t *testing.T) {
	e, _ := newEngine(t, `version: 1
roles:
  coordinator:
    tools: [read, delegate]
  lead:
    tools: [read, edit, delegate]
  builder:
    tools: [read, edit]
  frozen:
    tools: [read, edit]
rules:
  - id: frozen-no-edit
    effect: deny
    tool: edit
    roles: [frozen]
    message: The frozen role edits nothing.
    suggestion: Ask another role.
  - id: lead-no-delegation
    effect: deny
    tool: delegate
    roles: [lead]
    message: The lead does not delegate.
    suggestion: Do the work.
`)
	d := e.Decide(warden.ToolCall{Tool: "Edit", Role: "coordinator", Args: map[string]any{"file_path": "a.go"}}, nil).Decision
	if want := "Delegate this step to one of the roles builder, lead, which may use Edit"; !strings.Contains(d.Suggestion, want) {
		t.Errorf("coordinator Edit: %q lacks %q (frozen may not edit)", d.Suggestion, want)
	}
	d = e.Decide(warden.ToolCall{Tool: "Bash", Role: "lead", Args: map[string]any{"command": "ls"}}, nil).Decision
	if want := "No role of the policy may use Bash"; !strings.Contains(d.Suggestion, want) {
		t.Errorf("lead Bash: %q lacks %q", d.Suggestion, want)
	}
	d = e.Decide(warden.ToolCall{Tool: "Task", Role: "builder", Args: map[string]any{"subagent_type": "x"}}, nil).Decision
	if want := "This step belongs to the coordinator role"; !strings.Contains(d.Suggestion, want) {
		t.Errorf("builder Task: %q lacks %q (the lead may not delegate)", d.Suggestion, want)
	}
}

// TestRoleDenyNamesTheRoleToDelegateTo: a ROLE_TOOL_DENIED deny names the
// role whose tools include the tool, preferring the roles down the
// caller's chain, and tells a worker to report back instead of delegating.
func TestRoleDenyNamesTheRoleToDelegateTo(t *testing.T) {
	for _, src := range []string{chainRoles, strings.NewReplacer(
		"    delegates: [idumb-high-governance]\n", "",
		"    delegates: [idumb-low-validator, idumb-builder]\n", "").Replace(chainRoles)} {
		e, _ := newEngine(t, src)
		for _, c := range []struct {
			role string
			call warden.ToolCall
			want string
		}{
			{"idumb-supreme-coordinator", file("Edit", "src/a.go"), "Delegate this step to the idumb-builder role, which may use Edit"},
			{"idumb-high-governance", file("Write", "src/a.go"), "Delegate this step to the idumb-builder role, which may use Write"},
			{"idumb-supreme-coordinator", bash("go test ./..."), "Delegate this step to one of the roles idumb-builder, idumb-low-validator, which may use Bash"},
			{"idumb-low-validator", file("Write", "src/a.go"), "This step belongs to the idumb-builder role, which may use Write: report back"},
			{"idumb-builder", warden.ToolCall{Tool: "Task", Args: map[string]any{"subagent_type": "x"}}, "This step belongs to one of the roles idumb-high-governance, idumb-supreme-coordinator, which may use Task"},
			{"idumb-builder", warden.ToolCall{Tool: "WebFetch", Args: map[string]any{"url": "https://x"}}, "No role of the policy may use WebFetch"},
		} {
			c.call.Role = c.role
			d := e.Decide(c.call, nil).Decision
			if d.Decision != warden.Deny || d.Code != warden.CodeRoleToolDenied {
				t.Errorf("%s %s: %s %s, want deny ROLE_TOOL_DENIED", c.role, c.call.Tool, d.Decision, d.Code)
				continue
			}
			if !strings.Contains(d.Suggestion, c.want) {
				t.Errorf("%s %s: suggestion %q lacks %q", c.role, c.call.Tool, d.Suggestion, c.want)
			}
		}
	}
}

// TestRoleDenialTextConcurrent: the denial text an engine keeps per role,
// tool and kind is the text it builds, whoever asks first, from many
// goroutines at once (run with -race).
func TestRoleDenialTextConcurrent(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, chainRoles)
	calls := []warden.ToolCall{
		{Tool: "Bash", Role: "idumb-supreme-coordinator", Args: map[string]any{"command": "ls"}},
		{Tool: "Edit", Role: "idumb-low-validator", Args: map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b"}},
		{Tool: "Write", Role: "idumb-high-governance", Args: map[string]any{"file_path": "a.go", "content": "x"}},
	}
	fresh := make([]warden.Decision, len(calls))
	for i, c := range calls {
		// Each from an engine that has kept no text yet.
		e2, _ := newEngine(t, chainRoles)
		fresh[i] = e2.Decide(c, nil).Decision
		if fresh[i].Code != warden.CodeRoleToolDenied {
			t.Fatalf("%s as %s: %+v", c.Tool, c.Role, fresh[i])
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				k := (g + i) % len(calls)
				d := e.Decide(calls[k], nil).Decision
				if d.Reason != fresh[k].Reason || d.Suggestion != fresh[k].Suggestion {
					t.Errorf("%s as %s: %q / %q, want %q / %q", calls[k].Tool, calls[k].Role, d.Reason, d.Suggestion, fresh[k].Reason, fresh[k].Suggestion)
					return
				}
			}
		}()
	}
	wg.Wait()
}
