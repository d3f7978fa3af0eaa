package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walProject is a project whose store a running hookd (a real `warden
// hookd` process, started by warden-hook as a host would) holds open, and
// a hook that only that hookd can answer (WARDEN_BIN names no program).
func walProject(t *testing.T) (*fcProject, string, func(command string) fcAnswer) {
	t.Helper()
	p := newFCProject(t)
	env := []string{"WARDEN_BIN=" + wardenBin}
	// The first call starts hookd.
	p.hook(t, strings.NewReader(fcEvent("claude", p.dir, "ls")), env, "claude")
	waitFor(t, "warden-hook started no hookd", func() bool { return hookdStatus(p.sock) })
	onlyHookd := []string{"WARDEN_BIN=" + filepath.Join(t.TempDir(), "no-warden")}
	call := func(command string) fcAnswer {
		t.Helper()
		return p.hook(t, strings.NewReader(fcEvent("claude", p.dir, command)), onlyHookd, "claude")
	}
	if a := call("ls -a"); a.code != 0 || !strings.Contains(a.stdout, `"permissionDecision":"allow"`) {
		t.Fatalf("ls -a through hookd: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	db := filepath.Join(p.dir, ".warden", "warden.db")
	if _, err := os.Stat(db + "-wal"); err != nil {
		t.Fatalf("hookd holds the store open, yet it has no WAL: %v", err)
	}
	return p, db, call
}

// TestHookdWALRemoved: with .warden/warden.db-wal and -shm removed while
// hookd held the store open, hookd kept answering and wrote its audit
// records to the deleted WAL, which `warden audit` never sees. It now
// notices, opens the store again, and the record is in the audit trail.
func TestHookdWALRemoved(t *testing.T) {
	p, db, call := walProject(t)
	for _, f := range []string{db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if a := call("ls -l after-wal-removed"); a.code != 0 || !strings.Contains(a.stdout, `"permissionDecision":"allow"`) {
		t.Fatalf("ls -l through hookd after the WAL was removed: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	found := false
	for _, line := range auditLines(t, p.dir) {
		found = found || strings.Contains(line, "after-wal-removed")
	}
	if !found {
		t.Fatalf("the call made after the WAL was removed is not in the audit trail:\n%s", strings.Join(auditLines(t, p.dir), "\n"))
	}
}

// TestHookdWALReplacedStoreUnopenable: when the store cannot be opened
// again (a folder stands where its WAL was), hookd denies the call with
// STORE_UNAVAILABLE naming the store, instead of allowing it and recording it
// in a deleted file.
func TestHookdWALReplacedStoreUnopenable(t *testing.T) {
	_, db, call := walProject(t)
	for _, f := range []string{db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(db+"-wal", 0o700); err != nil {
		t.Fatal(err)
	}
	a := call("ls -l")
	a.mustBlock(t, "claude", "the store cannot be opened again", "")
	if !strings.Contains(a.stdout+a.stderr, "STORE_UNAVAILABLE") || !strings.Contains(a.stdout+a.stderr, db) {
		t.Fatalf("the deny does not say STORE_UNAVAILABLE and name the store %s: exit %d %s %s", db, a.code, a.stdout, a.stderr)
	}
	t.Logf("the deny: %s", a.stdout)
}
