package sqlstore

import (
	"context"
	"database/sql"
	"errors"
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
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(`SELECT session, message, by_whom, at FROM halts ORDER BY session`))
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

// Halted implements warden.HaltStore: one indexed query for the session,
// its parents (PARENT/AGENT ids) and the project.
func (s *Store) Halted(ctx context.Context, session string) (warden.Halt, bool, error) {
	scopes := []any{""}
	for id := session; id != ""; {
		scopes = append(scopes, id)
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			break
		}
		id = id[:i]
	}
	q := `SELECT session, message, by_whom, at FROM halts WHERE session IN (?` + strings.Repeat(", ?", len(scopes)-1) + `) ORDER BY session DESC LIMIT 1`
	var h warden.Halt
	var at int64
	err := prepared{s: s}.QueryRowContext(ctx, s.d.Rebind(q), scopes...).Scan(&h.Session, &h.Message, &h.By, &at)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return h, false, nil
		}
		return h, false, fmt.Errorf("halted: %w", err)
	}
	h.At = tm(at)
	return h, true, nil
}
