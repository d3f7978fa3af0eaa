package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warden-run/warden"
)

// Approvals: calls waiting for a person's answer, and the answers.

const approvalCols = `id, session, role, host, tool, args, summary, code, rule, reason, parts, fingerprint,
	status, scope, message, decided_by, created_at, decided_at, grants, consumed, agent`

func scanApproval(r scanner) (warden.Approval, error) {
	var a warden.Approval
	var args, parts, grants string
	var created, decided int64
	var consumed int
	err := r.Scan(&a.ID, &a.Session, &a.Role, &a.Host, &a.Tool, &args, &a.Summary, &a.Code, &a.Rule, &a.Reason,
		&parts, &a.Fingerprint, &a.Status, &a.Scope, &a.Message, &a.DecidedBy, &created, &decided, &grants, &consumed, &a.Agent)
	if err != nil {
		return a, err
	}
	a.CreatedAt, a.DecidedAt, a.Consumed = tm(created), tm(decided), consumed != 0
	if err := fromJSON(args, &a.Args); err != nil {
		return a, fmt.Errorf("approval %q args: %w", a.ID, err)
	}
	if err := fromJSON(parts, &a.Parts); err != nil {
		return a, fmt.Errorf("approval %q parts: %w", a.ID, err)
	}
	if err := fromJSON(grants, &a.Grants); err != nil {
		return a, fmt.Errorf("approval %q grants: %w", a.ID, err)
	}
	return a, nil
}

// CreateApproval implements warden.ApprovalStore.
func (s *Store) CreateApproval(ctx context.Context, a warden.Approval) (warden.Approval, error) {
	if a.Tool == "" {
		return a, errors.New("create approval: tool is required")
	}
	a.CreatedAt = tm(ts(s.Now()))
	a.Status, a.Scope, a.DecidedAt, a.DecidedBy, a.Message, a.Grants, a.Consumed = warden.ApprovalPending, "", time.Time{}, "", "", nil, false
	if a.Args == nil {
		a.Args = map[string]any{}
	}
	for range 5 {
		a.ID = newID("a-")
		res, err := s.exec(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (fingerprint) WHERE status = 'pending' AND fingerprint <> '' DO NOTHING`,
			a.ID, a.Session, a.Role, a.Host, a.Tool, toJSON(a.Args), a.Summary, string(a.Code), a.Rule, a.Reason,
			toJSON(a.Parts), a.Fingerprint, a.Status, "", "", "", ts(a.CreatedAt), 0, "[]", 0, a.Agent)
		if err != nil {
			return a, fmt.Errorf("create approval: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return a, err
		}
		// The call has a pending approval already: share it.
		existing, err := scanApproval(s.pool(ctx).QueryRowContext(ctx, s.d.Rebind(`SELECT `+approvalCols+` FROM approvals
			WHERE fingerprint = ? AND status = 'pending'`), a.Fingerprint))
		if err == nil {
			return existing, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return a, fmt.Errorf("create approval: %w", err)
		}
		// It was answered meanwhile: try again.
	}
	return a, errors.New("create approval: the pending approval of this call keeps changing; retry")
}

// Approval implements warden.ApprovalStore.
func (s *Store) Approval(ctx context.Context, id string) (warden.Approval, error) {
	a, err := scanApproval(s.pool(ctx).QueryRowContext(ctx, s.d.Rebind(`SELECT `+approvalCols+` FROM approvals WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("approval %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("approval %q: %w", id, err)
	}
	return a, nil
}

// Approvals implements warden.ApprovalStore.
func (s *Store) Approvals(ctx context.Context, f warden.ApprovalFilter) ([]warden.Approval, error) {
	q := `SELECT ` + approvalCols + ` FROM approvals WHERE 1 = 1`
	var args []any
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if f.Session != "" {
		q += ` AND session = ?`
		args = append(args, f.Session)
	}
	if f.Fingerprint != "" {
		q += ` AND fingerprint = ?`
		args = append(args, f.Fingerprint)
	}
	q += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(q), args...)
	out, err := collect(rows, err, "approvals", scanApproval)
	return out, err
}

// ResolveApproval implements warden.ApprovalStore.
func (s *Store) ResolveApproval(ctx context.Context, id string, r warden.Resolution, grants []warden.Grant) (warden.Approval, error) {
	switch {
	case r.Status == warden.ApprovalRejected:
		if len(grants) > 0 {
			return warden.Approval{}, errors.New("resolve approval: a rejection makes no grants")
		}
		r.Scope = ""
	case r.Status == warden.ApprovalApproved:
		switch r.Scope {
		case warden.ScopeOnce, warden.ScopeSession, warden.ScopeAlways:
		default:
			return warden.Approval{}, fmt.Errorf("resolve approval: scope %q: want once, session or always", r.Scope)
		}
	default:
		return warden.Approval{}, fmt.Errorf("resolve approval: status %q: want approved or rejected", r.Status)
	}
	tx, done, err := s.begin(ctx)
	if err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
	}
	defer done()
	defer tx.Rollback()
	var status string
	err = tx.QueryRowContext(ctx, s.d.Rebind(`SELECT status FROM approvals WHERE id = ?`+s.d.ForUpdate), id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return warden.Approval{}, fmt.Errorf("approval %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
	}
	if status != warden.ApprovalPending {
		return warden.Approval{}, fmt.Errorf("approval %q is %s already: %w", id, status, warden.ErrConflict)
	}
	ids := []string{}
	for _, g := range grants {
		g.Approval = id
		g, err := s.prepGrant(g)
		if err != nil {
			return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
		}
		if err := s.insertGrant(ctx, tx, g); err != nil {
			return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
		}
		ids = append(ids, g.ID)
	}
	_, err = tx.ExecContext(ctx, s.d.Rebind(`UPDATE approvals SET status = ?, scope = ?, message = ?, decided_by = ?,
		decided_at = ?, grants = ? WHERE id = ?`), r.Status, r.Scope, r.Message, r.DecidedBy, ts(s.Now()), toJSON(ids), id)
	if err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: commit: %w", id, err)
	}
	return s.Approval(ctx, id)
}

// ConsumeApproval implements warden.ApprovalStore.
func (s *Store) ConsumeApproval(ctx context.Context, id string) (bool, error) {
	res, err := s.exec(ctx, `UPDATE approvals SET consumed = 1 WHERE id = ? AND status IN (?, ?) AND consumed = 0`,
		id, warden.ApprovalApproved, warden.ApprovalRejected)
	if err != nil {
		return false, fmt.Errorf("consume approval %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PurgeApprovals implements warden.ApprovalStore.
func (s *Store) PurgeApprovals(ctx context.Context, pendingBefore, answeredBefore time.Time) (int, error) {
	res, err := s.exec(ctx, `DELETE FROM approvals WHERE (status = ? AND created_at < ?) OR (status <> ? AND decided_at < ?)`,
		warden.ApprovalPending, ts(pendingBefore), warden.ApprovalPending, ts(answeredBefore))
	if err != nil {
		return 0, fmt.Errorf("purge approvals: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
