package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/warden-run/warden"
)

const reportCols = `session, nonce, status, turns, retries, final_report, metas, problem, completed, created_at, updated_at`

func scanReport(row scanner) (warden.Report, error) {
	var r warden.Report
	var metas string
	var completed int
	var created, updated int64
	if err := row.Scan(&r.Session, &r.Nonce, &r.Status, &r.Turns, &r.Retries, &r.FinalReport, &metas,
		&r.Problem, &completed, &created, &updated); err != nil {
		return r, err
	}
	if err := fromJSON(metas, &r.Metas); err != nil {
		return r, fmt.Errorf("report %q: metas: %w", r.Session, err)
	}
	r.Completed = completed != 0
	r.CreatedAt, r.UpdatedAt = tm(created), tm(updated)
	return r, nil
}

// UpdateReport implements warden.ReportStore.
func (s *Store) UpdateReport(ctx context.Context, session string, fn func(*warden.Report, bool) error) (warden.Report, error) {
	if session == "" {
		return warden.Report{}, errors.New("update report: empty session id")
	}
	fail := func(err error) (warden.Report, error) {
		return warden.Report{}, s.explain(fmt.Errorf("update report %q: %w", session, err))
	}
	tx, done, err := s.begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer done()
	defer tx.Rollback()
	now := ts(s.Now())
	res, err := tx.ExecContext(ctx, s.d.Rebind(`INSERT INTO reports (session, created_at) VALUES (?, ?) ON CONFLICT (session) DO NOTHING`), session, now)
	if err != nil {
		return fail(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fail(err)
	}
	r, err := scanReport(tx.QueryRowContext(ctx, s.d.Rebind(`SELECT `+reportCols+` FROM reports WHERE session = ?`+s.d.ForUpdate), session))
	if err != nil {
		return fail(err)
	}
	if err := fn(&r, n == 1); err != nil {
		return warden.Report{}, err
	}
	r.Session = session
	metas := ""
	if len(r.Metas) > 0 {
		b, err := json.Marshal(r.Metas)
		if err != nil {
			return fail(fmt.Errorf("metas: %w", err))
		}
		metas = string(b)
	}
	_, err = tx.ExecContext(ctx, s.d.Rebind(`UPDATE reports SET nonce = ?, status = ?, turns = ?, retries = ?,
		final_report = ?, metas = ?, problem = ?, completed = ?, updated_at = ? WHERE session = ?`),
		r.Nonce, r.Status, r.Turns, r.Retries, r.FinalReport, metas, r.Problem, b2i(r.Completed), now, session)
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	r.UpdatedAt = tm(now)
	r.CreatedAt = tm(ts(r.CreatedAt))
	return r, nil
}

// Report implements warden.ReportStore.
func (s *Store) Report(ctx context.Context, session string) (warden.Report, error) {
	r, err := scanReport(s.pool(ctx).QueryRowContext(ctx, s.d.Rebind(`SELECT `+reportCols+` FROM reports WHERE session = ?`), session))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("report of session %q: %w", session, warden.ErrNotFound)
	}
	if err != nil {
		return r, s.explain(fmt.Errorf("report of session %q: %w", session, err))
	}
	return r, nil
}

// Reports implements warden.ReportStore.
func (s *Store) Reports(ctx context.Context, f warden.ReportFilter) ([]warden.Report, error) {
	q := `SELECT ` + reportCols + ` FROM reports`
	var args []any
	if f.Status != "" {
		q += ` WHERE status = ?`
		args = append(args, f.Status)
	}
	q += ` ORDER BY updated_at DESC, session`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(q), args...)
	out, err := collect(rows, err, "reports", scanReport)
	if err != nil {
		return nil, s.explain(err)
	}
	if out == nil {
		out = []warden.Report{}
	}
	return out, nil
}
