package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
)

// SetHalt implements warden.HaltStore.
func (s *Store) SetHalt(ctx context.Context, h warden.Halt) (warden.Halt, error) {
	if h.At.IsZero() {
		h.At = s.Now()
	}
	_, err := s.exec(ctx, `INSERT INTO halts (session, message, by_whom, at) VALUES (?, ?, ?, ?)
		ON CONFLICT (session) DO UPDATE SET message = excluded.message, by_whom = excluded.by_whom, at = excluded.at`,
		h.Session, h.Message, h.By, ts(h.At))
	if err != nil {
		return h, fmt.Errorf("halt: %w", err)
	}
	return h, nil
}

// ClearHalt implements warden.HaltStore.
func (s *Store) ClearHalt(ctx context.Context, session string) error {
	res, err := s.exec(ctx, `DELETE FROM halts WHERE session = ?`, session)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		what := "the project"
		if session != "" {
			what = "session " + session
		}
		return fmt.Errorf("resume: %s is not halted: %w", what, warden.ErrNotFound)
	}
	return nil
}

// Halts implements warden.HaltStore.
func (s *Store) Halts(ctx context.Context) ([]warden.Halt, error) {
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(`SELECT session, message, by_whom, at FROM halts ORDER BY session`))
	if err != nil {
		return nil, fmt.Errorf("halts: %w", err)
	}
	defer rows.Close()
	out := []warden.Halt{}
	for rows.Next() {
		var h warden.Halt
		var at int64
		if err := rows.Scan(&h.Session, &h.Message, &h.By, &at); err != nil {
			return nil, fmt.Errorf("halts: %w", err)
		}
		h.At = tm(at)
		out = append(out, h)
	}
	return out, rows.Err()
}

// haltScopes is one query of the halts that reach a session: one for its
// own id, each parent (PARENT/AGENT ids) and the project, each an indexed
// lookup, joined with UNION ALL. (An IN list with ORDER BY made SQLite
// build a temporary table for every call: a third of the check's time.)
// one selects a halt row for a session = ?.
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
// session's scopes and its grants in force, in one query whose halt rows
// take the grant columns' places (k tells them apart).
func (s *Store) HaltAndGrants(ctx context.Context, session string) (warden.Halt, bool, []warden.Grant, error) {
	q, args := haltScopes(`SELECT 'h' AS k, session AS id, message AS tool, by_whom AS role, '' AS session, '' AS subject, '' AS value,
		'' AS pattern, at AS expires, 0 AS uses_left, 0 AS created_at, '' AS created_by, '' AS approval FROM halts WHERE session = ?`, session)
	q += ` UNION ALL SELECT 'g', ` + grantCols + ` FROM grants WHERE ` + liveGrant + ` AND (session = '' OR session = ?)
		ORDER BY k, created_at, id`
	args = append(args, ts(s.Now()), session)
	rows, err := prepared{s: s}.QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return warden.Halt{}, false, nil, fmt.Errorf("halted and grants: %w", err)
	}
	defer rows.Close()
	var h warden.Halt
	found := false
	var grants []warden.Grant
	for rows.Next() {
		var k string
		g, err := scanGrant(kinded{&k, rows})
		if err != nil {
			return warden.Halt{}, false, nil, fmt.Errorf("halted and grants: %w", err)
		}
		if k == "g" {
			grants = append(grants, g)
			continue
		}
		// A halt: its scope, message, by whom and when.
		if !found || len(g.ID) > len(h.Session) {
			h, found = warden.Halt{Session: g.ID, Message: g.Tool, By: g.Role, At: g.Expires}, true
		}
	}
	if err := rows.Err(); err != nil {
		return warden.Halt{}, false, nil, fmt.Errorf("halted and grants: %w", err)
	}
	return h, found, grants, nil
}

// Halted implements warden.HaltStore (see haltScopes). The narrowest halt
// wins: the longest scope.
func (s *Store) Halted(ctx context.Context, session string) (warden.Halt, bool, error) {
	q, scopes := haltScopes(`SELECT session, message, by_whom, at FROM halts WHERE session = ?`, session)
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
