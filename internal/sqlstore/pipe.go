package sqlstore

import (
	"context"
	"errors"
	"fmt"
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
// other. The writes' fns run between the two, on the sessions read. It
// fills res and returns how many writes succeeded; errUnfit (nothing
// written) when a write needs a statement whose answer it waits for.
//
// A call recorded before (by an earlier group, or meanwhile by another
// writer) fails the audit insert, which here has no ON CONFLICT clause:
// a conflict must stop the batch before its COMMIT. It is reported as
// errGroupConflict, as tryGroup does.
func (s *Store) pipeGroup(ctx context.Context, batch []*writeReq, res []writeRes) (int, error) {
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
		stmts = g.loadStmts(stmts, ids)
	}
	open = true
	if err := s.d.Batch(ctx, conn, stmts); err != nil {
		return 0, err
	}
	ok := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
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
	if ok == 0 {
		return 0, nil
	}

	// The second: every write, and COMMIT.
	stmts, after, err := g.flushStmts(res)
	if err != nil {
		return 0, err
	}
	stmts = append(stmts, BatchStmt{Query: "COMMIT", What: "commit"})
	if err := s.d.Batch(ctx, conn, stmts); err != nil {
		if s.d.Duplicate != nil && s.d.Duplicate(err) {
			return 0, errGroupConflict
		}
		return 0, err
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

// loadStmts appends the statements that lock, insert (empty, when
// missing) and read the sessions of ids, as load does in turn: the
// existing rows are locked first, in id order, then the missing ones
// inserted in id order, then all read. A session this group inserted
// stays new (not stored); one another writer made meanwhile is read as
// it is.
func (g *group) loadStmts(stmts []BatchStmt, ids []any) []BatchStmt {
	in := func(i, j int) string { return `(?` + strings.Repeat(", ?", j-i-1) + `)` }
	_ = chunks(len(ids), func(i, j int) error {
		stmts = append(stmts, BatchStmt{
			Query: g.s.d.Rebind(`SELECT id FROM sessions WHERE id IN ` + in(i, j) + ` ORDER BY id` + g.s.d.ForUpdate),
			Args:  ids[i:j], What: "read sessions",
		})
		return nil
	})
	_ = chunks(len(ids), func(i, j int) error {
		stmts = append(stmts, BatchStmt{
			Query: g.s.d.Rebind(`INSERT INTO sessions (id) VALUES ` + values(j-i, 1) + ` ON CONFLICT (id) DO NOTHING RETURNING id`),
			Args:  ids[i:j], What: "write sessions",
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
		})
		return nil
	})
	_ = chunks(len(ids), func(i, j int) error {
		count := ""
		var n *int64
		if i == 0 && g.cached {
			// The count of changes comes along where a write needs it
			// (see readcache.go), read in the same statement.
			count, n = changesCol, new(int64)
		}
		stmts = append(stmts, BatchStmt{
			Query: g.s.d.Rebind(`SELECT ` + sessionCols + count + ` FROM sessions WHERE id IN ` + in(i, j) + ` ORDER BY id` + g.s.d.ForUpdate),
			Args:  ids[i:j], What: "read sessions",
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
					g.changes = *n
					g.s.rcache.saw(*n, g.gen)
				}
				if gs := g.sessions[x.ID]; gs != nil && !g.placeholders[x.ID] {
					gs.x, gs.stored = x, true
				}
				return nil
			},
		})
		return nil
	})
	return stmts
}

// flushStmts returns the statements that write what the group's writes
// made (as run's flushes do: in one statement where flushJoint applies,
// else a table after the other), and a func to run once they succeeded,
// which gives each write its audit record with its id.
func (g *group) flushStmts(res []writeRes) ([]BatchStmt, func() error, error) {
	var stmts []BatchStmt
	var afters []func() error
	q, args, keep, joint, err := g.jointQuery(false)
	if err != nil {
		return nil, nil, err
	}
	if joint {
		st, after := g.auditIDs(q, args, g.audits, res, "write sessions, history and audit")
		stmts, afters = append(stmts, st), append(afters, after)
		if keep > 0 {
			stmts = append(stmts, g.archiveStmt(keep))
		}
	} else {
		_ = chunks(len(g.order), func(i, j int) error {
			q, args := g.sessionsUpsert(g.order[i:j], nil)
			stmts = append(stmts, BatchStmt{Query: g.s.d.Rebind(q), Args: args, What: "write sessions"})
			return nil
		})
		for _, op := range g.history {
			if op.h == nil {
				stmts = append(stmts, g.archiveStmt(op.keep))
				continue
			}
			args, err := g.s.historyRow(nil, *op.h)
			if err != nil {
				return nil, nil, err
			}
			stmts = append(stmts, BatchStmt{
				Query: g.s.d.Rebind(`INSERT INTO history (time, session, agent, action, result) VALUES (?, ?, ?, ?, ?)`),
				Args:  args, What: "add history",
			})
		}
		_ = chunks(len(g.audits), func(i, j int) error {
			part := g.audits[i:j]
			args := make([]any, 0, auditColCount*len(part))
			for k := range part {
				args = auditArgs(args, g.stampAudit(k+i))
			}
			st, after := g.auditIDs(`INSERT INTO audit (`+auditCols+`) VALUES `+values(len(part), auditColCount)+` RETURNING id`,
				args, part, res, "append audit")
			stmts, afters = append(stmts, st), append(afters, after)
			return nil
		})
	}
	var unused []any
	for id := range g.placeholders {
		if !g.sessions[id].written {
			unused = append(unused, id)
		}
	}
	slices.SortFunc(unused, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	_ = chunks(len(unused), func(i, j int) error {
		stmts = append(stmts, BatchStmt{
			Query: g.s.d.Rebind(`DELETE FROM sessions WHERE id IN (?` + strings.Repeat(", ?", j-i-1) + `)`),
			Args:  unused[i:j], What: "write sessions",
		})
		return nil
	})
	return stmts, func() error {
		for _, f := range afters {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}, nil
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
