package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/exectest"
)

// copyBins copies warden and warden-hook into a folder of their own (a
// stand-in installation that a test can remove) and returns the folder.
func copyBins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, src := range []string{wardenBin, wardenHookBin} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := exectest.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDoctor: for each host, `warden doctor HOST` passes on a project
// `warden init HOST` wired (its synthetic denied call comes back denied
// through the wired command), and fails, naming the cause, when the wired
// binary is gone and when the policy is broken. For Codex the hook trust
// is read from Codex's own app server, and a project whose hooks Codex
// does not trust fails.
func TestDoctor(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"claude", "codex", "gemini", "opencode"} {
		t.Run(host, func(t *testing.T) {
			e := newEnv(t)
			e.useHookd()
			e.write("go.mod", "module example.com/x\n")
			if host == "codex" {
				bin := requireHost(t, codexSpec)
				e.setupCodexAsUser()
				e.pathWith("codex", bin)
			}
			if host == "gemini" {
				e.vars = append(e.vars, "GEMINI_CLI_TRUST_WORKSPACE=true")
			}
			bins := copyBins(t)
			if out, err := e.warden("init", host, "--bin", filepath.Join(bins, "warden-hook")); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			out, err := e.warden("doctor", host)
			if err != nil || !strings.Contains(out, "every check passed") || !strings.Contains(out, "ok   "+pad(host)+" deny") {
				t.Fatalf("doctor on a wired project: %v\n%s", err, out)
			}
			if n := strings.Count("\n"+out, "\nok   "); n != 9 { // 6 of the host, 3 of the sandbox
				t.Errorf("doctor passed %d checks, want 9:\n%s", n, out)
			}
			// The probe's session is ended, not left active; its deny is
			// on record.
			if s, err := e.store().Session(context.Background(), "warden-doctor"); err != nil || s.Status != warden.SessionEnded || s.Calls == 0 {
				t.Errorf("doctor's session after the run: %+v, %v; want ended, with its call", s, err)
			}

			// Policy broken: named with its file and line.
			good, _ := os.ReadFile(filepath.Join(e.project, "warden.yaml"))
			e.write("warden.yaml", "version: 1\nrules:\n  - id: x\n    effect: alow\n    tool: shell\n")
			out, err = e.warden("doctor", host)
			if err == nil || !strings.Contains(out, "FAIL "+pad(host)+" policy") || !strings.Contains(out, "warden.yaml:4") {
				t.Errorf("doctor with a broken policy: %v\n%s", err, out)
			}
			// A deny whose tool is mistyped denies nothing: doctor passes,
			// and says what warden lint says.
			e.write("warden.yaml", "version: 1\nrules:\n  - {id: typo, effect: deny, tool: shel, command: \"rm *\", message: m, suggestion: s}\n")
			out, err = e.warden("doctor", host)
			if err != nil || !strings.Contains(out, "ok   "+pad(host)+" policy") || !strings.Contains(out, "did you mean shell?") {
				t.Errorf("doctor with a mistyped tool name: %v\n%s", err, out)
			}
			e.write("warden.yaml", string(good))

			// Binary missing.
			if err := os.RemoveAll(bins); err != nil {
				t.Fatal(err)
			}
			out, err = e.warden("doctor", host)
			if err == nil || !strings.Contains(out, "FAIL "+pad(host)+" binary") || !strings.Contains(out, bins) {
				t.Errorf("doctor with the binary gone: %v\n%s", err, out)
			}

			if host == "codex" {
				// Wired again where no codex is found: the trust is not
				// recorded, and doctor (given the codex binary) says so.
				e2 := newEnv(t)
				e2.write("warden.yaml", "version: 1\n")
				e2.setupCodexAsUser()
				if out, err := e2.warden("init", "codex", "--bin", wardenHookBin); err != nil || !strings.Contains(out, "Trust all and continue") {
					t.Fatalf("init without codex: %v\n%s", err, out)
				}
				out, err := e2.warden("doctor", "codex", "--codex", requireHost(t, codexSpec))
				if err == nil || !strings.Contains(out, "FAIL codex    host") {
					t.Errorf("doctor on untrusted Codex hooks: %v\n%s", err, out)
				}
			}
		})
	}
}

// pad is a host name as doctor prints it in its column.
func pad(host string) string { return host + strings.Repeat(" ", max(0, 8-len(host))) }
