package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden/sqlite"
)

// storeConn opens the store at path and returns a connection of its
// pool; both are closed when the test ends.
func storeConn(t *testing.T, path string) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestConnVersion: the number the group writer compares (Dialect.ConnVersion)
// is read from a connection of the store's own pool, counts the
// connection's own commit, stays as it is across a transaction that finds
// nothing new, and changes once another process has committed.
func TestConnVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warden.db")
	conn := storeConn(t, path)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE version_test (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	version := func() int64 {
		t.Helper()
		var v int64
		if err := conn.Raw(func(dc any) error {
			var err error
			v, err = sqlite.ConnVersion(dc)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// commit runs one write on conn in a transaction, as the writer does,
	// and returns the number read inside it, before the write.
	commit := func() int64 {
		t.Helper()
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		v := version()
		if _, err := tx.ExecContext(ctx, `INSERT INTO version_test (n) VALUES (1)`); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return v
	}
	commit()
	after := version()
	if in := commit(); in != after {
		t.Errorf("a transaction after the connection's own commit read %d, the number after that commit was %d", in, after)
	}
	if own := version(); own == after {
		t.Errorf("the connection's own commit left the number at %d", own)
	}
	after = version()

	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, `INSERT INTO version_test (n) VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	if in := commit(); in == after {
		t.Errorf("a transaction after another process's commit read %d, as before it", in)
	}
}

// TestCommitFailedLeavesNoTransaction: a COMMIT that fails (a deferred
// foreign key left broken, after which SQLite keeps the transaction open)
// leaves the connection with no transaction and nothing of the failed
// one, as database/sql expects after Commit.
func TestCommitFailedLeavesNoTransaction(t *testing.T) {
	ctx := context.Background()
	conn := storeConn(t, filepath.Join(t.TempDir(), "warden.db"))
	for _, q := range []string{`CREATE TABLE parent (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE child (parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO child (parent) VALUES (42)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("a commit with a broken foreign key succeeded")
	}
	tx, err = conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("a transaction after the failed commit: %v", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM child`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows of the failed transaction are there", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
