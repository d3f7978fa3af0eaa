package hook_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
)

// TestRegistry: one registry names every host, and each host's answers
// follow its own wire format.
func TestRegistry(t *testing.T) {
	if got := hook.Names(); !slices.Equal(got, []string{"claude", "codex", "gemini", "opencode"}) {
		t.Errorf("Names() = %q", got)
	}
	if got := hook.Want(); got != "claude, codex, gemini or opencode" {
		t.Errorf("Want() = %q", got)
	}
	for _, h := range hook.Hosts() {
		if got, ok := hook.Lookup(h.Name()); !ok || got != h {
			t.Errorf("Lookup(%q) = %v, %v", h.Name(), got, ok)
		}
	}
	if _, ok := hook.Lookup("cursor"); ok {
		t.Error("Lookup(cursor) found a host")
	}
	d := warden.FailClosed(warden.Errorf(warden.CodeTimeout, "slow"))
	// An unknown host is answered in Claude Code's shape.
	if got, want := string(hook.Failure("cursor", "PreToolUse", d)), string(hook.Claude.Failure("PreToolUse", d)); got != want {
		t.Errorf("unknown host's failure: %s, want %s", got, want)
	}
	if !strings.Contains(string(hook.Failure("opencode", "tool.execute.before", d)), "slow") {
		t.Errorf("opencode failure: %s", hook.Failure("opencode", "tool.execute.before", d))
	}
	if hook.FailCode("claude", "Stop") != 0 || hook.FailCode("gemini", "AfterAgent") != 0 || hook.FailCode("codex", "PreToolUse") != 2 {
		t.Error("FailCode: 0 only at the end of a turn")
	}
}

// TestClientStaysLight: warden-hook, which hosts start for every event,
// links this package but no SQLite, YAML, PostgreSQL or policy engine.
func TestClientStaysLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/warden-run/warden/cmd/warden-hook").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/warden-run/warden/hook") {
		t.Errorf("warden-hook does not use package hook: %q", deps)
	}
	for _, d := range deps {
		for _, heavy := range []string{"sqlite", "yaml", "pgx", "/engine", "/policy", "/session", "/hook/handler"} {
			if strings.Contains(d, heavy) {
				t.Errorf("warden-hook links %s", d)
			}
		}
	}
}
