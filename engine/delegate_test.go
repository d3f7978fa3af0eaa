package engine_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// seed000Roles is seed 000's matrix: the coordinator and governance read
// and delegate, the validator reads and runs checks, the builder writes.
const seed000Roles = `version: 1
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

// TestRoleDenyNamesTheRoleToDelegateTo: a ROLE_TOOL_DENIED deny names the
// role whose tools include the tool, preferring the roles down the
// caller's chain, and tells a worker to report back instead of delegating.
func TestRoleDenyNamesTheRoleToDelegateTo(t *testing.T) {
	for _, src := range []string{seed000Roles, strings.NewReplacer(
		"    delegates: [idumb-high-governance]\n", "",
		"    delegates: [idumb-low-validator, idumb-builder]\n", "").Replace(seed000Roles)} {
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
			d := e.Decide(c.call)
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
