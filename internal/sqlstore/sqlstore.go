// Package sqlstore is the warden.Store both SQL stores share: the schema,
// the migrations and every query. The sqlite and postgres packages open a
// database and give its Dialect; nothing else differs between them.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warden-run/warden"
)

// Store is a warden.Store on a SQL database. It is safe for concurrent use
// by goroutines and by processes sharing the database.
type Store struct {
	// db is the database the store works on now: a SQLite store whose
	// file was replaced opens the new one in its place (see pool).
	db atomic.Pointer[sql.DB]
	d  Dialect
	// reopenMu serialises the reopening of a replaced store (pool);
	// maxConns is LimitConns's bound, applied again to a reopened one.
	reopenMu sync.Mutex
	maxConns int
	closed   bool
	// stmts caches the prepared statements of the queries a decision runs,
	// by query text: SQLite parses a query each time it is prepared, which
	// was a quarter of a decision's CPU time.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// Clock is the store's clock (default time.Now): it stamps records and
	// decides whether a grant has expired, and the session layer takes its
	// time from it too (Now), so that one clock rules a decision. Tests
	// that travel in time replace it.
	Clock func() time.Time
	// group is the group commit of WriteDecision (see groupWriter).
	group groupWriter
	// recent keeps sessions' decoded records for Recent.
	recent recentCache
	// rcache keeps the halts and grants decisions read (see CachedReads).
	rcache readCache
	// slots bounds the transactions under way at once where the
	// connections are bounded (LimitConns); nil: no bound.
	slots chan struct{}
	// wturn, where the database takes one writer at a time (SQLite,
	// Dialect.GroupCommit), is this process's turn to write: its writers
	// queue for it in order, where SQLite's busy handler lets them poll
	// for the file's lock (a writer could lose every poll to others
	// until its busy timeout ran out while the process was busy).
	wturn chan struct{}
	// spool is the spool file (SetSpool); draining is set while one
	// goroutine moves its records in.
	spool    string
	draining atomic.Bool
	// sessionReads counts the groups' reads of sessions (for tests: a
	// session the writer knows is not read).
	sessionReads atomic.Int64
	// pipeNewest: a pipelined group reads each session's newest audit
	// record in its first round trip (newestStmt, see historyCurrent),
	// once a write needed it (the policy has sequence rules).
	pipeNewest atomic.Bool
}

// LimitConns bounds the store's open connections to n (n >= 2): past
// that, a query waits for a connection. A transaction holds its
// connection and may need a second one at once (to prepare a statement),
// so at most n/2 transactions run at once: the others wait for a turn,
// and the connections never run out under the ones that hold them.
// Call it before the store is used.
func (s *Store) LimitConns(n int) {
	n = max(n, 2)
	s.maxConns = n
	limitConns(s.db.Load(), n)
	s.slots = make(chan struct{}, n/2)
}

func limitConns(db *sql.DB, n int) {
	db.SetMaxIdleConns(MaxIdleConns)
	db.SetConnMaxIdleTime(time.Minute)
	if n > 0 {
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(min(n, MaxIdleConns))
	}
}

// pool returns the database to work on. When the dialect says the
// database was replaced under the store (Dialect.Replaced: a SQLite file
// restored by a rename, or removed), it is opened again first (see
// reopen): each query and transaction of the store starts here, so
// nothing is written to a replaced database once it is noticed.
func (s *Store) pool(ctx context.Context) *sql.DB {
	db := s.db.Load()
	if s.d.Replaced == nil || !s.d.Replaced(db) {
		return db
	}
	return s.reopen(ctx, db)
}

