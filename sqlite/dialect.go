// Package sqlite is warden's embedded default store: one SQLite file, by
// default .warden/warden.db next to the policy, created whole on first use
// and bound to the file it opened (see file.go). It
// uses a pure-Go driver (modernc.org/sqlite), so no C toolchain is needed.
//
// The database runs in WAL mode with synchronous=FULL, so a change that was
// acknowledged survives a crash of the process; every transaction takes the
// write lock up front (BEGIN IMMEDIATE) and waits for it (busy_timeout), so
// many hook processes can share one file without "database is locked".
//
// Open, Store and DefaultFile are the package's API. CheckFile, CheckInfo,
// Spool, SpoolFile and BusyTimeout serve warden's own commands and hook
// client (a store file's checks, the spool of a store that did not answer)
// and are internal to warden in spirit: they change with those in any
// release.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warden-run/warden/internal/sqlstore"
)

// DefaultFile is the store file's path relative to the policy's folder. It
// is inside .warden/, which the policy loader protects from tool calls.
const DefaultFile = ".warden/warden.db"

// BusyTimeout is how long a connection waits for another process's write
// lock before giving up. It is below the hook deadline (hook.Deadline,
// 10 s): a hook that waited longer would have answered deny already.
const BusyTimeout = 8 * time.Second

// openPatience bounds how long Open keeps trying a store that many
// processes migrate at once (each try waits up to BusyTimeout for the lock)
// when ctx has no deadline of its own; a hook's ctx ends at its deadline
// first.
const openPatience = 30 * time.Second

// Store is warden's store on a SQLite file: a warden.Store, and so the session
// layer's session.Store, and a warden.Spooler. It is safe for concurrent
// use by goroutines and by processes sharing the database. It is the SQL
// store both databases share (internal/sqlstore) under this package's
// name; its methods are those of the interfaces it implements, documented
// there, and storetest.Run checks them:
//
//   - Session, UpdateSession, Sessions, ArchiveSessions
//     (warden.SessionStore); AddGrant, Grants, UseGrant, RevokeGrant
//     (warden.GrantStore); CreateApproval, Approval, Approvals,
//     ResolveApproval, ConsumeApproval, PurgeApprovals
//     (warden.ApprovalStore); AppendAudit, Audit, Recent, SetOutcome,
//     PurgeAudit (warden.AuditLog); State, SetPhase, AddAnchor,
//     DemoteAnchor, RemoveAnchor, AddHistory, ArchiveHistory
//     (warden.StateStore); SetHalt, Halted, AgentHalted, Halts,
//     ClearHalt, ClearAgentHalt (warden.HaltStore); Report, Reports,
//     UpdateReport (warden.ReportStore);
//   - WriteDecision (warden.DecisionWriter): one decision's session,
//     history entry, grant uses and audit record in one transaction;
//     concurrent decisions share a transaction and one disk sync (group
//     commit);
//   - HaltAndGrants (warden.DecisionReader): the halt in force and the
//     grants a decision needs, in one read;
//   - Spool (warden.Spooler), SetSpool, SpoolFile, ImportSpool: an audit
//     record the database cannot take now waits in a spool file, synced,
//     and joins the audit trail when it answers again;
//   - Now and the Clock field: the one clock of a decision (tests replace
//     Clock to travel in time);
//   - LimitConns bounds the open connections; DB is the database handle,
//     for tests and tools; Close closes the store.
type Store = sqlstore.Store

var dialect = sqlstore.Dialect{
	Name:           "sqlite",
	ForUpdate:      "", // BEGIN IMMEDIATE already holds the write lock
	Rebind:         func(q string) string { return q },
	LockMigrations: func(context.Context, *sql.Tx) error { return nil },
	// One writer at a time: concurrent decisions share a transaction.
	GroupCommit: true,
	// AUTOINCREMENT gives each row of an INSERT the next id, and BEGIN
	// IMMEDIATE keeps every other writer out meanwhile.
	ConsecutiveIDs: true,
	ConnVersion:    connVersion,
	HeldLock:       true,
	// In WAL mode, a commit under synchronous=NORMAL is in the file (it
	// survives a crash of the process) and reaches the disk with the next
	// synchronous=FULL commit's sync of the same log.
	Unsynced: [2]string{"PRAGMA synchronous=NORMAL", "PRAGMA synchronous=FULL"},
}

// CheckFile reports a store file that exists but cannot be the store: a
// folder, or a file that is empty (0 bytes) or cut inside a page. SQLite
// would take an empty file for a new database and start a new, empty
// audit trail, grants and sessions in its place; warden refuses instead.
// warden never leaves an empty store file behind, even when killed while
// it creates one (see create), so an empty one is a store that was
// truncated. A missing file is no error (Open creates it).
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
	}
	return checkSize(path, fi)
}

// Open opens (creating if needed, with its folder) the SQLite store at path
// and brings its schema up to date. The store stays bound to the file it
// opened: if that file is replaced or removed, the store notices before
// its next query and opens the file then at path instead, as it is (see
// file.go).
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
	if err := create(ctx, abs); err != nil {
		return nil, err
	}
	if err := CheckFile(abs); err != nil {
		return nil, err
	}
	f := &storeFile{path: abs, dsn: dsn(abs, "rw")}
	d := dialect
	d.Explain = func(err error) error { return diskFull(err, filepath.Dir(abs)) }
	d.Replaced = f.replaced
	d.Reopen = f.reopen
	d.Close = f.close
	// Many processes opening a store at once (the first calls after an
	// upgrade) contend for its migration, which SQLite may refuse at once
	// (SQLITE_BUSY) rather than wait for: try again, until ctx is done or
	// openPatience has passed.
	var s *sqlstore.Store
	deadline := time.Now().Add(openPatience)
	for try := 0; ; try++ {
		db := f.pool()
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

// connVersion is Dialect.ConnVersion: the pager's data version of the
// main database, which counts every commit, the connection's own too.
func connVersion(dc any) (int64, error) {
	f, ok := dc.(interface {
		FileControlDataVersion(dbName string) (uint32, error)
	})
	if !ok {
		return -1, fmt.Errorf("sqlite store: the driver's connection (%T) cannot read its data version", dc)
	}
	v, err := f.FileControlDataVersion("main")
	return int64(v), err
}
