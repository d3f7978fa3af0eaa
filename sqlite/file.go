package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warden-run/warden/internal/sqlstore"
	msqlite "modernc.org/sqlite"
)

// The store file's life, and why it is handled so.
//
// Creation. A new store is made under a temporary name beside its place
// (warden.db.new-RANDOM), its schema committed and its journal folded in,
// and only then linked into place (a hard link, which fails rather than
// replace a store another process linked first). So warden.db is either
// absent or a whole store: a process killed while it creates the store
// leaves a temporary file (removed by the next creation), never an empty
// warden.db. An empty (0 bytes) warden.db is therefore never a new store:
// it is a store that was truncated, and it is refused (see CheckInfo).
// Creators take turns (a lock on the folder), so many first hooks at once
// make one schema.
//
// Replacement. SQLite finds a database's write-ahead log and its index
// by name: warden.db-wal and warden.db-shm. A process that holds the
// store open while warden.db is replaced (a backup restored with mv) or
// removed keeps writing the old database's pages to that log, and any
// connection that opens the new warden.db takes those pages as its own:
// the restored file is corrupted by the next checkpoint. And a connection
// to the old file, on close, checkpoints and deletes warden.db-wal and
// -shm by name, which may by then be the new file's. So every store's
// pool of connections is bound to the file it first opened (its device
// and inode, see guard):
//   - before every query the store checks (one stat) that warden.db is
//     still that file; when it is not, it stops using the pool, closes its
//     connections in persistent-WAL mode (SQLITE_FCNTL_PERSIST_WAL: the
//     close touches only the old file through its open descriptors and
//     deletes nothing by name), removes warden.db-wal and -shm if they are
//     still the ones the old file used (same inode), and only then opens
//     the new warden.db as it is (or makes a new store if it was removed);
//   - the pool never opens a connection to another file than its own, and
//     a statement on a connection whose file was replaced, removed or
//     truncated meanwhile (empty, or cut inside a page: its size) is
//     refused, so no write reaches a replaced file through it. Inside a
//     transaction the file is checked where the transaction starts and
//     again right before it commits, not at each statement: what the
//     statements between wrote reaches the file only by the commit (in
//     WAL mode, uncommitted pages are no part of the database), and a
//     commit whose file was replaced since the transaction began is
//     rolled back instead, so a decision read or written on a replaced
//     file fails whole. That is no longer a window than a check at each
//     statement left (from the last statement's check to the commit), and
//     it is one stat a transaction instead of one a statement;
//   - a store closed while its file is another one (a hookd or serve
//     stopped right after the move) removes the old -wal and -shm too.
// What remains: another process that opens the new file in the moment
// between the replacement and the holder's next query still finds the
// old log; and a backup copied over the file in place (cp, the same
// inode) cannot be told from the store's own writes. Restore with mv, or
// while no warden process holds the store (warden hookd stop), to be
// safe from both.

// guard is a pool's connector: it opens connections to the store file
// the pool first opened, and to no other.
type guard struct {
	path, dsn string
	mu        sync.Mutex
	// file is the store file the pool's connections hold, wal and shm
	// its -wal and -shm files as the first connection found them (nil
	// until then).
	file, wal, shm os.FileInfo
	// retired: the pool is being closed because its file was replaced.
	retired atomic.Bool
}

// driverConn is what database/sql uses of a modernc.org/sqlite
// connection, and the file control that makes its close keep the WAL.
type driverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	msqlite.FileControl
}

var sqliteDriver = &msqlite.Driver{}

// errReplaced is the error of a connection whose store file was replaced.
func (g *guard) errReplaced(what string) error {
	return fmt.Errorf("the sqlite store %s was %s since warden opened it: warden opens it again and writes nothing to the old one", g.path, what)
}

