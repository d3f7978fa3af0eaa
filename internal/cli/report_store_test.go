package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// TestReportSessionCommands: `warden report instructions --session` draws
// the session's nonce once and keeps it; `report check --session` checks
// responses against that nonce and the policy's plugins (a response with
// another nonce has no report); `report show` and `report ls` print the
// stored report; `report complete` does nothing for a report that is not
// final; a policy without a report section is said to have none.
func TestReportSessionCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "reportgate", "testdata", "report"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the plugin: %v %s", err, out)
	}
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\nreport:\n  plugins: [report/support.yaml]\n"), 0o644)
	run := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		return runReportCmd(t, stdin, append(args, "--policy", pol)...)
	}
	code, first, errs := run("", "instructions", "--session", "s1")
	if code != ExitOK {
		t.Fatalf("instructions: exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`<warden-([0-9a-f]{8})-FINAL>`).FindStringSubmatch(first)
	if m == nil || !strings.Contains(first, `plugin="support"`) {
		t.Fatalf("instructions:\n%s", first)
	}
	nonce := m[1]
	if _, again, _ := run("", "instructions", "--session", "s1"); again != first {
		t.Errorf("the instructions changed between calls:\n%s\n---\n%s", first, again)
	}
	if _, fresh, _ := run("", "instructions"); strings.Contains(fresh, nonce) || !strings.Contains(fresh, "-FINAL>") {
		t.Errorf("instructions without --session reuse the session's nonce:\n%s", fresh)
	}

	good := "<warden-" + nonce + "-FINAL>\nDone.\n</warden-" + nonce + "-FINAL>\n<warden-" + nonce + `-META plugin="support">{"language":"fr","solved":false}</warden-` + nonce + "-META>\n"
	if code, out, errs := run(good, "check", "--session", "s1"); code != ExitOK || !strings.Contains(out, "result: FINAL") || strings.Contains(errs, "taken from the input") {
		t.Errorf("check --session of a good response: exit %d\n%s\n%s", code, out, errs)
	}
	forged := strings.ReplaceAll(good, nonce, "00000000")
	if code, out, _ := run(forged, "check", "--session", "s1"); code != exitNotFinal || !strings.Contains(out, "final report: missing") {
		t.Errorf("check --session of a response with another nonce: exit %d\n%s", code, out)
	}
	if code, _, errs := runReportCmd(t, forged, "check"); code != ExitError && !strings.Contains(errs, "taken from the input") {
		t.Errorf("check without --session or --nonce does not say where its nonce came from: %s", errs)
	}

	code, out, errs := run("", "show", "s1", "--json")
	var r warden.Report
	if code != ExitOK || json.Unmarshal([]byte(out), &r) != nil || r.Nonce != nonce || r.Status != warden.ReportPending {
		t.Errorf("show --json: exit %d %s\n%s", code, errs, out)
	}
	if code, out, _ := run("", "ls"); code != ExitOK || !strings.Contains(out, "s1") || !strings.Contains(out, "pending") {
		t.Errorf("ls: exit %d\n%s", code, out)
	}
	if code, _, errs := run("", "complete", "--session", "s1"); code != ExitOK {
		t.Errorf("complete of a pending report: exit %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "completed.jsonl")); err == nil {
		t.Error("on-complete ran for a report that is not final")
	}
	if code, _, errs := run("", "show", "nobody"); code != ExitError || !strings.Contains(errs, "not found") {
		t.Errorf("show of an unknown session: exit %d %s", code, errs)
	}

	os.WriteFile(pol, []byte("version: 1\n"), 0o644)
	if code, _, errs := run("", "instructions"); code != ExitError || !strings.Contains(errs, "has no report section") {
		t.Errorf("instructions without a report section: exit %d %s", code, errs)
	}
}
