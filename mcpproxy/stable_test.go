package mcpproxy_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/policy"
)

// TestPolicyWaitsForAWholeFile: the proxy, given a policy file that is
// being written (its first lines there, the deny still to come), compiles
// the whole file, as every front end does (policy.ReadStable). Before, it
// compiled what it read at once, and allowed what the whole policy denies.
func TestPolicyWaitsForAWholeFile(t *testing.T) {
	// Not parallel: it sets the package's timings. Settle is long, so that
	// a writer slowed by a loaded machine still writes within it.
	defer func(s, w time.Duration) { policy.Settle, policy.SettleWait = s, w }(policy.Settle, policy.SettleWait)
	policy.Settle, policy.SettleWait = 3*time.Second, 30*time.Second
	file := filepath.Join(t.TempDir(), "warden.yaml")
	head := "version: 1\ndefault: allow\n"
	rest := "rules:\n  - id: no-delete\n    effect: deny\n    tool: mcp__files__delete\n    message: Deleting is blocked.\n    suggestion: Ask the user.\n"
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
	p := &mcpproxy.Policy{File: file}
	eng, err := p.Compiled()
	if werr := <-wrote; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d := eng.Decide(warden.ToolCall{Tool: "mcp__files__delete", Args: map[string]any{"name": "x"}}); d.Decision != warden.Deny {
		t.Errorf("a delete decided while the policy was written: %s %s, want deny by no-delete", d.Decision, d.Code)
	}
}
