package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/policytest"
)

// TestCheckWaitsForAWholePolicy: warden check, given a policy file that is
// being written (its first lines there, a deny rule still to come),
// decides with the whole file, as the hooks do: a file changed in the last
// policy.Settle is read again once it is quiet. Before, check read once
// and allowed what the whole policy denies.
func TestCheckWaitsForAWholePolicy(t *testing.T) {
	// Not parallel: it sets the policy package's timings.
	file, wrote := policytest.WriteInTwoSteps(t, "rules:\n  - id: no-rm\n    effect: deny\n    tool: shell\n    command: [\"rm *\"]\n    message: Deleting is blocked.\n    suggestion: Ask the user.\n")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", file}, strings.NewReader(`{"tool":"Bash","args":{"command":"rm -rf x"}}`), &out, &errb)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"decision": "deny"`) || !strings.Contains(out.String(), "no-rm") {
		t.Errorf("check while the policy was written: exit %d\n%s%s\nwant deny by no-rm", code, out.String(), errb.String())
	}
}
