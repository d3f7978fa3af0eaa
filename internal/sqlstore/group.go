package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
)

// groupWriter is the group commit of WriteDecision: one goroutine per
// store takes every write that is waiting, runs them one after the other
// in one transaction, each under a savepoint of its own (one that fails
// is rolled back alone), and commits once. Under load, many decisions
// share one disk sync; alone, a write waits for nobody.
//
// Where writers lock rows (PostgreSQL), Dialect.GroupWriters groups may
// be under way at once, each in a goroutine and transaction of its own:
// a group there waits on round trips to the server, not on its disk, and
// groups of one process meet each other as groups of several replicas
// do (sessions locked in the order of their ids, a call recorded
// meanwhile found by the audit insert).
type groupWriter struct {
	mu      sync.Mutex
	queue   []*writeReq
	wake    chan struct{}
	quit    chan struct{} // closed by stop
	loops   sync.WaitGroup
	running int // goroutines started
	stopped bool
}

// maxGroup bounds the writes of one transaction.
const maxGroup = 256

// groupTimeout bounds one group's transaction.
const groupTimeout = 30 * time.Second

type writeReq struct {
	ctx context.Context
	st  *readStamp // what the call read with (CachedReads), or nil
	id  string
	fn  func(*warden.Session, bool) (*warden.DecisionRecord, error)
	res chan writeRes
}

type writeRes struct {
	sess warden.Session
	rec  warden.AuditRecord
	err  error
	// spool: the spool file had records waiting once the group was
	// done (one look a group, see spoolWaiting).
	spool bool
}

// write queues r and waits until the transaction that holds it has
// committed (or failed). It always waits for the answer: r.fn runs in the
// writer's goroutine, and the caller may read what fn wrote only after.
func (g *groupWriter) write(s *Store, r *writeReq) writeRes {
	r.res = make(chan writeRes, 1)
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return writeRes{err: fmt.Errorf("update session %q: the store is closed", r.id)}
	}
	if g.running == 0 {
		g.wake = make(chan struct{}, 1)
		g.quit = make(chan struct{})
	}
	if g.running < max(1, s.d.GroupWriters) {
		// One more writer, while fewer than the dialect's run: the
		// writes that come while every one is busy make the groups.
		g.running++
		g.loops.Add(1)
		go g.loop(s)
	}
	g.queue = append(g.queue, r)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	return <-r.res
}

// stop ends the writer once the waiting writes are done.
func (g *groupWriter) stop() {
	g.mu.Lock()
	wasStopped := g.stopped
	g.stopped = true
	running := g.running > 0
	g.mu.Unlock()
	if running {
		if !wasStopped {
			close(g.quit)
		}
		g.loops.Wait()
	}
}

// maxLinger bounds how long a writer waits for the rest of its callers
// before it begins a group (see linger), and lingerEnough is a group that
// needs no more: its commit is shared enough (at 64 clients, waiting for
// all of them left the writer idle a third of the time).
const (
	maxLinger    = 2 * time.Millisecond
	lingerEnough = 16
)

// linger is what a writer remembers of its last groups, to wait for the
// rest of its callers before it begins a group. Under load the writes
// come in cohorts: while one group commits, the callers of the group
// before send their next calls, so each group holds about half the
// callers and each half pays a commit of its own (16 clients made groups
// of 6 to 8; 64, groups of 13 to 24, at two thirds of the CPU a decision).
// A writer that just finished a group, and finds fewer writes waiting
// than the sessions its last two groups wrote (and lingerEnough), waits
// for more at most as long as its last group took (and maxLinger): one
// commit then serves every caller that is writing. A caller alone never waits (its session
// is the only one seen), nor does a write that finds the writer idle
// since before its last group's time.
type linger struct {
	prev, prev2 map[string]bool // the sessions of the last two groups
	took        time.Duration   // the last group's time
	ended       time.Time       // when it ended
	max         time.Duration   // the bound of a wait (0: maxLinger; tests set it)
}

// expect is how many writes the writer waits for: the sessions of its
// last two groups, when the last one ended within its own time of now;
// else none.
func (l *linger) expect(now time.Time) int {
	if l.prev == nil || now.Sub(l.ended) > l.took {
		return 0
	}
	n := len(l.prev)
	for id := range l.prev2 {
		if !l.prev[id] {
			n++
		}
	}
	return n
}

// done records a group of batch that began at began.
func (l *linger) done(batch []*writeReq, began, now time.Time) {
	ids := make(map[string]bool, len(batch))
	for _, r := range batch {
		ids[r.id] = true
	}
	l.prev2, l.prev = l.prev, ids
	l.took, l.ended = now.Sub(began), now
}

