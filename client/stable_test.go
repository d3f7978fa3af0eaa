package client_test

import (
	"context"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/internal/policytest"
)

// TestOpenWaitsForAWholePolicy: Open, given a policy file that is being
// written (its first lines there, the deny still to come), decides with
// the whole file, as every front end does (policy.LoadStable). Before, it
// read once and allowed what the whole policy denies.
func TestOpenWaitsForAWholePolicy(t *testing.T) {
	// Not parallel: it sets the policy package's timings.
	file, wrote := policytest.WriteInTwoSteps(t, "rules:\n  - id: no-send\n    effect: deny\n    tool: mail.send\n    message: Sending is blocked.\n    suggestion: Save a draft.\n")
	c, err := client.Open(context.Background(), client.Options{Policy: file, Session: "s"})
	if werr := <-wrote; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Decide(context.Background(), warden.ToolCall{Tool: "mail.send", Args: map[string]any{"to": "x"}})
	if err != nil || d.Decision != warden.Deny {
		t.Errorf("a send decided while the policy was written: %s %s (%v), want deny by no-send", d.Decision, d.Code, err)
	}
}
