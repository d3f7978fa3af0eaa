package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateHistoryArchived: past state.history_max the oldest entries are
// archived; `warden state history` shows the live ones, `--archived` the
// archived ones (oldest first), `--limit` the newest of them, `--json`
// the same as JSON.
func TestStateHistoryArchived(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\nstate:\n  history_max: 2\n"), 0o644)
	for i := 1; i <= 5; i++ {
		if _, errs, code := run(t, "", "state", "phase", fmt.Sprint("p", i), "--policy", pol); code != 0 {
			t.Fatalf("phase p%d: %s", i, errs)
		}
	}
	out, _, code := run(t, "", "state", "history", "--policy", pol)
	if code != 0 || !strings.Contains(out, "2 live entries") || !strings.Contains(out, "phase:p4") || !strings.Contains(out, "phase:p5") || strings.Contains(out, "phase:p3") {
		t.Errorf("live history:\n%s", out)
	}
	out, _, _ = run(t, "", "state", "history", "--archived", "--policy", pol)
	if !strings.Contains(out, "3 archived entries") || strings.Index(out, "phase:p1") > strings.Index(out, "phase:p3") || strings.Contains(out, "phase:p4") {
		t.Errorf("archived history:\n%s", out)
	}
	out, _, _ = run(t, "", "state", "history", "--archived", "--limit", "1", "--json", "--policy", pol)
	var list []struct{ Action string }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].Action != "phase:p3" {
		t.Errorf("--archived --limit 1 --json: %v %s", err, out)
	}
	if _, errs, code := run(t, "", "state", "history", "--limit", "-1", "--policy", pol); code == 0 || !strings.Contains(errs, "--limit") {
		t.Errorf("--limit -1: exit %d %s", code, errs)
	}
}
