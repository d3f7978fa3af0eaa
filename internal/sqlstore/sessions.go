package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warden-run/warden"
)

// Sessions: one row per host session, and WriteDecision, the one
// transaction of a decision (session, grants used, history, audit).

const sessionCols = `id, role, host, parent, depth, first_tool, calls, violations, governance,
	compactions, resumes, intent_id, intent, status, started_at, last_seen, ended_at, archived, agent`

// sessionColCount is how many columns sessionCols names.
const sessionColCount = 19

func scanSession(r scanner) (warden.Session, error) {
	var x warden.Session
	var gov, arch int
	var started, seen, ended int64
	err := r.Scan(&x.ID, &x.Role, &x.Host, &x.Parent, &x.Depth, &x.FirstTool, &x.Calls, &x.Violations,
		&gov, &x.Compactions, &x.Resumes, &x.IntentID, &x.Intent, &x.Status, &started, &seen, &ended, &arch, &x.Agent)
	x.GovernanceInjected, x.Archived = gov != 0, arch != 0
	x.StartedAt, x.LastSeen, x.EndedAt = tm(started), tm(seen), tm(ended)
	return x, err
}

// Session implements warden.SessionStore.
func (s *Store) Session(ctx context.Context, id string) (warden.Session, error) {
	x, err := scanSession(prepared{s: s}.QueryRowContext(ctx, s.d.Rebind(`SELECT `+sessionCols+` FROM sessions WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return x, fmt.Errorf("session %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return x, fmt.Errorf("session %q: %w", id, err)
	}
	return x, nil
}

// UpdateSession implements warden.SessionStore.
func (s *Store) UpdateSession(ctx context.Context, id string, fn func(*warden.Session, bool) error) (warden.Session, error) {
	x, _, err := s.WriteDecision(ctx, id, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
		return nil, fn(x, created)
	})
	return x, err
}

// WriteDecision implements warden.DecisionWriter.
//
// With Dialect.GroupCommit, concurrent calls share one transaction and
// one disk sync (group commit): a call returns once the transaction that
// holds its write has committed. A call whose ctx is done before its turn
// stores nothing.
func (s *Store) WriteDecision(ctx context.Context, id string, fn func(*warden.Session, bool) (*warden.DecisionRecord, error)) (warden.Session, warden.AuditRecord, error) {
	if id == "" {
		return warden.Session{}, warden.AuditRecord{}, errors.New("update session: empty session id")
	}
	if s.d.GroupCommit {
		// fn runs in the group's goroutine: a panic there must be this
		// call's error, not the end of the process.
		safe := func(x *warden.Session, created bool) (dr *warden.DecisionRecord, err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("internal error (panic: %v)", p)
				}
			}()
			return fn(x, created)
		}
		r := s.group.write(s, &writeReq{ctx: ctx, st: stampOf(ctx), id: id, fn: safe})
		if r.err == nil && r.rec.ID != 0 && r.spool {
			s.drainSpool(ctx)
		}
		return r.sess, r.rec, s.explain(r.err)
	}
	x, rec, err := s.writeAlone(ctx, id, fn)
	if err == nil && rec.ID != 0 {
		s.drainSpool(ctx)
	}
	return x, rec, err
}

// writeAlone is WriteDecision in a transaction of its own.
func (s *Store) writeAlone(ctx context.Context, id string, fn func(*warden.Session, bool) (*warden.DecisionRecord, error)) (warden.Session, warden.AuditRecord, error) {
	tx, done, err := s.begin(ctx)
	if err != nil {
		return warden.Session{}, warden.AuditRecord{}, s.explain(fmt.Errorf("update session %q: %w", id, err))
	}
	defer done()
	defer tx.Rollback()
	x, rec, err := s.writeDecision(ctx, prepared{s, tx}, id, fn)
	if err != nil {
		return x, rec, s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		return warden.Session{}, rec, s.explain(fmt.Errorf("update session %q: commit: %w", id, err))
	}
	return x, rec, nil
}

// explain passes an error through the dialect's Explain.
func (s *Store) explain(err error) error {
	if err == nil || s.d.Explain == nil {
		return err
	}
	return s.d.Explain(err)
}

// writeDecision is one WriteDecision inside the transaction of q.
func (s *Store) writeDecision(ctx context.Context, q prepared, id string, fn func(*warden.Session, bool) (*warden.DecisionRecord, error)) (warden.Session, warden.AuditRecord, error) {
	var rec warden.AuditRecord
	// The session is read (and locked) first: it exists for every call
	// but its first, which then inserts it (one statement less a call).
	// When the call decided on a kept answer (see readcache.go), the
	// count of changes comes along, in the same statement.
	st, gen := stampOf(ctx), s.rcache.generation()
	changes, count := int64(-1), ""
	if st != nil && st.cached {
		count = changesCol
	}
	lock := s.d.Rebind(`SELECT ` + sessionCols + count + ` FROM sessions WHERE id = ?` + s.d.ForUpdate)
	scan := func(r scanner) (warden.Session, error) {
		if count != "" {
			return scanSession(withChanges{r, &changes})
		}
		return scanSession(r)
	}
	created := false
	x, err := scan(q.QueryRowContext(ctx, lock, id))
	if errors.Is(err, sql.ErrNoRows) {
		var res sql.Result
		res, err = q.ExecContext(ctx, s.d.Rebind(`INSERT INTO sessions (id) VALUES (?) ON CONFLICT (id) DO NOTHING`), id)
		if err != nil {
			return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
		}
		var n int64
		if n, err = res.RowsAffected(); err != nil {
			return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
		}
		created = n == 1
		x, err = scan(q.QueryRowContext(ctx, lock, id)) // checked below
	}
	if err != nil {
		return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
	}
	if changes >= 0 {
		s.rcache.saw(changes, gen)
	}
	if err := s.checkStale(ctx, q, st, &changes); err != nil {
		return warden.Session{}, rec, err
	}
	dr, err := fn(&x, created)
	if err != nil {
		return warden.Session{}, rec, err
	}
	if err := s.historyCurrent(ctx, q, id, dr); err != nil {
		return warden.Session{}, rec, err
	}
	x.ID = id
	update := `UPDATE sessions SET role = ?, host = ?, parent = ?, depth = ?, first_tool = ?,
		calls = ?, violations = ?, governance = ?, compactions = ?, resumes = ?, intent_id = ?, intent = ?,
		status = ?, started_at = ?, last_seen = ?, ended_at = ?, archived = ?, agent = ? WHERE id = ?`
	updateArgs := []any{x.Role, x.Host, x.Parent, x.Depth, x.FirstTool, x.Calls, x.Violations, b2i(x.GovernanceInjected),
		x.Compactions, x.Resumes, x.IntentID, x.Intent, x.Status, ts(x.StartedAt), ts(x.LastSeen),
		ts(x.EndedAt), b2i(x.Archived), x.Agent, id}
	// Where the database runs an UPDATE inside a WITH (PostgreSQL), the
	// session's update goes with the audit record's insert, below: one
	// round trip less a decision.
	joint := dr != nil && s.d.ModifyingCTE
	if !joint {
		if _, err = q.ExecContext(ctx, s.d.Rebind(update), updateArgs...); err != nil {
			return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
		}
	}
	if dr != nil {
		for _, g := range dr.UseGrants {
			res, err := q.ExecContext(ctx, s.d.Rebind(useGrant), g, ts(s.Now()))
			if err != nil {
				return warden.Session{}, rec, fmt.Errorf("use grant %s: %w", g, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return warden.Session{}, rec, &warden.GrantUnusableError{ID: g}
			}
		}
		if dr.History != nil {
			if err := s.addHistory(ctx, q, *dr.History); err != nil {
				return warden.Session{}, rec, err
			}
		}
		for _, h := range dr.MoreHistory {
			if err := s.addHistory(ctx, q, h); err != nil {
				return warden.Session{}, rec, err
			}
		}
		if dr.HistoryKeep > 0 {
			if _, err := s.archiveHistory(ctx, q, dr.HistoryKeep); err != nil {
				return warden.Session{}, rec, err
			}
		}
		if joint {
			rec, err = s.insertAudit(ctx, q, dr.Audit, `WITH u AS (`+update+`) `, updateArgs)
		} else {
			rec, err = s.appendAudit(ctx, q, dr.Audit)
		}
		if err != nil {
			return warden.Session{}, rec, err
		}
	}
	// Reflect the stored precision.
	x.StartedAt, x.LastSeen, x.EndedAt = tm(ts(x.StartedAt)), tm(ts(x.LastSeen)), tm(ts(x.EndedAt))
	return x, rec, nil
}

// Sessions implements warden.SessionStore.
func (s *Store) Sessions(ctx context.Context, f warden.SessionFilter) ([]warden.Session, error) {
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE 1 = 1`
	var args []any
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if !f.Archived {
		q += ` AND archived = 0`
	}
	q += ` ORDER BY last_seen DESC, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(q), args...)
	out, err := collect(rows, err, "sessions", scanSession)
	return out, err
}

// ArchiveSessions implements warden.SessionStore.
func (s *Store) ArchiveSessions(ctx context.Context, before time.Time) (int, error) {
	res, err := s.exec(ctx, `UPDATE sessions SET archived = 1 WHERE archived = 0 AND last_seen < ?`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("archive sessions: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
