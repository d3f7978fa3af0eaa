package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditHidesDoctorProbes: `warden audit` leaves warden doctor's denied
// probes (session warden-doctor) out of its table and says how many; --all
// and --jsonl show every record, and a call of that session that was not
// denied is never hidden.
func TestAuditHidesDoctorProbes(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\ndefault: deny\nrules:\n  - {id: ls, effect: allow, tool: shell, command: [\"ls *\"]}\n"), 0o644)
	for _, c := range []struct{ session, cmd string }{
		{"warden-doctor", "rm -rf x"}, {"warden-doctor", "ls"}, {"work", "ls"},
	} {
		call := `{"tool":"Bash","args":{"command":"` + c.cmd + `"}}`
		run(t, call, "check", "--policy", pol, "--session", c.session)
	}
	out, _, code := run(t, "", "audit", "--policy", pol)
	if code != 0 || strings.Count(out, "warden-doctor") != 1 || !strings.Contains(out, "1 records of warden doctor's probes are not shown") {
		t.Errorf("audit:\n%s", out)
	}
	out, _, _ = run(t, "", "audit", "--policy", pol, "--all")
	if strings.Count(out, "warden-doctor") != 2 || strings.Contains(out, "not shown") {
		t.Errorf("audit --all:\n%s", out)
	}
	out, _, _ = run(t, "", "audit", "--policy", pol, "--jsonl")
	if strings.Count(out, "\n") != 3 {
		t.Errorf("audit --jsonl: %d records, want 3:\n%s", strings.Count(out, "\n"), out)
	}
}
