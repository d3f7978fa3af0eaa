package confine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/sandbox/confine"
)

// TestSpecFile: a Spec written ahead reads back the same; a file others
// may write, or that is not a spec, is refused.
func TestSpecFile(t *testing.T) {
	dir := t.TempDir()
	s := confine.Spec{Root: "/w", Writable: []string{"/w", "/tmp"}, ReadOnly: []string{"/w/.git/hooks"}, Hidden: []string{"/home/u/.ssh"}, NetworkDeny: true, Ports: []int{5432}, Required: true}
	p, err := s.WriteFile(filepath.Join(dir, "specs"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.WriteFile(filepath.Join(dir, "specs"))
	if err != nil || again != p {
		t.Fatalf("second write: %s, %v (first %s)", again, err, p)
	}
	got, err := confine.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != s.Root || strings.Join(got.ReadOnly, ",") != "/w/.git/hooks" || got.Ports[0] != 5432 || !got.Required || !got.NetworkDeny {
		t.Errorf("read back %+v", got)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := confine.ReadFile(p); err == nil || !strings.Contains(err.Error(), "writable only by its owner") {
		t.Errorf("a file others may write: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"root": ""}`), 0o644)
	if _, err := confine.ReadFile(bad); err == nil || !strings.Contains(err.Error(), "not a sandbox spec") {
		t.Errorf("not a spec: %v", err)
	}
}
