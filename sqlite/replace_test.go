package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sqlite"
)

// burst appends n audit records at once, their commands named prefix-i.
func burst(t *testing.T, st *sqlite.Store, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.AppendAudit(context.Background(), warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, Code: warden.CodeAllowed,
				Session: "s1", Args: map[string]any{"command": fmt.Sprintf("%s-%d", prefix, i)}})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", prefix, err)
		}
	}
}

// inspect opens the SQLite file at path on its own and returns its
// integrity check and the number of audit records whose command starts
// with each prefix.
func inspect(t *testing.T, path string, prefixes ...string) (string, map[string]int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil {
		return err.Error(), nil
	}
	counts := map[string]int{}
	for _, p := range prefixes {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM audit WHERE args LIKE ?`, `%"`+p+`-%`).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", p, err)
		}
		counts[p] = n
	}
	return check, counts
}

// TestRestoredBackupStaysIntact: a backup moved over the store file while
// a store holds it open, after a burst of writes still in the old file's
// WAL, is not corrupted by that WAL: the store notices the replacement
// before its next write, drops its connections and their WAL, and writes
// to the restored file, which passes integrity_check afterwards with the
// backup's records and the later ones, and none of those in between.
func TestRestoredBackupStaysIntact(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "warden.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	burst(t, st, "before", 50)
	backup := filepath.Join(dir, "backup.db")
	if _, err := st.DB().ExecContext(ctx, `VACUUM INTO ?`, backup); err != nil {
		t.Fatal(err)
	}
	burst(t, st, "lost", 200) // in the old file's WAL
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL beside the store after a burst: %v", err)
	}
	if err := os.Rename(backup, path); err != nil {
		t.Fatal(err)
	}
	burst(t, st, "after", 100)
	recs, err := st.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 150 {
		t.Errorf("the store reads %d records after the restore, want the backup's 50 and the 100 since", len(recs))
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	check, n := inspect(t, path, "before", "lost", "after")
	if check != "ok" || n["before"] != 50 || n["lost"] != 0 || n["after"] != 100 {
		t.Fatalf("the restored file: integrity_check %q, records %v; want ok and before 50, lost 0, after 100", check, n)
	}
	// Opened again by another store, it is whole too.
	again, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	burst(t, again, "later", 10)
	again.Close()
	if check, n := inspect(t, path, "before", "after", "later"); check != "ok" || n["later"] != 10 {
		t.Fatalf("the restored file opened again: integrity_check %q, records %v", check, n)
	}
}

// TestRestoredBackupClosedAtOnce: a store closed right after its file was
// replaced, with no query in between (a hookd or serve stopped then),
// leaves the restored file and no stale WAL beside it: the next process
// to open the store reads the backup, whole.
func TestRestoredBackupClosedAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "warden.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	burst(t, st, "before", 20)
	backup := filepath.Join(dir, "backup.db")
	if _, err := st.DB().ExecContext(ctx, `VACUUM INTO ?`, backup); err != nil {
		t.Fatal(err)
	}
	burst(t, st, "lost", 200)
	if err := os.Rename(backup, path); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	burst(t, again, "after", 10)
	again.Close()
	if check, n := inspect(t, path, "before", "lost", "after"); check != "ok" || n["before"] != 20 || n["lost"] != 0 || n["after"] != 10 {
		t.Fatalf("the restored file: integrity_check %q, records %v; want ok and before 20, lost 0, after 10", check, n)
	}
}

// TestRemovedStoreStartsAnew: a store file removed while a store holds it
// open is a new store for the next write (as for a process that starts
// then), not writes into the removed file.
func TestRemovedStoreStartsAnew(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warden.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	burst(t, st, "old", 20)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	burst(t, st, "new", 20)
	st.Close()
	if check, n := inspect(t, path, "old", "new"); check != "ok" || n["old"] != 0 || n["new"] != 20 {
		t.Fatalf("the new store: integrity_check %q, records %v; want ok, old 0, new 20", check, n)
	}
}

// TestTruncatedUnderAStoreIsRefused: a store file truncated in place
// (same inode) while a store holds it is refused for writes, not written
// into.
func TestTruncatedUnderAStoreIsRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warden.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	burst(t, st, "old", 5)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err = st.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, Code: warden.CodeAllowed})
	if err == nil || !strings.Contains(err.Error(), "empty (0 bytes)") {
		t.Fatalf("a write after the file was truncated: %v, want an error saying it is empty", err)
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("the truncated file was written to: %d bytes", fi.Size())
	}
}

// creatorEnv makes the test binary a store creator that stops once the
// new store's schema is written (see TestMain).
const creatorEnv = "WARDEN_SQLITE_TEST_CREATOR"

func TestMain(m *testing.M) {
	if path := os.Getenv(creatorEnv); path != "" {
		sqlite.SetAfterSchema(func(tmp string) {
			// Whole or not at all: the test reads the name as soon as
			// the file is there.
			os.WriteFile(path+".pausing", []byte(tmp), 0o600)
			os.Rename(path+".pausing", path+".paused")
			select {} // until killed
		})
		sqlite.Open(context.Background(), path)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestKilledCreatorLeavesNoBrick: a process killed while it creates a new
// store (its schema written, not yet in place) leaves no store file
// behind, so the next one creates the store and records in it, at once
// and long after; the leftover is cleaned up. An empty temporary file (a
// creator killed at its very start) is no obstacle either.
func TestKilledCreatorLeavesNoBrick(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), ".warden")
	path := filepath.Join(dir, "warden.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), creatorEnv+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait for the creator to reach its pause (an event, not a delay).
	for {
		if _, err := os.Stat(path + ".paused"); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the creator exited before it paused: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a creator killed before it finished left a store file: %v", err)
	}
	leftover, _ := os.ReadFile(path + ".paused")
	if _, err := os.Stat(string(leftover)); err != nil {
		t.Fatalf("the killed creator's temporary file %s: %v", leftover, err)
	}
	// A creator killed at its very start: an empty temporary file.
	os.WriteFile(path+".new-0123456789ab", nil, 0o600)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open after a creator was killed: %v", err)
	}
	burst(t, st, "first", 3)
	st.Close()
	if check, n := inspect(t, path, "first"); check != "ok" || n["first"] != 3 {
		t.Fatalf("the store: integrity_check %q, records %v", check, n)
	}
	if left, _ := filepath.Glob(path + ".new-*"); len(left) != 0 {
		t.Errorf("the creators' leftovers are still there: %v", left)
	}
}
