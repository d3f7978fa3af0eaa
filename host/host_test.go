package host_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/claude"
)

// TestRegistry: one list names every host, and each host's answers follow
// its own wire format.
func TestRegistry(t *testing.T) {
	if got := host.Names(); !slices.Equal(got, []string{"claude", "codex", "gemini", "opencode"}) {
		t.Errorf("Names() = %q", got)
	}
	if got := host.Want(); got != "claude, codex, gemini or opencode" {
		t.Errorf("Want() = %q", got)
	}
	for _, h := range host.All() {
		if got, ok := host.Lookup(h.Name()); !ok || got != h {
			t.Errorf("Lookup(%q) = %v, %v", h.Name(), got, ok)
		}
	}
	if _, ok := host.Lookup("cursor"); ok {
		t.Error("Lookup(cursor) found a host")
	}
	d := warden.FailClosed(warden.Errorf(warden.CodeTimeout, "slow"))
	// An unknown host is answered in Claude Code's shape.
	if got, want := string(host.Failure("cursor", "PreToolUse", d)), string(claude.Adapter{}.Failure("PreToolUse", d)); got != want {
		t.Errorf("unknown host's failure: %s, want %s", got, want)
	}
	if !strings.Contains(string(host.Failure("opencode", "tool.execute.before", d)), "slow") {
		t.Errorf("opencode failure: %s", host.Failure("opencode", "tool.execute.before", d))
	}
	if host.FailCode("claude", "Stop") != 0 || host.FailCode("gemini", "AfterAgent") != 0 || host.FailCode("codex", "PreToolUse") != 2 {
		t.Error("FailCode: 0 only at the end of a turn")
	}
}

// TestClientStaysLight: warden-hook, which hosts start for every event,
// links the host packages but no SQLite, YAML, PostgreSQL or policy
// engine; and no host package imports another (each is a unit: what they
// share is in host/kit and host/internal).
func TestClientStaysLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/warden-run/warden/cmd/warden-hook").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, p := range []string{"hook", "host", "host/claude", "host/gemini"} {
		if !slices.Contains(deps, "github.com/warden-run/warden/"+p) {
			t.Errorf("warden-hook does not use package %s: %q", p, deps)
		}
	}
	for _, d := range deps {
		for _, heavy := range []string{"sqlite", "yaml", "pgx", "/engine", "/policy", "/session", "/hook/handler"} {
			if strings.Contains(d, heavy) {
				t.Errorf("warden-hook links %s", d)
			}
		}
	}
	for _, h := range host.Names() {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "github.com/warden-run/warden/host/"+h).CombinedOutput()
		if err != nil {
			t.Fatalf("go list host/%s: %v: %s", h, err, out)
		}
		for _, imp := range strings.Fields(string(out)) {
			if rest, ok := strings.CutPrefix(imp, "github.com/warden-run/warden/host/"); ok && slices.Contains(host.Names(), rest) {
				t.Errorf("host/%s imports host/%s: a host package stands alone", h, rest)
			}
		}
	}
}
