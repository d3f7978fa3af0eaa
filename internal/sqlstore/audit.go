package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// Audit: the append-only record of every decision.

const auditCols = `time, session, role, host, tool, depth, args, decision, code, rule, reason, matched,
	warnings, grants, approval, mode, enforced, latency, call_id, source, tool_use, outcome, agent, call_sum, sandbox`

// AppendAudit implements warden.AuditLog.
func (s *Store) AppendAudit(ctx context.Context, r warden.AuditRecord) (warden.AuditRecord, error) {
	r, err := s.appendAudit(ctx, prepared{s: s}, r)
	if err == nil {
		s.drainSpool(ctx)
	}
	return r, s.explain(err)
}

func (s *Store) appendAudit(ctx context.Context, q querier, r warden.AuditRecord) (warden.AuditRecord, error) {
	if p, ok := q.(prepared); ok && p.tx == nil {
		// A write of its own (an INSERT that returns its id): it waits
		// for the write turn (see Store.writeTurn).
		done, err := s.writeTurn(ctx)
		if err != nil {
			return r, err
		}
		defer done()
	}
	return s.insertAudit(ctx, q, r, "", nil)
}

// insertAudit is appendAudit with a prefix to its INSERT (a WITH clause)
// and the prefix's arguments.
func (s *Store) insertAudit(ctx context.Context, q querier, r warden.AuditRecord, prefix string, prefixArgs []any) (warden.AuditRecord, error) {
	if r.Time.IsZero() {
		r.Time = s.Now()
	}
	r.Time = tm(ts(r.Time))
	if r.Args == nil {
		r.Args = map[string]any{}
	}
	args := auditArgs(prefixArgs[:len(prefixArgs):len(prefixArgs)], r)
	err := q.QueryRowContext(ctx, s.d.Rebind(prefix+`INSERT INTO audit (`+auditCols+`)
		VALUES `+auditRow+`
		ON CONFLICT (call_id) WHERE call_id <> '' DO NOTHING RETURNING id`), args...).Scan(&r.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("append audit: call %s was decided already: %w", r.CallID, warden.ErrConflict)
	}
	if err != nil {
		return r, fmt.Errorf("append audit: %w", err)
	}
	return r, nil
}

// auditColCount is how many columns auditCols names.
var auditColCount = strings.Count(auditCols, ",") + 1

// auditRow is the placeholders of one row of auditCols.
var auditRow = values(1, auditColCount)

// auditArgs appends the values of auditCols for r.
func auditArgs(args []any, r warden.AuditRecord) []any {
	return append(args,
		ts(r.Time), r.Session, r.Role, r.Host, r.Tool, r.Depth, toJSON(r.Args), string(r.Decision), string(r.Code),
		r.Rule, r.Reason, listJSON(r.Matched), listJSON(r.Warnings), listJSON(r.Grants),
		r.Approval, r.Mode, string(r.Enforced), int64(r.Latency), r.CallID, r.Source, r.ToolUse, r.Outcome, r.Agent, r.CallSum, sandboxJSON(r.Sandbox))
}

// Audit implements warden.AuditLog.
func (s *Store) Audit(ctx context.Context, f warden.AuditFilter) ([]warden.AuditRecord, error) {
	q, args := auditQuery(f)
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	out, err := scanAudit(rows)
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// auditQuery is Audit's query for a filter, and its arguments.
func auditQuery(f warden.AuditFilter) (string, []any) {
	q := `SELECT id, ` + auditCols + ` FROM audit WHERE 1 = 1`
	var args []any
	add := func(cond string, v any) {
		q += ` AND ` + cond
		args = append(args, v)
	}
	if f.Session != "" {
		add(`session = ?`, f.Session)
	}
	if f.Decision != "" {
		add(`decision = ?`, string(f.Decision))
	}
	if f.Enforced != "" {
		add(`(CASE WHEN mode = 'audit' AND enforced <> '' THEN enforced ELSE decision END) = ?`, string(f.Enforced))
	}
	if f.Tool != "" {
		add(`tool = ?`, f.Tool)
	}
	if f.Rule != "" {
		add(`rule = ?`, f.Rule)
	}
	if f.CallID != "" {
		// call_id <> '' lets SQLite use the partial index audit_call.
		add(`call_id = ? AND call_id <> ''`, f.CallID)
	}
	if f.Agent != "" {
		add(`agent = ?`, f.Agent)
	}
	if !f.Since.IsZero() {
		add(`time >= ?`, ts(f.Since))
	}
	if !f.Until.IsZero() {
		add(`time < ?`, ts(f.Until))
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	return q, args
}

// scanAudit reads the records of a query that selects id and auditCols,
// in the query's order, and closes the rows.
func scanAudit(rows *sql.Rows) ([]warden.AuditRecord, error) {
	defer rows.Close()
	var out []warden.AuditRecord
	for rows.Next() {
		var r warden.AuditRecord
		var t, lat int64
		var argsJ, matched, warnings, grants, decision, code, enforced, sb string
		if err := rows.Scan(&r.ID, &t, &r.Session, &r.Role, &r.Host, &r.Tool, &r.Depth, &argsJ, &decision, &code,
			&r.Rule, &r.Reason, &matched, &warnings, &grants, &r.Approval, &r.Mode, &enforced, &lat, &r.CallID, &r.Source, &r.ToolUse, &r.Outcome, &r.Agent, &r.CallSum, &sb); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		r.Time, r.Latency = tm(t), time.Duration(lat)
		r.Decision, r.Code, r.Enforced = warden.Effect(decision), warden.Code(code), warden.Effect(enforced)
		for _, j := range []struct {
			s string
			v any
		}{{argsJ, &r.Args}, {matched, &r.Matched}, {warnings, &r.Warnings}, {grants, &r.Grants}, {sb, &r.Sandbox}} {
			if err := fromJSON(j.s, j.v); err != nil {
				return nil, fmt.Errorf("audit record %d: %w", r.ID, err)
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return out, nil
}

// PurgeAudit implements warden.AuditLog.
func (s *Store) PurgeAudit(ctx context.Context, before time.Time) (int, error) {
	res, err := s.exec(ctx, `DELETE FROM audit WHERE time < ?`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("purge audit: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
