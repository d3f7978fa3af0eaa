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
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warden-run/warden/internal/sqlstore"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// DefaultFile is the store file's path relative to the policy's folder. It
// is inside .warden/, which the policy loader protects from tool calls.
const DefaultFile = ".warden/warden.db"

// BusyTimeout is how long a connection waits for another process's write
// lock before giving up. It is below the hook deadline (hook.Deadline,
// 10 s): a hook that waited longer would have answered deny already.
const BusyTimeout = 8 * time.Second

// openPatience bounds how long Open keeps trying a new store that many
// processes create at once (each try waits up to BusyTimeout for the lock)
// when ctx has no deadline of its own; a hook's ctx ends at its deadline
// first.
const openPatience = 30 * time.Second

// Store is the SQL store on a SQLite file.
type Store = sqlstore.Store

var dialect = sqlstore.Dialect{
	Name:           "sqlite",
	ForUpdate:      "", // BEGIN IMMEDIATE already holds the write lock
	Rebind:         func(q string) string { return q },
	LockMigrations: func(context.Context, *sql.Tx) error { return nil },
	// One writer at a time: concurrent decisions share a transaction.
	GroupCommit: true,
	// In WAL mode, a commit under synchronous=NORMAL is in the file (it
	// survives a crash of the process) and reaches the disk with the next
	// synchronous=FULL commit's sync of the same log.
	Unsynced: [2]string{"PRAGMA synchronous=NORMAL", "PRAGMA synchronous=FULL"},
}

// newborn is how long a store file may stay empty while the process that
// created it writes its schema.
const newborn = 5 * time.Second

// CheckFile reports a store file that exists but cannot be the store: a
// folder, or a file that turned empty (0 bytes) after it was created.
// SQLite would take an empty file for a new database and start a new,
// empty audit trail, grants and sessions in its place; warden refuses
// instead. A missing file is no error (Open creates it).
func CheckFile(path string) error {
	fi, err := os.Stat(path)
	return CheckInfo(path, fi, err)
}

// CheckInfo is CheckFile on what os.Stat(path) returned.
func CheckInfo(path string, fi os.FileInfo, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("open sqlite store %s: %w", path, err)
	case fi.IsDir():
		return fmt.Errorf("open sqlite store %s: it is a folder, not a store file", path)
	case fi.Size() == 0 && time.Since(fi.ModTime()) > newborn:
		return fmt.Errorf("open sqlite store %s: the file is empty (0 bytes), so its audit trail, grants and sessions are gone; "+
			"warden does not start a new store in its place: restore it from a backup, or remove it to start anew", path)
	}
	return nil
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
	if err := CheckFile(abs); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	d := dialect
	d.Explain = func(err error) error { return diskFull(err, filepath.Dir(abs)) }
	// Many processes opening a new store at once contend for the switch to
	// WAL and the first migration, which SQLite may refuse at once
	// (SQLITE_BUSY) rather than wait for: try again, until ctx is done or
	// openPatience has passed.
	var s *sqlstore.Store
	deadline := time.Now().Add(openPatience)
	for try := 0; ; try++ {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
		}
		s, err = sqlstore.Open(ctx, db, d)
		if err == nil {
			break
		}
		db.Close()
		if !strings.Contains(err.Error(), "SQLITE_BUSY") || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
		}
		time.Sleep(time.Duration(10+rand.IntN(40)*(1+min(try, 4))) * time.Millisecond)
	}
	// Records that waited for this store (Spool) join its audit trail. A
	// failure leaves them waiting for the next open.
	s.SetSpool(spoolFile(abs))
	s.ImportSpool(ctx)
	return s, nil
}

// diskFull says "the disk is full" for an error SQLite gives when a write
// finds no room: SQLITE_FULL, or the I/O error of a write that failed
// (ENOSPC shows as "disk I/O error (4874)") on a file system with no space
// left for dir.
func diskFull(err error, dir string) error {
	msg := err.Error()
	full := strings.Contains(msg, "database or disk is full")
	if !full && strings.Contains(msg, "disk I/O error") {
		full = freeBytes(dir) == 0
	}
	if !full {
		return err
	}
	return fmt.Errorf("the disk holding the warden store %s is full, so warden cannot record the decision: "+
		"free some space there (warden purge removes old audit records), then retry: %w", dir, err)
}
