package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
)

// Halts: one row per halt, keyed by (agent, session): a session's or the
// project's (agent ''), or an agent token's (session '').

// SetHalt implements warden.HaltStore.
func (s *Store) SetHalt(ctx context.Context, h warden.Halt) (warden.Halt, error) {
	if h.Agent != "" && h.Session != "" {
		return h, errors.New("halt: give an agent or a session, not both")
	}
	if h.At.IsZero() {
		h.At = s.Now()
	}
	_, err := s.exec(ctx, `INSERT INTO halts (agent, session, message, by_whom, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent, session) DO UPDATE SET message = excluded.message, by_whom = excluded.by_whom, at = excluded.at`,
		h.Agent, h.Session, h.Message, h.By, ts(h.At))
	if err != nil {
		return h, fmt.Errorf("halt: %w", err)
	}
	return h, nil
}

// ClearHalt implements warden.HaltStore.
func (s *Store) ClearHalt(ctx context.Context, session string) error {
	what := "the project"
	if session != "" {
		what = "session " + session
	}
	return s.clearHalt(ctx, "", session, what)
}

// ClearAgentHalt implements warden.HaltStore.
func (s *Store) ClearAgentHalt(ctx context.Context, agent string) error {
	if agent == "" {
		return errors.New("resume: no agent named")
	}
	return s.clearHalt(ctx, agent, "", "agent "+agent)
}

func (s *Store) clearHalt(ctx context.Context, agent, session, what string) error {
	res, err := s.exec(ctx, `DELETE FROM halts WHERE agent = ? AND session = ?`, agent, session)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("resume: %s is not halted: %w", what, warden.ErrNotFound)
	}
	return nil
}

// Halts implements warden.HaltStore.
func (s *Store) Halts(ctx context.Context) ([]warden.Halt, error) {
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(`SELECT agent, session, message, by_whom, at FROM halts ORDER BY agent, session`))
	if err != nil {
		return nil, fmt.Errorf("halts: %w", err)
	}
	defer rows.Close()
	out := []warden.Halt{}
	for rows.Next() {
		var h warden.Halt
		var at int64
		if err := rows.Scan(&h.Agent, &h.Session, &h.Message, &h.By, &at); err != nil {
			return nil, fmt.Errorf("halts: %w", err)
		}
		h.At = tm(at)
		out = append(out, h)
	}
	return out, rows.Err()
}

// AgentHalted implements warden.HaltStore.
func (s *Store) AgentHalted(ctx context.Context, agent string) (warden.Halt, bool, error) {
	if agent == "" {
		return warden.Halt{}, false, nil
	}
	h := warden.Halt{Agent: agent}
	var at int64
	err := prepared{s: s}.QueryRowContext(ctx, s.d.Rebind(`SELECT message, by_whom, at FROM halts WHERE agent = ? AND session = ''`), agent).
		Scan(&h.Message, &h.By, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return warden.Halt{}, false, nil
	}
	if err != nil {
		return warden.Halt{}, false, fmt.Errorf("agent halted: %w", err)
	}
	h.At = tm(at)
	return h, true, nil
}

// haltScopes is one query of the halts that reach a session: one for its
// own id, each parent (PARENT/AGENT ids) and the project, each an indexed
// lookup, joined with UNION ALL. (An IN list with ORDER BY made SQLite
// build a temporary table for every call: a third of the check's time.)
// one selects a halt row for a session = ? (of the rows with agent ”).
func haltScopes(one, session string) (string, []any) {
	args := []any{""}
	q := one
	for id := session; id != ""; {
		args = append(args, id)
		q += ` UNION ALL ` + one
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			break
		}
		id = id[:i]
	}
	return q, args
}

// kinded scans a row whose first column is its kind, then r's columns.
type kinded struct {
	k *string
	r scanner
}

func (k kinded) Scan(dest ...any) error { return k.r.Scan(append([]any{k.k}, dest...)...) }

