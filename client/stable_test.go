package client_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/policy"
)

// TestOpenWaitsForAWholePolicy: Open, given a policy file that is being
// written (its first lines there, the deny still to come), decides with
// the whole file, as every front end does (policy.LoadStable). Before, it
// read once and allowed what the whole policy denies.
func TestOpenWaitsForAWholePolicy(t *testing.T) {
	// Not parallel: it sets the package's timings. Settle is long, so that
	// a writer slowed by a loaded machine still writes within it.
	defer func(s, w time.Duration) { policy.Settle, policy.SettleWait = s, w }(policy.Settle, policy.SettleWait)
	policy.Settle, policy.SettleWait = 3*time.Second, 30*time.Second
	file := filepath.Join(t.TempDir(), "warden.yaml")
	head := "version: 1\ndefault: allow\n"
	rest := "rules:\n  - id: no-send\n    effect: deny\n    tool: mail.send\n    message: Sending is blocked.\n    suggestion: Save a draft.\n"
	if err := os.WriteFile(file, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString(rest)
			f.Close()
		}
		wrote <- err
	}()
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
