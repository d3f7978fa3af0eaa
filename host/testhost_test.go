package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/internal/testhost"
	"github.com/warden-run/warden/internal/cli"
	"github.com/warden-run/warden/sqlite"
)

// TestNewHost: a host is one folder (host/internal/testhost, an imaginary
// agent "acme" with a hook format of its own) and one line in host.All,
// which AddForTest stands for. With nothing else changed, the CLI finds
// it: `warden init acme` wires it and registers the MCP server, `warden
// hook acme` decides its calls with the policy, in its format, and records
// them with the host's name in the audit trail (a real SQLite store), the
// engine protects its configuration, and `warden init acme --remove`
// takes it out again. Its transcripts run through the same golden test as
// the real hosts'.
func TestNewHost(t *testing.T) {
	if _, ok := host.Lookup(testhost.Host); ok {
		t.Fatal("the test host is in host.All without the test adding it")
	}
	host.AddForTest(t, testhost.Adapter{})
	h, ok := host.Lookup(testhost.Host)
	if !ok || !strings.HasSuffix(host.Want(), " or acme") {
		t.Fatalf("host.Lookup(acme) = %v, %v; Want() = %q", h, ok, host.Want())
	}
	t.Run("golden", func(t *testing.T) { runGolden(t, h, filepath.Join("internal", "testhost", "testdata")) })

	root := t.TempDir()
	pol := `version: 1
default: allow
rules:
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: Deleting files is blocked.
    suggestion: Move the file to the attic instead.
`
	if err := os.WriteFile(filepath.Join(root, "warden.yaml"), []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	// init wires a binary named warden by its path; this test runs the
	// hook in-process, so any executable will do.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "warden")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
		return code, out.String() + errb.String()
	}

	// warden init acme
	if code, out := run("", "init", "acme", "--dir", root, "--bin", bin); code != 0 {
		t.Fatalf("init acme: exit %d\n%s", code, out)
	}
	wired, argv, err := h.Wired(root)
	if err != nil || wired != bin+" hook acme" || len(argv) != 3 {
		t.Fatalf("wired %q %q, %v", wired, argv, err)
	}
	mcp, err := os.ReadFile(filepath.Join(root, ".acme", "mcp.json"))
	if err != nil || !strings.Contains(string(mcp), `"warden"`) {
		t.Fatalf(".acme/mcp.json: %v\n%s", err, mcp)
	}

	// warden hook acme: a call the policy denies, one it allows, and a
	// write to the host's own configuration, which every policy protects.
	event := func(tool string, input map[string]any, call string) string {
		js, _ := json.Marshal(testhost.Input{Hook: testhost.BeforeTool, Session: "s1", Dir: root, Tool: tool, Input: input, Call: call})
		return string(js)
	}
	for _, c := range []struct {
		name, stdin, verdict, says string
	}{
		{"rule deny", event("execute_command", map[string]any{"command": "rm -rf build"}, "c1"), "deny", "no-rm"},
		{"allow", event("execute_command", map[string]any{"command": "ls"}, "c2"), "allow", ""},
		{"protected", event("write_to_file", map[string]any{"path": filepath.Join(root, ".acme", "hooks.json"), "content": "{}"}, "c3"), "deny", ".acme"},
	} {
		code, out := run(c.stdin, "hook", "acme")
		var o testhost.Output
		line, _, _ := strings.Cut(out, "\n")
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("%s: no answer in acme's format: %v\n%s", c.name, err, out)
		}
		if o.Verdict != c.verdict || !strings.Contains(o.Message, c.says) || code != 0 {
			t.Errorf("%s: exit %d, answer %+v; want exit 0 and %s naming %q (a decision is an answer)", c.name, code, o, c.verdict, c.says)
		}
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(root, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Audit(context.Background(), warden.AuditFilter{Session: "s1"})
	if err != nil || len(recs) != 3 {
		t.Fatalf("audit: %d records, %v", len(recs), err)
	}
	for _, r := range recs {
		if r.Host != testhost.Host {
			t.Errorf("audit record of %s names host %q", r.Tool, r.Host)
		}
	}

	// warden init acme --remove
	if code, out := run("", "init", "acme", "--dir", root, "--remove"); code != 0 {
		t.Fatalf("init acme --remove: exit %d\n%s", code, out)
	}
	if _, _, err := h.Wired(root); err == nil {
		t.Error("the hook is still wired after --remove")
	}
}
