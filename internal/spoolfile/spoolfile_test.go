package spoolfile_test

import (
	"path/filepath"
	"testing"

	"github.com/warden-run/warden/internal/spoolfile"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sqlite"
)

// TestNamesAgree: the names this package, which warden-hook links,
// keeps of its own are those of the packages that own them.
func TestNamesAgree(t *testing.T) {
	if spoolfile.PolicyNames != policy.FileNames {
		t.Errorf("policy names %v, policy.FileNames %v", spoolfile.PolicyNames, policy.FileNames)
	}
	dir := t.TempDir()
	want := sqlite.SpoolFile(filepath.Join(dir, filepath.FromSlash(sqlite.DefaultFile)))
	if got := spoolfile.For(filepath.Join(dir, "warden.yaml"), ""); got != want {
		t.Errorf("default spool %s, want the SQLite store's %s", got, want)
	}
}