// HaltAndGrants implements warden.DecisionReader: the halts of the
// session's scopes and of the agent, and the session's grants in force, in
// one query whose halt rows take the grant columns' places (k tells them
// apart: 'h' a session's or the project's halt, 'a' the agent's).
//
// Under a context made by CachedReads, the answer may be one read before
// (see readcache.go).
func (s *Store) HaltAndGrants(ctx context.Context, session, agent string) (warden.Halt, bool, []warden.Grant, error) {
	if st := stampOf(ctx); st != nil && session != "" {
		return s.cachedHaltAndGrants(ctx, st, session, agent)
	}
	return s.haltAndGrants(ctx, session, agent)
}

// haltAndGrants is HaltAndGrants read from the database.
func (s *Store) haltAndGrants(ctx context.Context, session, agent string) (warden.Halt, bool, []warden.Grant, error) {
	q, args := haltScopes(`SELECT 'h' AS k, session AS id, message AS tool, by_whom AS role, '' AS session, '' AS subject, '' AS value,
		'' AS pattern, at AS expires, 0 AS uses_left, 0 AS created_at, '' AS created_by, '' AS approval FROM halts WHERE agent = '' AND session = ?`, session)
	if agent != "" {
		q += ` UNION ALL SELECT 'a', agent, message, by_whom, '', '', '', '', at, 0, 0, '', '' FROM halts WHERE agent = ? AND session = ''`
		args = append(args, agent)
	}
	q += ` UNION ALL SELECT 'g', ` + grantCols + ` FROM grants WHERE ` + liveGrant + ` AND (session = '' OR session = ?)
		ORDER BY k, created_at, id`
	args = append(args, ts(s.Now()), session)
	rows, err := prepared{s: s}.QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return warden.Halt{}, false, nil, fmt.Errorf("halted and grants: %w", err)
	}
	defer rows.Close()
	var h, ah warden.Halt
	found, agentFound := false, false
	var grants []warden.Grant
	for rows.Next() {
		var k string
		g, err := scanGrant(kinded{&k, rows})
		if err != nil {
			return warden.Halt{}, false, nil, fmt.Errorf("halted and grants: %w", err)
		}
		switch k {
		case "g":
			grants = append(grants, g)
		case "a":
			ah, agentFound = warden.Halt{Agent: g.ID, Message: g.Tool, By: g.Role, At: g.Expires}, true
		default:
			// A halt: its scope, message, by whom and when.
			if !found || len(g.ID) > len(h.Session) {
				h, found = warden.Halt{Session: g.ID, Message: g.Tool, By: g.Role, At: g.Expires}, true
			}
		}
	}
	if err := rows.Err(); err != nil {
		return warden.Halt{}, false, nil, fmt.Errorf("halted and grants: %w", err)
	}
	// The narrowest halt wins: a session's over the agent's over the
	// project's.
	if agentFound && (!found || h.Session == "") {
		h, found = ah, true
	}
	return h, found, grants, nil
}

// Halted implements warden.HaltStore (see haltScopes). The narrowest halt
// wins: the longest scope.
func (s *Store) Halted(ctx context.Context, session string) (warden.Halt, bool, error) {
	q, scopes := haltScopes(`SELECT session, message, by_whom, at FROM halts WHERE agent = '' AND session = ?`, session)
	rows, err := prepared{s: s}.QueryContext(ctx, s.d.Rebind(q), scopes...)
	if err != nil {
		return warden.Halt{}, false, fmt.Errorf("halted: %w", err)
	}
	defer rows.Close()
	var h warden.Halt
	found := false
	for rows.Next() {
		var x warden.Halt
		var at int64
		if err := rows.Scan(&x.Session, &x.Message, &x.By, &at); err != nil {
			return warden.Halt{}, false, fmt.Errorf("halted: %w", err)
		}
		if !found || len(x.Session) > len(h.Session) {
			x.At = tm(at)
			h, found = x, true
		}
	}
	if err := rows.Err(); err != nil {
		return warden.Halt{}, false, fmt.Errorf("halted: %w", err)
	}
	return h, found, nil
}
