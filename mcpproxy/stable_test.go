package mcpproxy_test

import (
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/policytest"
	"github.com/warden-run/warden/mcpproxy"
)

// TestPolicyWaitsForAWholeFile: the proxy, given a policy file that is
// being written (its first lines there, the deny still to come), compiles
// the whole file, as every front end does (policy.ReadStable). Before, it
// compiled what it read at once, and allowed what the whole policy denies.
func TestPolicyWaitsForAWholeFile(t *testing.T) {
	// Not parallel: it sets the policy package's timings.
	file, wrote := policytest.WriteInTwoSteps(t, "rules:\n  - id: no-delete\n    effect: deny\n    tool: mcp__files__delete\n    message: Deleting is blocked.\n    suggestion: Ask the user.\n")
	p := &mcpproxy.Policy{File: file}
	eng, err := p.Compiled()
	if werr := <-wrote; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d := eng.Decide(warden.ToolCall{Tool: "mcp__files__delete", Args: map[string]any{"name": "x"}}, nil).Decision; d.Decision != warden.Deny {
		t.Errorf("a delete decided while the policy was written: %s %s, want deny by no-delete", d.Decision, d.Code)
	}
}
