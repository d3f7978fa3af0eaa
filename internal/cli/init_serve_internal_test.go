package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitServe: `warden init HOST --serve URL` wires hooks that send
// their events to the service, writes no local policy, and refuses a URL
// that is not http(s).
func TestInitServe(t *testing.T) {
	w := noHookClient(t)
	dir := t.TempDir()
	code, out, errs := runInitCmd(t, "claude", "--dir", dir, "--serve", "https://warden.example:8787", "--no-mcp")
	if code != ExitOK {
		t.Fatalf("init --serve: %d\n%s%s", code, out, errs)
	}
	cmds := hookCommands(readJSON(t, filepath.Join(dir, ".claude", "settings.json")), "PreToolUse")
	if len(cmds) != 1 || cmds[0] != w+" hook claude --serve https://warden.example:8787" {
		t.Fatalf("hook commands: %q", cmds)
	}
	if _, err := os.Stat(filepath.Join(dir, "warden.yaml")); err == nil {
		t.Fatal("init --serve wrote a local policy")
	}
	code, _, errs = runInitCmd(t, "claude", "--dir", t.TempDir(), "--serve", "warden.example:8787", "--no-mcp")
	if code == ExitOK || !strings.Contains(errs, "want http://HOST:PORT") {
		t.Fatalf("init --serve without a scheme: %d %s", code, errs)
	}
}