// Connect implements driver.Connector.
func (g *guard) Connect(ctx context.Context) (driver.Conn, error) {
	if g.retired.Load() {
		return nil, g.errReplaced("replaced or removed")
	}
	before, err := os.Stat(g.path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", g.path, err)
	}
	g.mu.Lock()
	held := g.file
	g.mu.Unlock()
	if held != nil && !os.SameFile(before, held) {
		return nil, g.errReplaced("replaced")
	}
	c, err := sqliteDriver.Open(g.dsn)
	if err != nil {
		return nil, err
	}
	dc, ok := c.(driverConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("open sqlite store %s: the driver's connection (%T) lacks a method warden uses", g.path, c)
	}
	after, err := os.Stat(g.path)
	if err != nil || !os.SameFile(before, after) {
		keepWAL(dc)
		dc.Close()
		return nil, g.errReplaced("replaced")
	}
	g.mu.Lock()
	if g.file == nil {
		g.file = after
		// The connection opened the database in WAL mode (a pragma of
		// the DSN), so its -wal and -shm files exist now.
		g.wal, _ = os.Stat(g.path + "-wal")
		g.shm, _ = os.Stat(g.path + "-shm")
	}
	g.mu.Unlock()
	return &conn{driverConn: dc, g: g}, nil
}

// Driver implements driver.Connector.
func (g *guard) Driver() driver.Driver { return sqliteDriver }

// replaced reports that the pool must not be used any more: its file was
// replaced or removed (or the pool was retired for it).
func (g *guard) replaced() bool {
	if g.retired.Load() {
		return true
	}
	g.mu.Lock()
	held := g.file
	g.mu.Unlock()
	if held == nil {
		return false
	}
	return g.gone(held)
}

// gone reports that the path names no file or another file than held. A
// stat that fails otherwise (too many open files) says nothing.
func (g *guard) gone(held os.FileInfo) bool {
	fi, err := os.Stat(g.path)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	return !os.SameFile(fi, held)
}

// check says why no write may start on the pool's connections: the file
// was replaced or removed, or it was truncated (it lost its pages).
func (g *guard) check() error {
	if g.retired.Load() {
		return g.errReplaced("replaced or removed")
	}
	fi, err := os.Stat(g.path)
	g.mu.Lock()
	held := g.file
	g.mu.Unlock()
	switch {
	case errors.Is(err, os.ErrNotExist):
		return g.errReplaced("removed")
	case err != nil:
		return fmt.Errorf("sqlite store %s: %w", g.path, err)
	case held != nil && !os.SameFile(fi, held):
		return g.errReplaced("replaced")
	}
	return checkSize(g.path, fi)
}

// retire stops the pool: no new connection, and the ones that close keep
// the WAL (they delete nothing by name).
func (g *guard) retire() { g.retired.Store(true) }

// removeStale removes the -wal and -shm files the pool's file used, if
// they are still those (the same inode): they belong to the replaced
// file, and the new one must not read them.
func (g *guard) removeStale() {
	g.mu.Lock()
	held, wal, shm := g.file, g.wal, g.shm
	g.mu.Unlock()
	if held == nil || !g.gone(held) {
		return // the file is still the pool's: its WAL is live
	}
	for _, f := range []struct {
		name string
		was  os.FileInfo
	}{{g.path + "-wal", wal}, {g.path + "-shm", shm}} {
		if f.was == nil {
			continue
		}
		if now, err := os.Stat(f.name); err == nil && os.SameFile(now, f.was) {
			os.Remove(f.name)
		}
	}
}

// keepWAL makes a connection's close leave the WAL and its index alone
// (persistent-WAL mode): a close otherwise checkpoints and then deletes
// warden.db-wal and -shm by name, which belong to another file once the
// store file was replaced. What it checkpoints goes to its own (the old)
// file, through its open descriptor.
func keepWAL(c driverConn) { c.FileControlPersistWAL("main", 1) }

