package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/storetest"
)

const askEverythingPolicy = `version: 1
default: ask
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: Recursive forced deletion is blocked.
    suggestion: Delete specific files.
`

// TestNoSecretInListings: calls that carry every secret form the
// redaction test knows go through the hook of a host without a prompt
// (each queues an approval); some are approved for always (grants). No
// listing or export shows a secret in clear (approvals ls, text and
// JSON, grants ls, audit and its JSON lines export, state), and neither
// does any table of the store or any file in .warden.
func TestNoSecretInListings(t *testing.T) {
	t.Parallel()
	cwd := project(t, askEverythingPolicy)
	root := filepath.Dir(filepath.Dir(cwd))
	pol := filepath.Join(root, "warden.yaml")
	calls := storetest.SecretCalls("s-secret")
	for _, c := range calls {
		in, _ := json.Marshal(map[string]any{"session_id": c.Session, "cwd": cwd, "hook_event_name": "PreToolUse",
			"tool_name": c.Tool, "tool_input": c.Args})
		runHookCmd(t, string(in), "codex")
	}
	ids, errs, code := runCLI(t, "", "approvals", "ls", "--ids", "--policy", pol)
	list := strings.Fields(ids)
	if code != ExitOK || len(list) < len(calls)/3 {
		t.Fatalf("approvals ls --ids: exit %d, %d approvals for %d calls: %s", code, len(list), len(calls), errs)
	}
	for i, id := range list {
		if i%3 == 0 {
			if out, errs, code := runCLI(t, "", "approvals", "approve", id, "--always", "--policy", pol); code != ExitOK {
				t.Fatalf("approve %s: %s %s", id, out, errs)
			}
		}
	}
	secrets := storetest.Secrets()
	for _, args := range [][]string{
		{"approvals", "ls"}, {"approvals", "ls", "--all"}, {"approvals", "ls", "--all", "--json"},
		{"grants", "ls", "--all"}, {"grants", "ls", "--all", "--json"},
		{"audit"}, {"audit", "--jsonl"}, {"state"}, {"state", "--json"},
	} {
		out, errs, code := runCLI(t, "", append(args, "--policy", pol)...)
		if code != ExitOK || len(out) < 100 {
			t.Errorf("warden %s: exit %d, %d bytes: %s %s", strings.Join(args, " "), code, len(out), out, errs)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) || strings.Contains(errs, s) {
				t.Errorf("warden %s shows the secret %q in clear", strings.Join(args, " "), s)
			}
		}
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(root, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.CheckNoSecret(t, st.DB(), filepath.Join(root, ".warden"))
}
