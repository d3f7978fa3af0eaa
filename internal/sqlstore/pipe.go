package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// BatchStmt is one statement of a batch (Dialect.Batch).
type BatchStmt struct {
	// Query is the statement, rebound to the database's placeholders.
	Query string
	Args  []any
	// Row, when set, is called with each row the statement returns, in
	// order, before the next statement's rows; nil: the rows (if any)
	// are not read.
	Row func(r interface{ Scan(dest ...any) error }) error
	// What names the statement in an error ("write sessions").
	What string
}

// errUnfit: the group needs what the pipelined group does not carry (a
// grant used, a count of changes read on its own): it is written the
// way of one statement a round trip instead (tryGroup).
var errUnfit = errors.New("the group does not fit in two batches")

// rollbackTimeout bounds the ROLLBACK of a pipelined group that failed.
const rollbackTimeout = 5 * time.Second

// pipeGroup is tryGroup in two round trips where the dialect sends
// statements in batches (Dialect.Batch: PostgreSQL's pipeline): BEGIN and
// the sessions locked and read in one, every write and COMMIT in the
// other (a session's first call: one more, which inserts it). Each
// statement takes its rows as arrays (unnest, = ANY), so its text, and
// the statement prepared once a connection, is the same for any group.
// Such statements are PostgreSQL's: Batch is a PostgreSQL dialect's.
// The writes' fns run between the two, on the sessions read. It
// fills res and returns how many writes succeeded; errUnfit (nothing
// written) when a write needs a statement whose answer it waits for.
//
// A call recorded before (by an earlier group, or meanwhile by another
// writer) fails the audit insert, which here has no ON CONFLICT clause:
// a conflict must stop the batch before its COMMIT. It is reported as
// errGroupConflict, as tryGroup does.
func (s *Store) pipeGroup(ctx context.Context, batch []*writeReq, res []writeRes) (int, error) {
	lone := len(batch) == 1
	if lone {
		// A write alone runs under its caller's context, as writeAlone
		// does: a caller that gave up (its deadline, a store held by a
		// lock) leaves no record behind, and the gate records what it
		// answered instead (gatetest's DecisionTimedOut). So its COMMIT
		// waits for its writes: three round trips.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(batch[0].ctx, groupTimeout)
		defer cancel()
	}
	done, err := s.turn(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	conn, err := s.pool(ctx).Conn(ctx)
	if err != nil {
		return 0, err
	}
	// A connection still in a transaction is not used again: the
	// driver drops it (pgx's ResetSession) when the ROLLBACK failed.
	defer conn.Close()
	open := false
	defer func() {
		if open {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			defer cancel()
			_ = s.d.Batch(rctx, conn, []BatchStmt{{Query: "ROLLBACK", What: "roll back"}})
		}
	}()
	g := &group{s: s, pipe: true, changes: -1, cached: cachedIn(batch), gen: s.rcache.generation()}

	// The first round trip: BEGIN, the sessions locked, the missing
	// ones inserted empty (and so locked), all read.
	ids := g.ids(batch)
	stmts := []BatchStmt{{Query: "BEGIN", What: "begin"}}
	if len(ids) > 0 {
		stmts = append(stmts, g.loadStmt(ids))
		if s.pipeNewest.Load() {
			stmts = append(stmts, g.newestStmt(ids))
		}
	}
	open = true
	if err := s.d.Batch(ctx, conn, stmts); err != nil {
		return 0, err
	}
	// A session no row holds yet (a session's first call): one round
	// trip more, which inserts it.
	var missing []any
	for _, id := range ids {
		if !g.sessions[id.(string)].stored {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		if err := s.d.Batch(ctx, conn, g.missingStmts(missing)); err != nil {
			return 0, err
		}
	}
	ok, err := g.writes(ctx, batch, res)
	if err != nil || ok == 0 {
		return 0, err
	}

	// The second: every write, and COMMIT; not for a caller that stopped
	// waiting meanwhile (callerGone).
	if err := callerGone(batch, res); err != nil {
		return 0, err
	}
	stmts, after, err := g.flushStmts(res)
	if err != nil {
		return 0, err
	}
	if !lone {
		stmts = append(stmts, BatchStmt{Query: "COMMIT", What: "commit"})
	}
	if err := s.d.Batch(ctx, conn, stmts); err != nil {
		if s.d.Duplicate != nil && s.d.Duplicate(err) {
			return 0, errGroupConflict
		}
		return 0, err
	}
	if lone {
		// Its COMMIT once the writes are done and the caller still
		// waits: a write held (a lock) past its caller's deadline is
		// rolled back, as database/sql's transaction does, never
		// committed after the caller was told it failed.
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := s.d.Batch(ctx, conn, []BatchStmt{{Query: "COMMIT", What: "commit"}}); err != nil {
			return 0, err
		}
	}
	open = false
	if err := after(); err != nil {
		// Committed: an answer short of ids is the database's fault, not
		// the writes'. It is not seen (the audit insert fails instead).
		return 0, err
	}
	return ok, nil
}

// ids makes the group's sessions (none read yet) and returns their ids,
// sorted: where writers lock rows, every group locks its sessions in the
// order of their ids, and two groups never wait for each other in a
// circle.
func (g *group) ids(batch []*writeReq) []any {
	g.sessions = make(map[string]*groupSession, len(batch))
	var ids []any
	for _, r := range batch {
		if _, ok := g.sessions[r.id]; !ok && r.ctx.Err() == nil {
			g.sessions[r.id] = &groupSession{x: warden.Session{ID: r.id}}
			ids = append(ids, r.id)
		}
	}
	slices.SortFunc(ids, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	return ids
}

// loadStmt is the statement that locks and reads the sessions of ids,
// in id order (one array argument: the same statement, prepared once a
// connection, for any number of sessions). The count of changes comes
// along where a write needs it (see readcache.go).
func (g *group) loadStmt(ids []any) BatchStmt {
	count := ""
	var n *int64
	if g.cached && g.changes < 0 {
		count, n = changesCol, new(int64)
	}
	return BatchStmt{
		Query: g.s.d.Rebind(`SELECT ` + sessionCols + count + ` FROM sessions WHERE id = ANY(?::text[]) ORDER BY id` + g.s.d.ForUpdate),
		Args:  []any{strs(ids)}, What: "read sessions",
		Row: func(r interface{ Scan(dest ...any) error }) error {
			var row scanner = r
			if n != nil {
				row = withChanges{r, n}
			}
			x, err := scanSession(row)
			if err != nil {
				return err
			}
			if n != nil && g.changes < 0 {
				g.sawChanges(*n)
			}
			if gs := g.sessions[x.ID]; gs != nil && !g.placeholders[x.ID] {
				gs.x, gs.stored = x, true
			}
			return nil
		},
	}
}

// newestStmt reads the newest audit record of each session of ids (see
// historyCurrent), for a group whose writes need it (Store.pipeNewest).
// It is a statement of its own, after the one that locks the sessions:
// a statement sees what was committed when it began, and the locking
// one may have begun before the group that held a session's lock
// committed its record.
func (g *group) newestStmt(ids []any) BatchStmt {
	return BatchStmt{
		Query: g.s.d.Rebind(`SELECT s.id` + newestSub + ` FROM unnest(?::text[]) AS s (id)`),
		Args:  []any{strs(ids)}, What: "read the sessions' newest records",
		Row: func(r interface{ Scan(dest ...any) error }) error {
			var id string
			var v int64
			if err := r.Scan(&id, &v); err != nil {
				return err
			}
			if gs := g.sessions[id]; gs != nil {
				gs.newest, gs.newestRead = v, true
			}
			return nil
		},
	}
}

// missingStmts are the statements that insert the sessions of ids no row
// holds (empty, and so locked: a writer of another replica that makes
// one too waits for this group), in id order, and read them: one
// another writer made meanwhile is read as it is; one this group
// inserted stays new (not stored).
func (g *group) missingStmts(ids []any) []BatchStmt {
	stmts := []BatchStmt{{
		Query: g.s.d.Rebind(`INSERT INTO sessions (id) SELECT unnest(?::text[]) ON CONFLICT (id) DO NOTHING RETURNING id`),
		Args:  []any{strs(ids)}, What: "write sessions",
		Row: func(r interface{ Scan(dest ...any) error }) error {
			var id string
			if err := r.Scan(&id); err != nil {
				return err
			}
			if g.placeholders == nil {
				g.placeholders = map[string]bool{}
			}
			g.placeholders[id] = true
			return nil
		},
	}, g.loadStmt(ids)}
	if g.s.pipeNewest.Load() {
		stmts = append(stmts, g.newestStmt(ids))
	}
	return stmts
}

// flushStmts returns the statements that write what the group's writes
// made, and a func to run once they succeeded, which gives each write
// its audit record with its id. The sessions, the history entries and
// the audit records go in one statement (as flushJoint), each table's
// rows as arrays, one a column: its text is the same for any number of
// rows. errUnfit: trims of the history to different lengths.
func (g *group) flushStmts(res []writeRes) ([]BatchStmt, func() error, error) {
	var entries []any
	keep := 0
	for _, op := range g.history {
		switch {
		case op.h != nil:
			var err error
			if entries, err = g.s.historyRow(entries, *op.h); err != nil {
				return nil, nil, err
			}
		case keep == 0 || keep == op.keep:
			keep = op.keep
		default:
			return nil, nil, errUnfit
		}
	}
	var sargs []any
	for _, gs := range g.order {
		x := gs.x
		sargs = append(sargs, x.ID, x.Role, x.Host, x.Parent, x.Depth, x.FirstTool, x.Calls, x.Violations,
			b2i(x.GovernanceInjected), x.Compactions, x.Resumes, x.IntentID, x.Intent, x.Status,
			ts(x.StartedAt), ts(x.LastSeen), ts(x.EndedAt), b2i(x.Archived), x.Agent)
	}
	var args []any
	var ctes []string
	sq := ""
	if len(g.order) > 0 {
		var from string
		from, args = unnest(args, sargs, sessionColCount)
		sq = `INSERT INTO sessions (` + sessionCols + `) SELECT * FROM ` + from + sessionsOnConflict
		ctes = append(ctes, `s AS (`+sq+`)`)
	}
	if len(entries) > 0 {
		var from string
		from, args = unnest(args, entries, 5)
		ctes = append(ctes, `h AS (INSERT INTO history (time, session, agent, action, result) SELECT * FROM `+from+`)`)
	}
	var stmts []BatchStmt
	var after func() error
	switch {
	case len(g.audits) > 0:
		var aargs []any
		for k := range g.audits {
			aargs = auditArgs(aargs, g.stampAudit(k))
		}
		var from string
		from, args = unnest(args, aargs, auditColCount)
		q := `INSERT INTO audit (` + auditCols + `) SELECT * FROM ` + from + ` RETURNING id`
		if len(ctes) > 0 {
			q = `WITH ` + strings.Join(ctes, `, `) + ` ` + q
		}
		var st BatchStmt
		st, after = g.auditIDs(q, args, g.audits, res, "write sessions, history and audit")
		stmts = append(stmts, st)
	case len(ctes) > 0:
		// No record (a session's update alone): the last table's insert
		// is the statement.
		last := ctes[len(ctes)-1]
		q := strings.TrimSuffix(last[strings.Index(last, `(`)+1:], `)`)
		if len(ctes) > 1 {
			q = `WITH ` + strings.Join(ctes[:len(ctes)-1], `, `) + ` ` + q
		}
		stmts = append(stmts, BatchStmt{Query: g.s.d.Rebind(q), Args: args, What: "write sessions and history"})
	}
	if keep > 0 {
		stmts = append(stmts, g.archiveStmt(keep))
	}
	var unused []any
	for id := range g.placeholders {
		if !g.sessions[id].written {
			unused = append(unused, id)
		}
	}
	if len(unused) > 0 {
		stmts = append(stmts, BatchStmt{
			Query: g.s.d.Rebind(`DELETE FROM sessions WHERE id = ANY(?::text[])`),
			Args:  []any{strs(unused)}, What: "write sessions",
		})
	}
	if after == nil {
		after = func() error { return nil }
	}
	return stmts, after, nil
}

// unnest is the FROM item of rows of cols columns given row after row in
// flat: unnest(?::text[], ?::bigint[], ...), a typed array a column,
// whose values it appends to args. A string column is text, an integer
// one bigint (the insert casts it to the column's type).
func unnest(args, flat []any, cols int) (string, []any) {
	rows := len(flat) / cols
	var b strings.Builder
	b.WriteString("unnest(")
	for c := range cols {
		if c > 0 {
			b.WriteString(", ")
		}
		v := reflect.ValueOf(flat[c])
		switch v.Kind() {
		case reflect.String:
			col := make([]string, rows)
			for r := range rows {
				col[r] = reflect.ValueOf(flat[r*cols+c]).String()
			}
			args = append(args, col)
			b.WriteString("?::text[]")
		default:
			col := make([]int64, rows)
			for r := range rows {
				col[r] = reflect.ValueOf(flat[r*cols+c]).Int()
			}
			args = append(args, col)
			b.WriteString("?::bigint[]")
		}
	}
	b.WriteString(")")
	return b.String(), args
}

// strs is ids (strings) as a []string.
func strs(ids []any) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.(string)
	}
	return out
}

// auditIDs is the statement q (an audit insert RETURNING id, its rows
// those of part) and the func that gives each write of part its record
// with the id the database numbered it with (see flushAudit).
func (g *group) auditIDs(q string, args []any, part []pendingAudit, res []writeRes, what string) (BatchStmt, func() error) {
	ids := make([]int64, 0, len(part))
	st := BatchStmt{Query: g.s.d.Rebind(q), Args: args, What: what,
		Row: func(r interface{ Scan(dest ...any) error }) error {
			var id int64
			if err := r.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
			return nil
		}}
	return st, func() error {
		if len(ids) != len(part) {
			return fmt.Errorf("append audit: %d records written, %d ids returned", len(part), len(ids))
		}
		slices.Sort(ids)
		for k, a := range part {
			a.rec.ID = ids[k]
			res[a.i].rec = a.rec
		}
		return nil
	}
}

// archiveStmt is archiveHistory's statement.
func (g *group) archiveStmt(keep int) BatchStmt {
	q, args := g.s.archiveQuery(keep)
	return BatchStmt{Query: g.s.d.Rebind(q), Args: args, What: "archive history"}
}
