package handler

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/exectest"
)

// TestCodexAncestor: a fake codex that runs a program which looks for
// it among its ancestors, through a shell, and reads its version.
func TestCodexAncestor(t *testing.T) {
	if v, ok := parseVersion("0.130.2"); !ok || !less(v, codexMin) {
		t.Errorf("0.130.2 is not older than 0.131")
	}
	if v, ok := parseVersion("0.169.0"); !ok || less(v, codexMin) {
		t.Errorf("0.169.0 is older than 0.131")
	}
	if v, ok := parseVersion("0.131.0-alpha.1"); !ok || less(v, codexMin) {
		t.Errorf("0.131.0-alpha.1 is older than 0.131")
	}
	if os.Getenv("WARDEN_TEST_CODEX_CHILD") == "1" {
		return
	}
	dir := t.TempDir()
	// codex: a copy of the shell, so that its process is named codex;
	// --version prints an old version.
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	data, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	codex := filepath.Join(dir, "codex")
	if err := exectest.WriteFile(codex, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := codexAncestor(os.Getpid(), 8); got != "" {
		t.Skipf("this test runs under a codex already: %s", got)
	}
	// The codex shell runs sh, which runs this test's binary: its
	// grandparent is codex.
	probe := filepath.Join(dir, "probe")
	self, _ := os.Executable()
	script := "if [ \"$1\" = --version ]; then echo 'codex-cli 0.120.0'; exit 0; fi\n" +
		"sh -c '\"$0\" -test.run TestCodexAncestorChild -test.v' " + self + "\n"
	if err := exectest.WriteFile(probe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(codex, probe)
	cmd.Env = append(os.Environ(), "WARDEN_TEST_CODEX_CHILD=1", "WARDEN_TEST_CODEX="+codex)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") || strings.Contains(string(out), "SKIP") {
		t.Fatalf("the child under the fake codex: %v\n%s", err, out)
	}
}

// TestCodexAncestorChild runs under the fake codex of TestCodexAncestor.
func TestCodexAncestorChild(t *testing.T) {
	want := os.Getenv("WARDEN_TEST_CODEX")
	if want == "" {
		t.Skip("run by TestCodexAncestor")
	}
	if got := codexAncestor(os.Getppid(), 8); got != want {
		t.Fatalf("codexAncestor = %q, want %q", got, want)
	}
}
