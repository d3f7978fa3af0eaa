// Package sqlite is warden's embedded default store: one SQLite file, by
// default .warden/warden.db next to the policy, created on first use. It
// uses a pure-Go driver (modernc.org/sqlite), so no C toolchain is needed.
//
// The database runs in WAL mode with synchronous=FULL, so a change that was
// acknowledged survives a crash of the process; every transaction takes the
// write lock up front (BEGIN IMMEDIATE) and waits for it (busy_timeout), so
// many hook processes can share one file without "database is locked".
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/warden-run/warden/internal/sqlstore"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// DefaultFile is the store file's path relative to the policy's folder. It
// is inside .warden/, which the policy loader protects from tool calls.
const DefaultFile = ".warden/warden.db"

// BusyTimeout is how long a connection waits for another process's write
// lock before giving up.
var BusyTimeout = 30 * time.Second

// Store is the SQL store on a SQLite file.
type Store = sqlstore.Store

var dialect = sqlstore.Dialect{
	AutoID:         "INTEGER PRIMARY KEY AUTOINCREMENT",
	ForUpdate:      "", // BEGIN IMMEDIATE already holds the write lock
	Rebind:         func(q string) string { return q },
	LockMigrations: func(context.Context, *sql.Tx) error { return nil },
}

// Open opens (creating if needed, with its folder) the SQLite store at path
// and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("open sqlite store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	s, err := sqlstore.Open(ctx, db, dialect)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	return s, nil
}