// gather waits, when l says to (see linger), until as many writes wait as
// l expects, the last group's time has passed, or the writer stops; then
// it takes the writes waiting (at most maxGroup).
func (g *groupWriter) gather(l *linger) (batch []*writeReq, stopped bool) {
	now := time.Now()
	if want := min(l.expect(now), lingerEnough); want > 1 {
		bound := maxLinger
		if l.max > 0 {
			bound = l.max
		}
		deadline := now.Add(min(l.took, bound))
		var timer *time.Timer
		for {
			g.mu.Lock()
			n, stopped := len(g.queue), g.stopped
			g.mu.Unlock()
			wait := time.Until(deadline)
			if n == 0 || n >= want || stopped || wait <= 0 {
				break
			}
			if timer == nil {
				timer = time.NewTimer(wait)
				defer timer.Stop()
			}
			select {
			case <-g.wake:
			case <-timer.C:
			case <-g.quit:
			}
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n := min(len(g.queue), maxGroup)
	batch = g.queue[:n:n]
	g.queue = g.queue[n:]
	return batch, g.stopped
}

func (g *groupWriter) loop(s *Store) {
	defer g.loops.Done()
	var l linger
	var wc *writerConn
	if s.d.DataVersion != "" || s.d.ConnVersion != nil {
		wc = &writerConn{}
		defer wc.release()
	}
	for {
		batch, stopped := g.gather(&l)
		if len(batch) > 0 {
			began := time.Now()
			s.commitGroupIn(batch, wc)
			l.done(batch, began, time.Now())
			continue
		}
		if stopped {
			return
		}
		select {
		case <-g.wake:
		case <-g.quit:
		}
	}
}

// commitGroup runs a group of writes in one transaction and commits once.
//
// The group's sessions are read with one query, each write's fn runs in
// turn on them in memory (a later write on a session sees what an
// earlier one made of it), and what they made is written with one
// statement a table: the sessions, the history, the audit records. A
// write that fails alone (its fn, a grant it would use that is gone, a
// call decided already) leaves nothing and the others go on, as if it
// had never been; a failure of the shared statements fails every write
// of the group. Nothing is written until the group's fns have run, so a
// statement a write costs on its own is one the group shares.
func (s *Store) commitGroup(batch []*writeReq) { s.commitGroupIn(batch, nil) }

// commitGroupIn is commitGroup on the writer's connection wc (nil: a
// connection of the pool).
func (s *Store) commitGroupIn(batch []*writeReq, wc *writerConn) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	res := make([]writeRes, len(batch))
	send := func() {
		spool := s.spoolWaiting()
		for i, r := range batch {
			res[i].spool = spool
			r.res <- res[i]
		}
	}
	fail := func(err error) {
		for i, r := range batch {
			if res[i].err == nil {
				res[i] = writeRes{err: fmt.Errorf("update session %q: %w", r.id, err)}
			}
		}
		send()
	}
	// alone writes each write of the group in a transaction of its own.
	alone := func() {
		for i, r := range batch {
			if err := r.ctx.Err(); err != nil {
				res[i] = writeRes{err: fmt.Errorf("update session %q: %w", r.id, err)}
				continue
			}
			// A deadlock or serialization failure rolled the write back
			// whole: it is tried again (groups under way at once, and
			// other replicas, meet so).
			for try := 0; ; try++ {
				res[i].sess, res[i].rec, res[i].err = s.writeAlone(r.ctx, r.id, r.fn)
				if res[i].err == nil || try == 3 || s.d.Retryable == nil || !s.d.Retryable(res[i].err) || r.ctx.Err() != nil {
					break
				}
			}
		}
		send()
	}
	var err error
	piped := false
	if s.d.Batch != nil {
		// Two round trips a group, one write or many.
		_, err = s.pipeGroup(ctx, batch, res)
		if piped = !errors.Is(err, errUnfit); !piped {
			clear(res)
		}
	}
	if !piped {
		if len(batch) == 1 && s.d.ForUpdate != "" {
			// Where writers lock rows, one write alone takes fewer round
			// trips than a group.
			alone()
			return
		}
		_, err = s.tryGroup(ctx, batch, res, wc)
	}
	switch {
	case err != nil && (errors.Is(err, errGroupConflict) || s.d.Retryable != nil && s.d.Retryable(err)):
		// Another writer got in the way (a call recorded meanwhile by
		// another replica, a deadlock): each write again, alone, which
		// tells each one what became of it.
		clear(res)
		alone()
	case err != nil:
		fail(err)
	default:
		send()
	}
}

// errGroupConflict: a call of the group was recorded before the group's
// insert (by an earlier group, or meanwhile by another writer), or a
// write's caller stopped waiting before the commit (callerGone).
var errGroupConflict = errors.New("a call of the group was recorded before")

// callerGone is errGroupConflict when a write of the group that succeeded
// has a caller that stopped waiting (its deadline passed while the group
// ran): the group is not committed, and each write is done again alone,
// so that a decision whose caller was told it failed (and recorded that
// failure under the call's id) is never committed after all.
func callerGone(batch []*writeReq, res []writeRes) error {
	for i, r := range batch {
		if res[i].err == nil && r.ctx.Err() != nil {
			return errGroupConflict
		}
	}
	return nil
}

// tryGroup runs batch in one transaction and commits it when a write
// succeeded; it fills res, and returns how many writes succeeded.
func (s *Store) tryGroup(ctx context.Context, batch []*writeReq, res []writeRes, wc *writerConn) (int, error) {
	var tx *sql.Tx
	var done func()
	var err error
	if wc != nil {
		tx, done, err = wc.begin(ctx, s)
	} else {
		tx, done, err = s.begin(ctx)
	}
	if err != nil {
		return 0, err
	}
	defer done()
	defer tx.Rollback()
	if s.d.HeldLock {
		ctx = context.WithoutCancel(ctx)
	}
	g := &group{s: s, tx: tx, q: prepared{s, tx}, changes: -1, cached: cachedIn(batch), gen: s.rcache.generation()}
	// Until this group commits, the writer knows nothing for sure.
	known := wc.take()
	if wc != nil {
		g.version = g.dataVersion(ctx, wc)
		if g.version >= 0 && g.version == known.version {
			g.known = known.sessions
		}
	}
	ok, err := g.run(ctx, batch, res)
	if err != nil || ok == 0 {
		// Nothing of a failed write is kept.
		return 0, err
	}
	if err := callerGone(batch, res); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	if wc != nil && g.version >= 0 && s.d.ConnVersion != nil {
		// The connection's number counts this commit too: the next group
		// compares with the number after it.
		g.version = wc.connVersion(s.d.ConnVersion)
	}
	wc.keep(g, known.sessions)
	return ok, nil
}

// writerConn is the connection a group writer keeps while it has work,
// where the database tells a connection whether another one committed
// since (Dialect.DataVersion), and the sessions as its last group left
// them. A group reads that number first, inside its transaction (which
// holds the write lock): unchanged since the last group committed, no
// other connection, of this process or another, wrote anything, so the
// sessions kept are the rows as they are, and the group reads only the
// others. Any failure forgets them. The connection goes back to the
// pool when the writer stops (Close), or when the store's database is
// opened again (a file replaced).
type writerConn struct {
	db      *sql.DB
	conn    *sql.Conn
	version int64
	// sessions are the sessions as the last group committed them, or
	// read them and left them unchanged; nil: none known.
	sessions map[string]warden.Session
}

// maxKnown bounds the sessions a writer keeps; past it they are all let
// go and kept again from the next group.
const maxKnown = 4096

// knownSessions is what a writer knew when its group began.
type knownSessions struct {
	version  int64
	sessions map[string]warden.Session
}

// begin starts a transaction in its turn (see Store.turn) on the kept
// connection, taking one from the pool when none is kept or the store's
// database changed (reopened).
func (wc *writerConn) begin(ctx context.Context, s *Store) (*sql.Tx, func(), error) {
	done, err := s.turn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if db := s.pool(ctx); wc.conn == nil || wc.db != db {
		wc.release()
		if wc.conn, err = db.Conn(ctx); err != nil {
			done()
			return nil, nil, err
		}
		wc.db = db
	}
	if s.d.HeldLock {
		// The wait for the lock is bounded by the database's own busy
		// timeout (see Dialect.HeldLock).
		ctx = context.WithoutCancel(ctx)
	}
	tx, err := wc.conn.BeginTx(ctx, nil)
	if err != nil {
		wc.release()
		done()
		return nil, nil, err
	}
	return tx, done, nil
}

// take returns what the writer knew and forgets it: only a group that
// commits makes it known again (keep).
func (wc *writerConn) take() knownSessions {
	if wc == nil {
		return knownSessions{}
	}
	k := knownSessions{version: wc.version, sessions: wc.sessions}
	wc.sessions = nil
	return k
}

// keep records the sessions of g, which committed, beside those known
// before it (prev, which g's transaction found still so, or nil).
func (wc *writerConn) keep(g *group, prev map[string]warden.Session) {
	if wc == nil || g.version < 0 {
		return
	}
	if g.known == nil || len(prev)+len(g.sessions) > maxKnown {
		prev = map[string]warden.Session{}
	}
	for id, gs := range g.sessions {
		if gs.stored || gs.written {
			prev[id] = gs.x // times as stored (see one)
		}
	}
	wc.version, wc.sessions = g.version, prev
}

// release gives the connection back to the pool and forgets the
// sessions.
func (wc *writerConn) release() {
	if wc == nil {
		return
	}
	if wc.conn != nil {
		wc.conn.Close()
	}
	*wc = writerConn{}
}

// connVersion reads the connection's number with read
// (Dialect.ConnVersion); -1 when it cannot.
func (wc *writerConn) connVersion(read func(driverConn any) (int64, error)) int64 {
	v := int64(-1)
	err := wc.conn.Raw(func(dc any) error {
		n, err := read(dc)
		if err == nil {
			v = n
		}
		return err
	})
	if err != nil || v < 0 {
		return -1
	}
	return v
}

// dataVersion reads the count of commits of wc's connection
// (Dialect.ConnVersion) or of other connections' (Dialect.DataVersion);
// -1 when it cannot: the group then reads every session, and the writer
// keeps none. Where a write of the group needs the count of changes (see
// readcache.go), it comes along, as it does with the sessions read.
func (g *group) dataVersion(ctx context.Context, wc *writerConn) int64 {
	var v, n int64
	if read := g.s.d.ConnVersion; read != nil {
		if v = wc.connVersion(read); v < 0 {
			return -1
		}
		if g.cached && g.changes < 0 {
			if err := g.q.QueryRowContext(ctx, changesQuery).Scan(&n); err != nil {
				return -1
			}
			g.sawChanges(n)
		}
		return v
	}
	q, dest := g.s.d.DataVersion, []any{&v}
	count := g.cached && g.changes < 0
	if count {
		q, dest = `SELECT (`+q+`)`+changesCol, append(dest, &n)
	}
	if err := g.q.QueryRowContext(ctx, q).Scan(dest...); err != nil || v < 0 {
		return -1
	}
	if count {
		g.sawChanges(n)
	}
	return v
}

// sawChanges records the count of changes n read in the group's
// transaction, for the group and the store's read cache.
func (g *group) sawChanges(n int64) {
	g.changes = n
	g.s.rcache.saw(n, g.gen)
}

// group is the state of one group's transaction.
type group struct {
	s  *Store
	tx *sql.Tx
	q  prepared
	// sessions by id, as the group's writes have left them.
	sessions map[string]*groupSession
	order    []*groupSession // in the order they were first written
	audits   []pendingAudit
	history  []historyOp
	callIDs  map[string]bool // call ids recorded by this group
	changes  int64           // the count of changes read in the group's transaction (-1: not yet)
	cached   bool            // a write of the group decided on a kept answer (cachedIn)
	gen      uint64          // the cache's generation when the group began
	// pipe: the group is sent in batches (pipeGroup); g.tx and g.q are
	// not set.
	pipe bool
	// placeholders are the sessions this group inserted empty, to lock
	// them (where writers lock rows); one no write of the group stored
	// is deleted again.
	placeholders map[string]bool
	// known are sessions as they are stored, which the group need not
	// read (see writerConn); version is the data version the group's
	// transaction read.
	known   map[string]warden.Session
	version int64
}

type groupSession struct {
	x       warden.Session
	stored  bool // in the database, or written by a write of this group
	written bool
	// newest is the id of the session's newest audit record, read by a
	// pipelined group's newestStmt (newestRead; see historyCurrent).
	newest     int64
	newestRead bool
}

type pendingAudit struct {
	i   int // the write's index in the batch
	rec warden.AuditRecord
}

// historyOp is a history entry to add (h) or the history to trim to keep
// entries (keep > 0).
type historyOp struct {
	h    *warden.HistoryEntry
	keep int
}

// stmtRows is how many rows a statement of the group has at most: more
// go in several statements. Each size is prepared once (a statement of
// many rows, parsed for each group, cost more than it saved).
const stmtRows = 16

// chunks calls fn with each run [i, j) of at most stmtRows of n rows.
func chunks(n int, fn func(i, j int) error) error {
	for i := 0; i < n; i += stmtRows {
		if err := fn(i, min(n, i+stmtRows)); err != nil {
			return err
		}
	}
	return nil
}

// values is the VALUES list of rows rows of cols columns each.
func values(rows, cols int) string {
	one := "(?" + strings.Repeat(", ?", cols-1) + ")"
	return one + strings.Repeat(", "+one, rows-1)
}

// writes runs each write of batch on the group's sessions in memory
// (one), filling res, and returns how many succeeded. A write whose
// caller stopped waiting is not run; errUnfit (a pipelined group that
// cannot carry a write) ends the group.
func (g *group) writes(ctx context.Context, batch []*writeReq, res []writeRes) (int, error) {
	ok := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			// Its caller has stopped waiting for a decision: make none.
			res[i].err = fmt.Errorf("update session %q: %w", r.id, err)
			continue
		}
		sess, err := g.one(ctx, i, r)
		if errors.Is(err, errUnfit) {
			return 0, errUnfit
		}
		if err != nil {
			res[i].err = err
			continue
		}
		res[i].sess = sess
		ok++
	}
	return ok, nil
}