// conn is a connection of a guarded pool.
type conn struct {
	driverConn
	g *guard
	// inTx: a transaction is open on the connection, its file checked
	// when it began and checked again when it commits (see tx).
	// database/sql uses a connection from one goroutine at a time.
	inTx bool
	// txStmts are the connection's transaction statements (txBegin and
	// the others), each prepared when first used: the driver parses its
	// BEGIN and COMMIT anew for every transaction, which was a tenth of
	// the group writer's work a group.
	txStmts [txStmtCount]driverStmt
}

// The statements of a transaction, as the driver runs them (BEGIN
// IMMEDIATE, from the DSN's _txlock, for one that may write).
const (
	txBegin = iota
	txBeginImmediate
	txCommit
	txRollback
	txStmtCount
)

var txSQL = [txStmtCount]string{"BEGIN", "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"}

// runTx runs the transaction statement i, prepared on the connection.
func (c *conn) runTx(ctx context.Context, i int) error {
	st := c.txStmts[i]
	if st == nil {
		var err error
		if st, err = c.prepareDriver(ctx, txSQL[i]); err != nil {
			return err
		}
		c.txStmts[i] = st
	}
	_, err := st.ExecContext(ctx, nil)
	return err
}

// BeginTx refuses a transaction on a file that was replaced, removed or
// truncated: it would write to the old file, or into the truncated one.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.g.check(); err != nil {
		return nil, err
	}
	begin := txBeginImmediate
	if opts.ReadOnly {
		begin = txBegin
	}
	if err := c.runTx(ctx, begin); err != nil {
		return nil, err
	}
	c.inTx = true
	return &tx{c: c, ctx: ctx}, nil
}

// check is the guard's check for a statement: outside a transaction
// each statement may write, and is checked; inside one, the transaction's
// start and commit are (see tx).
func (c *conn) check() error {
	if c.inTx {
		return nil
	}
	return c.g.check()
}

// tx is a transaction of a guarded connection: its commit checks the
// file again and rolls back, committing nothing, when it was replaced,
// removed or truncated since the transaction began.
type tx struct {
	c *conn
	// ctx is BeginTx's: database/sql keeps it in use until the
	// transaction ends, and the COMMIT's wait for a lock ends with it.
	ctx context.Context
}

// Commit commits; a COMMIT that fails leaves no transaction open (the
// ROLLBACK after it, which finds none when the COMMIT ended it, is
// only tidying), as database/sql expects of a connection after Commit.
func (t *tx) Commit() error {
	t.c.inTx = false
	if err := t.c.g.check(); err != nil {
		t.c.runTx(context.Background(), txRollback)
		return err
	}
	if err := t.c.runTx(t.ctx, txCommit); err != nil {
		t.c.runTx(context.Background(), txRollback)
		return err
	}
	return nil
}

// Rollback rolls back, whatever became of BeginTx's context: it is how
// database/sql ends a transaction whose context is done.
func (t *tx) Rollback() error {
	t.c.inTx = false
	return t.c.runTx(context.Background(), txRollback)
}

// Begin is BeginTx with the default options.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// ResetSession drops a connection of a retired pool instead of reusing it.
func (c *conn) ResetSession(ctx context.Context) error {
	if c.g.retired.Load() {
		return driver.ErrBadConn
	}
	return c.driverConn.ResetSession(ctx)
}

// ExecContext refuses a statement on a file that was replaced, removed or
// truncated (see BeginTx): outside a transaction, it may be a write.
func (c *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.driverConn.ExecContext(ctx, q, args)
}

// QueryContext is ExecContext for a statement that returns rows (an
// INSERT ... RETURNING writes too).
func (c *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.driverConn.QueryContext(ctx, q, args)
}

// PrepareContext prepares a statement that checks its file as
// ExecContext does each time it runs.
func (c *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	ds, err := c.prepareDriver(ctx, q)
	if err != nil {
		return nil, err
	}
	return &stmt{driverStmt: ds, c: c}, nil
}

// prepareDriver prepares q with the driver, as a statement with the
// methods warden uses.
func (c *conn) prepareDriver(ctx context.Context, q string) (driverStmt, error) {
	st, err := c.driverConn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	ds, ok := st.(driverStmt)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("sqlite store %s: the driver's statement (%T) lacks a method warden uses", c.g.path, st)
	}
	return ds, nil
}

