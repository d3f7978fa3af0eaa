package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/policy"
)

// TestCheckWaitsForAWholePolicy: warden check, given a policy file that is
// being written (its first lines there, a deny rule still to come),
// decides with the whole file, as the hooks do: a file changed in the last
// policy.Settle is read again once it is quiet. Before, check read once
// and allowed what the whole policy denies.
func TestCheckWaitsForAWholePolicy(t *testing.T) {
	// Not parallel: it sets the package's timings. Settle is long, so that
	// a writer slowed by a loaded machine still writes within it.
	defer func(s, w time.Duration) { policy.Settle, policy.SettleWait = s, w }(policy.Settle, policy.SettleWait)
	policy.Settle, policy.SettleWait = 3*time.Second, 30*time.Second
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	head := "version: 1\ndefault: allow\n"
	rest := "rules:\n  - id: no-rm\n    effect: deny\n    tool: shell\n    command: [\"rm *\"]\n    message: Deleting is blocked.\n    suggestion: Ask the user.\n"
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
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", file}, strings.NewReader(`{"tool":"Bash","args":{"command":"rm -rf x"}}`), &out, &errb)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"decision": "deny"`) || !strings.Contains(out.String(), "no-rm") {
		t.Errorf("check while the policy was written: exit %d\n%s%s\nwant deny by no-rm", code, out.String(), errb.String())
	}
}
