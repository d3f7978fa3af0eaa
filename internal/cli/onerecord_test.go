package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/sqlite"
)

// TestHookDecidesACallOnce: `warden hook` given the id of a call decided
// before (hookd took it, then died) answers the decision on record: no
// second record, no second use of a grant.
func TestHookDecidesACallOnce(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	st := storeOf(t, cwd)
	ctx := context.Background()
	g, err := st.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "git push origin main", UsesLeft: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(hookd.CallIDEnv, "c-once")
	for i := range 3 {
		_, m, _ := runHookCmd(t, claudePre(cwd, "git push origin main"), "claude")
		if d, r := permission(m); d != "allow" {
			t.Errorf("call %d with one id: %s %q, want the allow on record", i, d, r)
		}
	}
	recs, _ := st.Audit(ctx, warden.AuditFilter{CallID: "c-once"})
	grants, _ := st.Grants(ctx, warden.GrantFilter{All: true})
	if len(recs) != 1 || len(grants) != 1 || grants[0].ID != g.ID || grants[0].UsesLeft != 0 {
		t.Errorf("%d records, grants %+v; want 1 record and the grant used once", len(recs), grants)
	}
	// Another call is decided afresh: the grant is used up.
	t.Setenv(hookd.CallIDEnv, "c-next")
	if _, m, _ := runHookCmd(t, claudePre(cwd, "git push origin main"), "claude"); func() string { d, _ := permission(m); return d }() != "ask" {
		t.Errorf("a new call after the one use: %v, want ask", m)
	}
}

// TestHookdEmptiedStoreIsAnError: a store file that turns empty under a
// running hookd is a deny saying so, not a new empty store.
func TestHookdEmptiedStoreIsAnError(t *testing.T) {
	sock := startHookd(t)
	cwd := project(t, hookTestPolicy)
	db := filepath.Join(filepath.Dir(filepath.Dir(cwd)), ".warden", "warden.db")
	viaClient(t, sock, claudePre(cwd, "ls"), "claude")
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(db, old, old)
	_, m, _ := viaClient(t, sock, claudePre(cwd, "ls -l"), "claude")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "empty (0 bytes)") {
		t.Errorf("store emptied: %s %q, want a deny saying the store is empty", d, r)
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Errorf("the emptied store was written to: %v %v", fi, err)
	}
}

// TestHookFailureSpooledWhenStoreBusy: when the store is too busy to take
// a failure's record in time (another process holds its write lock), the
// record waits in the spool and is in the audit trail once the store is
// opened again.
func TestHookFailureSpooledWhenStoreBusy(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	// The decision abandoned at the timeout goes on once the lock is
	// gone (a hook's process would have exited): wait for it before the
	// project folder is removed.
	var work sync.WaitGroup
	hookWork = &work
	t.Cleanup(func() { hookWork = nil; work.Wait() })
	runHookCmd(t, claudePre(cwd, "ls"), "claude") // creates the store
	db := filepath.Join(filepath.Dir(filepath.Dir(cwd)), ".warden", "warden.db")
	lock, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := lock.DB().BeginTx(context.Background(), nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE sessions SET calls = calls WHERE id = 'none'`); err != nil {
		t.Fatal(err)
	}
	_, m, stderr := runHookCmd(t, claudePre(cwd, "ls -l"), "claude", "--timeout", "1s")
	tx.Rollback()
	lock.Close()
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "DECISION_TIMEOUT") {
		t.Fatalf("a call while the store is locked: %s %q (%s)", d, r, stderr)
	}
	if _, err := os.Stat(db + ".pending"); err != nil {
		t.Fatalf("no spool file: %v", err)
	}
	recs, err := storeOf(t, cwd).Audit(context.Background(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Code != warden.CodeTimeout || recs[1].Args["command"] != "ls -l" {
		t.Errorf("audit after the spool was taken in: %+v", recs)
	}
}