// Prepare is PrepareContext without a context.
func (c *conn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

type driverStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// stmt is a prepared statement of a guarded pool.
type stmt struct {
	driverStmt
	c *conn // the connection it was prepared on, and runs on
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.check(); err != nil {
		return nil, err
	}
	return s.driverStmt.ExecContext(ctx, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.check(); err != nil {
		return nil, err
	}
	return s.driverStmt.QueryContext(ctx, args)
}

// IsValid keeps a connection of a retired pool out of the pool.
func (c *conn) IsValid() bool { return !c.g.retired.Load() && c.driverConn.IsValid() }

// Close closes the connection; when its file was replaced it keeps the
// WAL (see keepWAL).
func (c *conn) Close() error {
	for i, st := range c.txStmts {
		if st != nil {
			st.Close()
			c.txStmts[i] = nil
		}
	}
	if c.g.replaced() {
		keepWAL(c.driverConn)
	}
	return c.driverConn.Close()
}

// storeFile is a store's file and the pools of connections opened on it,
// each with its guard.
type storeFile struct {
	path, dsn string
	mu        sync.Mutex
	pools     map[*sql.DB]*guard
}

func (f *storeFile) guard(db *sql.DB) *guard {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pools[db]
}

// pool opens a pool of connections on the file (none is made yet).
func (f *storeFile) pool() *sql.DB {
	g := &guard{path: f.path, dsn: f.dsn}
	db := sql.OpenDB(g)
	f.mu.Lock()
	if f.pools == nil {
		f.pools = map[*sql.DB]*guard{}
	}
	f.pools[db] = g
	f.mu.Unlock()
	return db
}

// replaced implements sqlstore.Dialect.Replaced. A database that is not
// one of the file's pools (one that fails, see sqlstore) is replaced
// too: the store tries to open the file again.
func (f *storeFile) replaced(db *sql.DB) bool {
	g := f.guard(db)
	return g == nil || g.replaced()
}

// close implements sqlstore.Dialect.Close: a pool whose file was
// replaced is closed as reopen closes it, and the old file's -wal and
// -shm are removed, so that the next process to open the store does not
// take them for the new file's.
func (f *storeFile) close(db *sql.DB) error {
	g := f.guard(db)
	f.mu.Lock()
	delete(f.pools, db)
	f.mu.Unlock()
	if g == nil || !g.replaced() {
		return db.Close()
	}
	g.retire()
	err := db.Close()
	g.removeStale()
	return err
}

// reopen implements sqlstore.Dialect.Reopen: it closes old, the pool on
// the replaced file, so that it touches nothing of the new one, removes
// the old file's -wal and -shm, and opens the file now at the path as it
// is (a new store when it was removed).
func (f *storeFile) reopen(ctx context.Context, old *sql.DB) (*sql.DB, error) {
	if g := f.guard(old); g != nil {
		g.retire()
		old.Close()
		g.removeStale()
		f.mu.Lock()
		delete(f.pools, old)
		f.mu.Unlock()
	} else {
		old.Close()
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", f.path, err)
	}
	if err := create(ctx, f.path); err != nil {
		return nil, err
	}
	if err := CheckFile(f.path); err != nil {
		return nil, err
	}
	db := f.pool()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", f.path, err)
	}
	return db, nil
}

// dsn is the data source name of the store file at abs; mode is SQLite's
// open mode: "rw" (the file must exist: SQLite never creates a store
// file, see create) or "rwc".
func dsn(abs, mode string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	if mode == "rwc" {
		// A new store's temporary file, which no other process reads: it
		// is synced once, whole, before it is linked into place.
		q.Add("_pragma", "synchronous(OFF)")
	} else {
		q.Add("_pragma", "synchronous(FULL)")
	}
	q.Add("_pragma", "foreign_keys(1)")
	// Statement journals (a multi-row insert inside the group commit's
	// transaction keeps one, to undo itself alone) live in memory: in a
	// temporary file they cost a write system call a page.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate")
	q.Set("mode", mode)
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
}

// afterSchema, when set (by tests), runs once a new store's schema is in
// its temporary file, before the file is linked into place: the moment a
// creator killed leaves the most behind.
var afterSchema func(tmp string)

// tempPrefix names a store being created: PATH.new-RANDOM.
func tempPrefix(path string) string { return path + ".new-" }

// create makes a new store at path when there is none (see the comment at
// the top of this file): under a temporary name, linked into place once
// whole.
func create(ctx context.Context, path string) error {
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return nil // there is one (or Open reports why it cannot tell)
	}
	made := func() bool {
		_, err := os.Lstat(path)
		return !errors.Is(err, os.ErrNotExist)
	}
	unlock, err := lockDir(ctx, filepath.Dir(path), made)
	if err != nil {
		return fmt.Errorf("create sqlite store %s: %w", path, err)
	}
	defer unlock()
	if made() {
		return nil // made while this process waited for its turn
	}
	if locked {
		// Holding the lock, any store being created is a leftover of a
		// creator that died.
		removeTemps(path)
	}
	var b [6]byte
	rand.Read(b[:])
	tmp := tempPrefix(path) + hex.EncodeToString(b[:])
	defer removeTemp(tmp)
	if err := schema(ctx, tmp); err != nil {
		return fmt.Errorf("create sqlite store %s: %w", path, err)
	}
	if afterSchema != nil {
		afterSchema(tmp)
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("create sqlite store %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		// A file system without hard links: a rename, which holding the
		// lock replaces nothing.
		if _, serr := os.Lstat(path); !errors.Is(serr, os.ErrNotExist) {
			return nil
		}
		if rerr := os.Rename(tmp, path); rerr != nil {
			return fmt.Errorf("create sqlite store %s: %w", path, err)
		}
	}
	syncDir(filepath.Dir(path))
	return nil
}

// schema writes the schema of a new store into the file tmp, and folds
// its WAL in (the close of its only connection checkpoints and deletes
// tmp-wal and tmp-shm).
func schema(ctx context.Context, tmp string) error {
	db, err := sql.Open("sqlite", dsn(tmp, "rwc"))
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	s, err := sqlstore.Open(ctx, db, dialect)
	if err != nil {
		db.Close()
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(tmp + suffix); err == nil {
			return fmt.Errorf("the new store's %s file is still there after its schema was written", suffix)
		}
	}
	return nil
}

// removeTemp removes a temporary store file and its companions.
func removeTemp(tmp string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(tmp + suffix)
	}
}

// removeTemps removes the temporary files of creators of path that died.
func removeTemps(path string) {
	names, _ := filepath.Glob(tempPrefix(path) + "*")
	for _, n := range names {
		if !strings.ContainsAny(strings.TrimPrefix(n, tempPrefix(path)), "-.") {
			removeTemp(n)
		}
	}
}

func syncFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// checkSize reports a store file that lost its pages: empty, or cut
// inside a page (a SQLite file is whole pages of 512 bytes or a multiple).
func checkSize(path string, fi os.FileInfo) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("open sqlite store %s: it is a folder, not a store file", path)
	case fi.Size() == 0:
		return fmt.Errorf("open sqlite store %s: the file is empty (0 bytes), so its audit trail, grants and sessions are gone; "+
			"warden does not start a new store in its place: restore it from a backup, or remove it to start anew", path)
	case fi.Size()%512 != 0:
		return fmt.Errorf("open sqlite store %s: the file is %d bytes, not whole pages: it was cut short, and its audit trail, grants and sessions with it; "+
			"warden does not write to it: restore it from a backup, or remove it to start anew", path, fi.Size())
	}
	return nil
}

// lockPatience bounds the wait for another process creating the store,
// when ctx has no deadline of its own.
const lockPatience = 30 * time.Second