// reopen replaces old, the database the store worked on, with the one
// Dialect.Reopen opens in its place, brought up to date, and forgets what
// the store kept of the old one (prepared statements, sessions' recent
// records). When that fails, the store works on a database whose every
// query fails with the reason, and the next query tries again.
func (s *Store) reopen(ctx context.Context, old *sql.DB) *sql.DB {
	s.reopenMu.Lock()
	defer s.reopenMu.Unlock()
	if cur := s.db.Load(); cur != old || s.closed {
		return cur // reopened meanwhile, or closed
	}
	db, err := s.d.Reopen(ctx, old)
	if err == nil {
		limitConns(db, s.maxConns)
		if err = runMigrations(ctx, db, s.d, migrations); err != nil {
			db.Close()
			err = s.explain(err)
		}
	}
	if err != nil {
		db = sql.OpenDB(failing{err})
	}
	// Before the new database is in use: the counts of changes kept are
	// the old one's.
	s.rcache.reset()
	s.stmtMu.Lock()
	stmts := s.stmts
	s.stmts = map[string]*sql.Stmt{}
	s.db.Store(db)
	s.stmtMu.Unlock()
	for _, st := range stmts {
		st.Close()
	}
	s.recent.reset()
	return db
}

// failing is a database whose every connection fails with err.
type failing struct{ err error }

func (f failing) Connect(context.Context) (driver.Conn, error) { return nil, f.err }
func (f failing) Driver() driver.Driver                        { return nil }

