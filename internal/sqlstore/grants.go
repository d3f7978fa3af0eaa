package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/warden-run/warden"
)

// Grants: standing permissions made by hand or by approvals.

const grantCols = `id, tool, role, session, subject, value, pattern, expires, uses_left, created_at, created_by, approval`

func scanGrant(r scanner) (warden.Grant, error) {
	var g warden.Grant
	var exp, created int64
	err := r.Scan(&g.ID, &g.Tool, &g.Role, &g.Session, &g.Subject, &g.Value, &g.Pattern, &exp, &g.UsesLeft,
		&created, &g.CreatedBy, &g.Approval)
	g.Expires, g.CreatedAt = tm(exp), tm(created)
	return g, err
}

func (s *Store) prepGrant(g warden.Grant) (warden.Grant, error) {
	if g.Tool == "" || g.Subject == "" {
		return g, errors.New("grant: tool and subject are required")
	}
	if g.Value == "" && g.Pattern == "" {
		return g, errors.New("grant: value or pattern is required")
	}
	if g.ID == "" {
		g.ID = newID("g-")
	}
	if g.CreatedAt.IsZero() {
		g.CreatedAt = s.Now()
	}
	if g.UsesLeft == 0 {
		g.UsesLeft = -1
	}
	g.CreatedAt, g.Expires = tm(ts(g.CreatedAt)), tm(ts(g.Expires))
	return g, nil
}

func (s *Store) insertGrant(ctx context.Context, db execer, g warden.Grant) error {
	_, err := db.ExecContext(ctx, s.d.Rebind(`INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		g.ID, g.Tool, g.Role, g.Session, g.Subject, g.Value, g.Pattern, ts(g.Expires), g.UsesLeft,
		ts(g.CreatedAt), g.CreatedBy, g.Approval)
	return err
}

// AddGrant implements warden.GrantStore.
func (s *Store) AddGrant(ctx context.Context, g warden.Grant) (warden.Grant, error) {
	g, err := s.prepGrant(g)
	if err != nil {
		return g, err
	}
	if err := s.insertGrant(ctx, s.pool(ctx), g); err != nil {
		return g, fmt.Errorf("add grant: %w", err)
	}
	return g, nil
}

// liveGrant is the condition of a grant in force; its ? is now.
const liveGrant = `revoked_at = 0 AND (expires = 0 OR expires > ?) AND uses_left <> 0`

// Grants implements warden.GrantStore.
func (s *Store) Grants(ctx context.Context, f warden.GrantFilter) ([]warden.Grant, error) {
	q := `SELECT ` + grantCols + ` FROM grants WHERE 1 = 1`
	var args []any
	if !f.All {
		q += ` AND ` + liveGrant
		args = append(args, ts(s.Now()))
	}
	if f.Session != "" {
		q += ` AND (session = '' OR session = ?)`
		args = append(args, f.Session)
	}
	q += ` ORDER BY created_at, id`
	rows, err := prepared{s: s}.QueryContext(ctx, s.d.Rebind(q), args...)
	out, err := collect(rows, err, "grants", scanGrant)
	return out, err
}

// useGrant counts one use of a grant that is in force.
const useGrant = `UPDATE grants SET uses_left = CASE WHEN uses_left > 0 THEN uses_left - 1 ELSE uses_left END
		WHERE id = ? AND ` + liveGrant

// UseGrant implements warden.GrantStore.
func (s *Store) UseGrant(ctx context.Context, id string) (bool, error) {
	res, err := s.exec(ctx, useGrant, id, ts(s.Now()))
	if err != nil {
		return false, fmt.Errorf("use grant %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("use grant %q: %w", id, err)
	}
	if n == 1 {
		return true, nil
	}
	var one int
	err = s.pool(ctx).QueryRowContext(ctx, s.d.Rebind(`SELECT 1 FROM grants WHERE id = ?`), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("grant %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("use grant %q: %w", id, err)
	}
	return false, nil
}

// RevokeGrant implements warden.GrantStore.
func (s *Store) RevokeGrant(ctx context.Context, id string) error {
	res, err := s.exec(ctx, `UPDATE grants SET revoked_at = ? WHERE id = ?`, ts(s.Now()), id)
	if err != nil {
		return fmt.Errorf("revoke grant %q: %w", id, err)
	}
	return notFound(res, "grant", id)
}