// run runs the writes of batch, filling res, and writes what they made.
// It returns how many writes succeeded; an error is a failure of the
// group as a whole.
func (g *group) run(ctx context.Context, batch []*writeReq, res []writeRes) (int, error) {
	if err := g.load(ctx, batch); err != nil {
		return 0, err
	}
	ok, err := g.writes(ctx, batch, res)
	if err != nil || ok == 0 {
		return 0, err
	}
	joint, err := g.flushJoint(ctx, res)
	if err != nil {
		return 0, err
	}
	if !joint {
		if err := g.flushSessions(ctx); err != nil {
			return 0, err
		}
		if err := g.flushHistory(ctx); err != nil {
			return 0, err
		}
		if err := g.flushAudit(ctx, res); err != nil {
			return 0, err
		}
	}
	var unused []any
	for id := range g.placeholders {
		if !g.sessions[id].written {
			unused = append(unused, id)
		}
	}
	err = chunks(len(unused), func(i, j int) error {
		_, err := g.q.ExecContext(ctx, g.s.d.Rebind(`DELETE FROM sessions WHERE id IN (?`+strings.Repeat(", ?", j-i-1)+`)`), unused[i:j]...)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("write sessions: %w", err)
	}
	return ok, nil
}

// load reads the sessions of the group's writes.
func (g *group) load(ctx context.Context, batch []*writeReq) error {
	g.sessions = make(map[string]*groupSession, len(batch))
	var ids []any
	for _, r := range batch {
		if _, ok := g.sessions[r.id]; !ok && r.ctx.Err() == nil {
			if x, ok := g.known[r.id]; ok {
				g.sessions[r.id] = &groupSession{x: x, stored: true}
				continue
			}
			g.sessions[r.id] = &groupSession{x: warden.Session{ID: r.id}}
			ids = append(ids, r.id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// Where writers lock rows, every group locks its sessions in the
	// order of their ids: two groups never wait for each other in a
	// circle.
	slices.SortFunc(ids, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	if err := g.read(ctx, ids); err != nil || g.s.d.ForUpdate == "" {
		return err
	}
	// A session no row holds yet is inserted (empty) and locked, so
	// that a group of another replica that makes it too waits for this
	// one; a session another writer made meanwhile is read as it is.
	var missing []any
	for _, id := range ids {
		if !g.sessions[id.(string)].stored {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	err := chunks(len(missing), func(i, j int) error {
		q := g.s.d.Rebind(`INSERT INTO sessions (id) VALUES ` + values(j-i, 1) + ` ON CONFLICT (id) DO NOTHING RETURNING id`)
		rows, err := g.q.QueryContext(ctx, q, missing[i:j]...)
		if err != nil {
			return fmt.Errorf("write sessions: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("write sessions: %w", err)
			}
			if g.placeholders == nil {
				g.placeholders = map[string]bool{}
			}
			g.placeholders[id] = true
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	return g.read(ctx, missing)
}

// read reads (and, where writers lock rows, locks) the sessions of ids,
// in order. A session this group inserted empty stays new (not stored).
func (g *group) read(ctx context.Context, ids []any) error {
	return chunks(len(ids), func(i, j int) error {
		// The count of changes comes along where a write needs it (see
		// readcache.go), read in the same statement.
		count := ""
		if g.changes < 0 && g.cached {
			count = changesCol
		}
		g.s.sessionReads.Add(1)
		q := g.s.d.Rebind(`SELECT ` + sessionCols + count + ` FROM sessions WHERE id IN (?` + strings.Repeat(", ?", j-i-1) + `) ORDER BY id` + g.s.d.ForUpdate)
		rows, err := g.q.QueryContext(ctx, q, ids[i:j]...)
		if err != nil {
			return fmt.Errorf("read sessions: %w", err)
		}
		defer rows.Close()
		n := int64(-1)
		var row scanner = rows
		if count != "" {
			row = withChanges{rows, &n}
		}
		for rows.Next() {
			x, err := scanSession(row)
			if err != nil {
				return fmt.Errorf("read sessions: %w", err)
			}
			if gs := g.sessions[x.ID]; gs != nil && !g.placeholders[x.ID] {
				gs.x, gs.stored = x, true
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read sessions: %w", err)
		}
		if n >= 0 {
			g.sawChanges(n)
		}
		return nil
	})
}

// one runs one write: its fn on the session as the group has it, the
// grants it uses, and the check that its call was not decided before.
// On an error nothing of it is kept.
func (g *group) one(ctx context.Context, i int, r *writeReq) (warden.Session, error) {
	if g.pipe && r.st != nil && r.st.cached && g.changes < 0 {
		return warden.Session{}, errUnfit // the count of changes would be a query of its own
	}
	if err := g.s.checkStale(ctx, g.q, r.st, &g.changes); err != nil {
		return warden.Session{}, err
	}
	gs := g.sessions[r.id]
	x := gs.x
	dr, err := r.fn(&x, !gs.stored)
	if err != nil {
		return warden.Session{}, err
	}
	x.ID = r.id
	if dr != nil && dr.History != nil && dr.History.Action == "" {
		return warden.Session{}, errors.New("add history: action is empty")
	}
	if dr != nil {
		for _, h := range dr.MoreHistory {
			if h.Action == "" {
				return warden.Session{}, errors.New("add history: action is empty")
			}
		}
	}
	if dr != nil && dr.Audit.CallID != "" {
		if err := g.fresh(dr.Audit.CallID); err != nil {
			return warden.Session{}, err
		}
	}
	if dr != nil && dr.HistoryRead {
		// A record of the session earlier in this group is newer than
		// any the decision read.
		for _, a := range g.audits {
			if a.rec.Session == r.id {
				return warden.Session{}, StaleHistory{Session: r.id}
			}
		}
		switch {
		case g.pipe && !gs.newestRead:
			// The session's newest record would be a query whose answer
			// decides: this group goes the other way, and the next ones
			// read it with their sessions.
			g.s.pipeNewest.Store(true)
			return warden.Session{}, errUnfit
		case g.pipe:
			if gs.newest > dr.HistoryThrough {
				return warden.Session{}, StaleHistory{Session: r.id}
			}
		default:
			if err := g.s.historyCurrent(ctx, g.q, r.id, dr); err != nil {
				return warden.Session{}, err
			}
		}
	}
	if dr != nil && len(dr.UseGrants) > 0 {
		if g.pipe {
			return warden.Session{}, errUnfit // each grant's use is a statement whose answer decides
		}
		if err := g.useGrants(ctx, dr.UseGrants); err != nil {
			return warden.Session{}, err
		}
	}
	// Reflect the stored precision.
	x.StartedAt, x.LastSeen, x.EndedAt = tm(ts(x.StartedAt)), tm(ts(x.LastSeen)), tm(ts(x.EndedAt))
	gs.x, gs.stored = x, true
	if !gs.written {
		gs.written = true
		g.order = append(g.order, gs)
	}
	if dr != nil {
		if dr.History != nil {
			h := *dr.History
			g.history = append(g.history, historyOp{h: &h})
		}
		for _, h := range dr.MoreHistory {
			g.history = append(g.history, historyOp{h: &h})
		}
		if dr.HistoryKeep > 0 {
			g.history = append(g.history, historyOp{keep: dr.HistoryKeep})
		}
		if dr.Audit.CallID != "" {
			if g.callIDs == nil {
				g.callIDs = map[string]bool{}
			}
			g.callIDs[dr.Audit.CallID] = true
		}
		g.audits = append(g.audits, pendingAudit{i: i, rec: dr.Audit})
	}
	return x, nil
}

// callRecorded finds an audit record by its call id, which is never
// empty: the condition that call_id is not empty lets SQLite use the
// partial index audit_call, which a bound value alone does not
// (TestCallIDLookupsUseTheIndex).
const callRecorded = `SELECT 1 FROM audit WHERE call_id = ? AND call_id <> ''`

// fresh fails with warden.ErrConflict when the call was recorded before
// by this group. One recorded before the group is found by the audit
// records' insert (ON CONFLICT ... DO NOTHING: fewer rows than records,
// errGroupConflict), and each write of the group is then made alone,
// which tells the one it was: a look here cost a query a decision, some
// 13 us of the group writer's time.
func (g *group) fresh(callID string) error {
	if g.callIDs[callID] {
		return fmt.Errorf("append audit: call %s was decided already: %w", callID, warden.ErrConflict)
	}
	return nil
}

// useGrants counts one use of each grant, all or none.
func (g *group) useGrants(ctx context.Context, ids []string) error {
	if _, err := g.tx.ExecContext(ctx, "SAVEPOINT grants"); err != nil {
		return fmt.Errorf("use grants: %w", err)
	}
	var failed error
	for _, id := range ids {
		res, err := g.q.ExecContext(ctx, g.s.d.Rebind(useGrant), id, ts(g.s.Now()))
		if err != nil {
			failed = fmt.Errorf("use grant %s: %w", id, err)
			break
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			failed = &warden.GrantUnusableError{ID: id}
			break
		}
	}
	if failed != nil {
		if _, err := g.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT grants"); err != nil {
			return fmt.Errorf("use grants: %w", err)
		}
	}
	if _, err := g.tx.ExecContext(ctx, "RELEASE SAVEPOINT grants"); err != nil && failed == nil {
		return fmt.Errorf("use grants: %w", err)
	}
	return failed
}

// flushSessions writes the group's sessions, stmtRows a statement.
func (g *group) flushSessions(ctx context.Context) error {
	return chunks(len(g.order), func(i, j int) error {
		q, args := g.sessionsUpsert(g.order[i:j], nil)
		if _, err := g.q.ExecContext(ctx, g.s.d.Rebind(q), args...); err != nil {
			return fmt.Errorf("write sessions: %w", err)
		}
		return nil
	})
}

// sessionsUpsert is the statement that writes sessions, and its
// arguments appended to args.
// sessionsOnConflict makes an insert of whole sessions replace the rows
// of those stored already.
const sessionsOnConflict = `
			ON CONFLICT (id) DO UPDATE SET role = excluded.role, host = excluded.host,
			parent = excluded.parent, depth = excluded.depth, first_tool = excluded.first_tool,
			calls = excluded.calls, violations = excluded.violations, governance = excluded.governance,
			compactions = excluded.compactions, resumes = excluded.resumes, intent_id = excluded.intent_id,
			intent = excluded.intent, status = excluded.status, started_at = excluded.started_at,
			last_seen = excluded.last_seen, ended_at = excluded.ended_at, archived = excluded.archived,
			agent = excluded.agent`

func (g *group) sessionsUpsert(list []*groupSession, args []any) (string, []any) {
	for _, gs := range list {
		x := gs.x
		args = append(args, x.ID, x.Role, x.Host, x.Parent, x.Depth, x.FirstTool, x.Calls, x.Violations,
			b2i(x.GovernanceInjected), x.Compactions, x.Resumes, x.IntentID, x.Intent, x.Status,
			ts(x.StartedAt), ts(x.LastSeen), ts(x.EndedAt), b2i(x.Archived), x.Agent)
	}
	q := `INSERT INTO sessions (` + sessionCols + `) VALUES ` + values(len(list), sessionColCount) + sessionsOnConflict
	return q, args
}

// flushJoint writes the group's sessions, history entries and audit
// records in one statement where the database runs an INSERT inside a
// WITH clause of another (Dialect.ModifyingCTE: PostgreSQL) and each fits
// in one (stmtRows rows), then trims the history: two round trips less a
// group. It reports false, having written nothing, where it does not
// apply; the tables are then written one after the other.
func (g *group) flushJoint(ctx context.Context, res []writeRes) (bool, error) {
	q, args, keep, ok, err := g.jointQuery(true)
	if err != nil || !ok {
		return false, err
	}
	rows, err := g.q.QueryContext(ctx, g.s.d.Rebind(q), args...)
	if err != nil {
		return false, fmt.Errorf("write sessions, history and audit: %w", err)
	}
	ids, err := auditIDs(rows)
	if err != nil {
		return false, err
	}
	if err := giveIDs(g.audits, ids, res); err != nil {
		return false, err
	}
	if keep > 0 {
		if _, err := g.s.archiveHistory(ctx, g.q, keep); err != nil {
			return false, err
		}
	}
	return true, nil
}

// jointQuery is flushJoint's statement and its arguments, and the length
// to trim the history to after it (0: none); ok is false where it does
// not apply. onConflict: a call recorded before is skipped (ON CONFLICT
// DO NOTHING, fewer ids returned) rather than an error.
func (g *group) jointQuery(onConflict bool) (q string, args []any, keep int, ok bool, err error) {
	if !g.s.d.ModifyingCTE || len(g.audits) == 0 || len(g.audits) > stmtRows || len(g.order) > stmtRows {
		return "", nil, 0, false, nil
	}
	var entries []warden.HistoryEntry
	for _, op := range g.history {
		switch {
		case op.h != nil:
			entries = append(entries, *op.h)
		case keep == 0 || keep == op.keep:
			keep = op.keep
		default:
			return "", nil, 0, false, nil // trims of different lengths: in turn (flushHistory)
		}
	}
	if len(entries) > stmtRows {
		return "", nil, 0, false, nil
	}
	q, args = g.sessionsUpsert(g.order, nil)
	q = `WITH s AS (` + q + `)`
	if len(entries) > 0 {
		for _, h := range entries {
			if args, err = g.s.historyRow(args, h); err != nil {
				return "", nil, 0, false, err
			}
		}
		q += `, h AS (INSERT INTO history (time, session, agent, action, result) VALUES ` + values(len(entries), 5) + `)`
	}
	for k := range g.audits {
		args = auditArgs(args, g.stampAudit(k))
	}
	q += ` INSERT INTO audit (` + auditCols + `) VALUES ` + values(len(g.audits), auditColCount)
	if onConflict {
		q += ` ON CONFLICT (call_id) WHERE call_id <> '' DO NOTHING`
	}
	return q + ` RETURNING id`, args, keep, true, nil
}

// stampAudit gives the group's k-th audit record its time (now, when it
// has none, at the stored precision) and arguments (empty, when none),
// and returns it.
func (g *group) stampAudit(k int) warden.AuditRecord {
	r := &g.audits[k].rec
	if r.Time.IsZero() {
		r.Time = g.s.Now()
	}
	r.Time = tm(ts(r.Time))
	if r.Args == nil {
		r.Args = map[string]any{}
	}
	return *r
}

// flushHistory adds the group's history entries and trims the history.
// When every write trims to the same length, the entries go in one
// statement and the history is trimmed once: the same as one after the
// other, since an entry once archived stays so.
func (g *group) flushHistory(ctx context.Context) error {
	var entries []warden.HistoryEntry
	keep, sameKeep := 0, true
	for _, op := range g.history {
		if op.h != nil {
			entries = append(entries, *op.h)
		} else if keep == 0 || keep == op.keep {
			keep = op.keep
		} else {
			sameKeep = false
		}
	}
	if !sameKeep {
		for _, op := range g.history {
			var err error
			if op.h != nil {
				err = g.s.addHistory(ctx, g.q, *op.h)
			} else {
				_, err = g.s.archiveHistory(ctx, g.q, op.keep)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	err := chunks(len(entries), func(i, j int) error {
		args := make([]any, 0, 5*(j-i))
		for _, h := range entries[i:j] {
			var err error
			if args, err = g.s.historyRow(args, h); err != nil {
				return err
			}
		}
		q := `INSERT INTO history (time, session, agent, action, result) VALUES ` + values(j-i, 5)
		if _, err := g.q.ExecContext(ctx, g.s.d.Rebind(q), args...); err != nil {
			return fmt.Errorf("add history: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if keep > 0 {
		if _, err := g.s.archiveHistory(ctx, g.q, keep); err != nil {
			return err
		}
	}
	return nil
}

// flushAudit inserts the group's audit records, stmtRows a statement,
// and gives each write its record with the id the database numbered it
// with. The ids of one INSERT are numbered in the order of its rows (the
// table numbers each new row one past the largest so far), so the
// returned ids, sorted, are the rows' in order.
func (g *group) flushAudit(ctx context.Context, res []writeRes) error {
	return chunks(len(g.audits), func(i, j int) error {
		part := g.audits[i:j]
		args := make([]any, 0, auditColCount*len(part))
		for k := range part {
			r := &part[k].rec
			if r.Time.IsZero() {
				r.Time = g.s.Now()
			}
			r.Time = tm(ts(r.Time))
			if r.Args == nil {
				r.Args = map[string]any{}
			}
			args = auditArgs(args, *r)
		}
		// A call recorded before the group (or by another writer
		// meanwhile) is not inserted again: the group is then made alone.
		q := `INSERT INTO audit (` + auditCols + `) VALUES ` + values(len(part), auditColCount) +
			` ON CONFLICT (call_id) WHERE call_id <> '' DO NOTHING`
		var ids []int64
		var err error
		if g.s.d.ConsecutiveIDs {
			ids, err = g.insertConsecutive(ctx, q, args, len(part))
		} else {
			var rows *sql.Rows
			if rows, err = g.q.QueryContext(ctx, g.s.d.Rebind(q+` RETURNING id`), args...); err != nil {
				return fmt.Errorf("append audit: %w", err)
			}
			ids, err = auditIDs(rows)
		}
		if err != nil {
			return err
		}
		return giveIDs(part, ids, res)
	})
}

// auditIDs reads the ids an audit insert returned, and closes rows.
func auditIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("append audit: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("append audit: %w", err)
	}
	return ids, nil
}

// giveIDs gives the records of audits, in order, the ids one insert gave
// them (in order too), and each write its record; fewer ids than records
// is a call recorded before (errGroupConflict).
func giveIDs(audits []pendingAudit, ids []int64, res []writeRes) error {
	if len(ids) != len(audits) {
		return errGroupConflict
	}
	slices.Sort(ids)
	for k, a := range audits {
		a.rec.ID = ids[k]
		res[a.i].rec = a.rec
	}
	return nil
}

// insertConsecutive runs the audit insert q of n records where the
// database numbers them one after the other (Dialect.ConsecutiveIDs):
// when all n went in, their ids are the n up to the last insert id; when
// fewer did (a call recorded before), it returns fewer ids.
func (g *group) insertConsecutive(ctx context.Context, q string, args []any, n int) ([]int64, error) {
	r, err := g.q.ExecContext(ctx, g.s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("append audit: %w", err)
	}
	got, err := r.RowsAffected()
	if err != nil {
		return nil, fmt.Errorf("append audit: %w", err)
	}
	if got != int64(n) {
		return nil, nil
	}
	last, err := r.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("append audit: %w", err)
	}
	ids := make([]int64, n)
	for k := range ids {
		ids[k] = last - int64(n-1-k)
	}
	return ids, nil
}