// turn waits for a transaction's turn when the transactions are bounded
// (LimitConns). done, which the caller must call once the transaction is
// over, gives the turn back.
func (s *Store) turn(ctx context.Context) (done func(), err error) {
	if s.slots == nil {
		return s.writeTurn(ctx)
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	wdone, err := s.writeTurn(ctx)
	if err != nil {
		<-s.slots
		return nil, err
	}
	return func() { wdone(); <-s.slots }, nil
}

// writeTurnWait bounds the wait for the write turn of a caller whose
// context has no deadline of its own.
const writeTurnWait = groupTimeout

// writeTurn waits for the process's turn to write (Store.wturn), where
// the database takes one writer at a time; done gives it back. A caller
// that holds the turn must not wait for another write of its own
// process: it would have waited for the database's lock as long.
func (s *Store) writeTurn(ctx context.Context) (done func(), err error) {
	if s.wturn == nil {
		return func() {}, nil
	}
	select {
	case s.wturn <- struct{}{}:
		return func() { <-s.wturn }, nil
	default:
	}
	var timeout <-chan time.Time
	if _, ok := ctx.Deadline(); !ok {
		t := time.NewTimer(writeTurnWait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case s.wturn <- struct{}{}:
		return func() { <-s.wturn }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the store's write lock: %w", ctx.Err())
	case <-timeout:
		return nil, fmt.Errorf("the store's write lock was held by this process's other writes for %s", writeTurnWait)
	}
}

// begin starts a transaction in its turn (see turn).
func (s *Store) begin(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	if done, err = s.turn(ctx); err != nil {
		return nil, nil, err
	}
	if tx, err = s.pool(ctx).BeginTx(ctx, nil); err != nil {
		done()
		return nil, nil, err
	}
	return tx, done, nil
}

// DB returns the underlying database handle (for tests and tools).
func (s *Store) DB() *sql.DB { return s.db.Load() }

// Close closes the database.
func (s *Store) Close() error {
	s.group.stop()
	s.reopenMu.Lock()
	s.closed = true
	s.reopenMu.Unlock()
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	if s.d.Close != nil {
		return s.d.Close(s.db.Load())
	}
	return s.db.Load().Close()
}

// prepare returns the prepared statement for a (rebound) query. The lock
// is not held while the statement is prepared: preparing takes a
// connection, which may have to wait for a transaction to end that
// itself waits for a statement.
func (s *Store) prepare(ctx context.Context, q string) (*sql.Stmt, error) {
	return s.prepareIn(ctx, s.pool(ctx), q)
}

// prepareIn is prepare on db, the store's database as pool returned it.
func (s *Store) prepareIn(ctx context.Context, db *sql.DB, q string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	st := s.stmts[q]
	cur := s.db.Load() == db
	s.stmtMu.Unlock()
	if st != nil && cur {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.db.Load() != db {
		// Reopened meanwhile: the statement is the old database's.
		st.Close()
		return nil, errors.New("the store was opened again meanwhile")
	}
	if s.stmts == nil {
		// Closed meanwhile.
		st.Close()
		return nil, errors.New("the store is closed")
	}
	if had := s.stmts[q]; had != nil {
		st.Close()
		return had, nil
	}
	s.stmts[q] = st
	return st, nil
}

// prepared runs queries through cached prepared statements, inside tx
// when it is set.
type prepared struct {
	s  *Store
	tx *sql.Tx
}

func (p prepared) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if p.tx == nil {
		return p.s.prepare(ctx, q)
	}
	// A transaction's database was checked (pool) where it began, and
	// the store's guard checks it again at its commit: no look at each
	// statement. A statement of a database opened again meanwhile fails
	// in the transaction of the old one (database/sql refuses it).
	st, err := p.s.prepareIn(ctx, p.s.db.Load(), q)
	if err != nil {
		return nil, err
	}
	return p.tx.StmtContext(ctx, st), nil
}

func (p prepared) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	if p.tx == nil {
		// A write of its own: it waits for the write turn, as a
		// transaction does (turn).
		done, err := p.s.writeTurn(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	return st.ExecContext(ctx, args...)
}

func (p prepared) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (p prepared) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, q)
	if err != nil {
		// Run it unprepared: the Row carries the error.
		if p.tx != nil {
			return p.tx.QueryRowContext(ctx, q, args...)
		}
		return p.s.pool(ctx).QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// Now returns the time on the store's clock, in UTC.
func (s *Store) Now() time.Time {
	if s.Clock == nil {
		return time.Now().UTC()
	}
	return s.Clock().UTC()
}

// Time is stored as microseconds since the Unix epoch; 0 is the zero time.
func ts(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func tm(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newID(prefix string) string {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + hex.EncodeToString(b[:])
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func fromJSON(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	done, err := s.writeTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.pool(ctx).ExecContext(ctx, s.d.Rebind(q), args...)
}

// notFound turns "no row changed" into ErrNotFound.
func notFound(res sql.Result, what, id string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", what, id, warden.ErrNotFound)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

// collect scans every row of a query's result with scan and closes the
// rows; what names the records in an error.
func collect[T any](rows *sql.Rows, err error, what string, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		x, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// querier is a database or a transaction.
type querier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// listJSON is a list's JSON, "[]" for none, that without the encoder
// (most records have no warnings and no grants).
func listJSON(s []string) string {
	if len(s) == 0 {
		return "[]"
	}
	return toJSON(s)
}

// Dialect is what differs between the SQL databases.
type Dialect struct {
	// Name picks the migration files written for this database
	// (NNNN_what.NAME.sql); see migrate.go.
	Name string
	// ForUpdate is appended to a SELECT that must lock its rows.
	ForUpdate string
	// Rebind turns the queries' ? placeholders into the database's own.
	Rebind func(q string) string
	// LockMigrations serialises migrations across processes; it runs
	// inside the migration transaction.
	LockMigrations func(ctx context.Context, tx *sql.Tx) error
	// Explain, when set, rewrites an error of the writes a decision makes
	// into one a person can act on (a full disk said as such).
	Explain func(err error) error
	// GroupCommit makes concurrent WriteDecision calls share one
	// transaction (see groupWriter). Where writers lock rows (ForUpdate),
	// a group locks its sessions in the order of their ids, and a group
	// that meets another writer (Retryable, or a call recorded meanwhile)
	// writes each of its calls alone instead.
	GroupCommit bool
	// GroupWriters is how many groups may be under way at once (0: one).
	// More than one only where writers lock rows (ForUpdate): a group
	// that waits for the server's round trips leaves the next group to
	// another transaction instead of holding it back.
	GroupWriters int
	// Retryable reports an error that another transaction caused (a
	// deadlock, a serialization failure): the work may succeed again.
	Retryable func(err error) bool
	// ModifyingCTE: the database runs an UPDATE inside a WITH clause of
	// another statement (PostgreSQL), so that a decision's session update
	// and its audit record's insert are one statement.
	ModifyingCTE bool
	// Batch, when set, sends stmts on conn together, in one round trip
	// (PostgreSQL's pipeline), runs them in order and calls each one's
	// Row with its rows; the first error (wrapped with the statement's
	// What) stops the rest. A transaction begun by one batch goes on in
	// the next. The group commit then takes two round trips a group
	// (pipeGroup).
	Batch func(ctx context.Context, conn *sql.Conn, stmts []BatchStmt) error
	// DataVersion, when set, is a query of one number that changes when
	// another connection commits a change to the database and not when
	// this one does (SQLite's data_version). The group writer then keeps
	// one connection while it has work, and the sessions its last group
	// left: the next group reads a session again only when another
	// connection committed meanwhile (see writerConn).
	DataVersion string
	// ConnVersion, when set, serves as DataVersion does (and in its
	// place), without a statement: it reads, from the driver's connection dc, a number that
	// changes when any connection commits a change, this one included
	// (SQLite's SQLITE_FCNTL_DATA_VERSION, read inside the transaction
	// that BEGIN IMMEDIATE started). The writer reads it again after its
	// own commit, and the next group compares with that. (SQLite runs
	// data_version through a table-valued function that parses a PRAGMA
	// each time: half the fixed work of a group's begin.)
	ConnVersion func(dc any) (int64, error)
	// HeldLock: once a group's transaction has begun, it holds the
	// database's write lock, and no statement in it waits for another
	// connection (SQLite under BEGIN IMMEDIATE), so its statements run
	// without watching the group's deadline: the driver starts a
	// goroutine for each statement that watches one. The wait for the
	// lock at BEGIN is bounded by the database's own busy timeout.
	HeldLock bool
	// ConsecutiveIDs: one INSERT of many audit records, all of them
	// inserted, numbers them one after the other up to the statement's
	// last insert id (SQLite: AUTOINCREMENT under its one writer). The
	// group's insert then needs no RETURNING, whose rows cost the writer
	// a result set to build and read.
	ConsecutiveIDs bool
	// Duplicate reports a unique constraint's violation: in a batch, a
	// call recorded before.
	Duplicate func(err error) bool
	// Unsynced is the pair of statements that make a connection's commits
	// stop waiting for the disk, and then wait again. A call's outcome is
	// written so (see SetOutcome); empty: every commit waits.
	Unsynced [2]string
	// Replaced, when set, reports (cheaply: it runs before every query)
	// that db, the database the store works on, is no longer the one its
	// name names: a SQLite file replaced or removed. The store then
	// calls Reopen, which closes old without letting it touch the new
	// database, and opens the new one as it is.
	Replaced func(db *sql.DB) bool
	Reopen   func(ctx context.Context, old *sql.DB) (*sql.DB, error)
	// Close, when set, closes the database when the store is closed
	// (instead of db.Close): a SQLite store whose file was replaced
	// closes without touching the new one.
	Close func(db *sql.DB) error
}

// MaxIdleConns is how many idle connections a store keeps open for the
// next queries.
const MaxIdleConns = 64

// Open wraps an open database and brings its schema up to date.
func Open(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	s := &Store{d: d, stmts: map[string]*sql.Stmt{}}
	if d.GroupCommit {
		s.wturn = make(chan struct{}, 1)
	}
	s.db.Store(db)
	// database/sql keeps 2 idle connections by default: under concurrent
	// decisions every other query opened a connection (a PostgreSQL
	// backend, or a SQLite file with its pragmas) and prepared its
	// statements again.
	// Past a burst, the idle connections are let go again.
	limitConns(db, 0)
	if err := db.PingContext(ctx); err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		return nil, s.explain(err)
	}
	return s, nil
}

// Interface guards.
var (
	_ warden.Store   = (*Store)(nil)
	_ warden.Spooler = (*Store)(nil)
)
