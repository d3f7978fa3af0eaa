package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/sqlite"
)

// TestGonePolicyNotReplacedByParent: in a folder whose own policy is gone
// but whose store is still there, check, explain and the store commands
// refuse, as the hooks do, instead of deciding by the parent folder's
// policy; with the policy back, they run.
func TestGonePolicyNotReplacedByParent(t *testing.T) {
	top := t.TempDir()
	if err := os.WriteFile(filepath.Join(top, "warden.yaml"), []byte("version: 1\ndefault: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(top, "sub")
	if err := os.MkdirAll(filepath.Join(sub, filepath.Dir(sqlite.DefaultFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, sqlite.DefaultFile), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	call := `{"tool":"Bash","args":{"command":"ls"}}`
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(call), &out, &errb)
		return code, out.String() + errb.String()
	}
	for _, args := range [][]string{{"check"}, {"explain"}, {"grants", "ls"}, {"audit"}, {"state"}} {
		code, out := run(args...)
		if code == ExitOK || !strings.Contains(out, "the policy of "+sub+" is gone") {
			t.Errorf("%v: exit %d, want a refusal naming the gone policy:\n%s", args, code, out)
		}
	}
	if code, out := run("check"); !strings.Contains(out, `"decision": "deny"`) {
		t.Errorf("check: exit %d, want a deny on stdout:\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(sub, "warden.yaml"), []byte("version: 1\ndefault: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(sub, sqlite.DefaultFile)); err != nil {
		t.Fatal(err)
	}
	if code, out := run("check"); code != ExitOK {
		t.Errorf("check with the policy back: exit %d\n%s", code, out)
	}
}
