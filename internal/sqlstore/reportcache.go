package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warden-run/warden"
)

// The response cache (warden.ReportCache): tables report_cache and
// report_requests (migration 0015).

const cacheCols = `cache_key, request, host, role, plugins, final_report, metas, session, hits, last_hit, created_at`

func scanCached(row scanner) (warden.CachedReport, error) {
	var e warden.CachedReport
	var metas string
	var last, created int64
	if err := row.Scan(&e.Key, &e.Request, &e.Host, &e.Role, &e.Plugins, &e.FinalReport, &metas, &e.Session,
		&e.Hits, &last, &created); err != nil {
		return e, err
	}
	if err := fromJSON(metas, &e.Metas); err != nil {
		return e, fmt.Errorf("cached report %q: metas: %w", e.Key, err)
	}
	e.LastHit, e.CreatedAt = tm(last), tm(created)
	return e, nil
}

// PutCachedReport implements warden.ReportCache.
func (s *Store) PutCachedReport(ctx context.Context, e warden.CachedReport) (warden.CachedReport, error) {
	if e.Key == "" {
		return e, errors.New("put cached report: empty key")
	}
	metas := ""
	if len(e.Metas) > 0 {
		metas = toJSON(e.Metas)
	}
	now := ts(s.Now())
	_, err := s.exec(ctx, `INSERT INTO report_cache (`+cacheCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?)
		ON CONFLICT (cache_key) DO UPDATE SET request = excluded.request, host = excluded.host, role = excluded.role,
		plugins = excluded.plugins, final_report = excluded.final_report, metas = excluded.metas,
		session = excluded.session, hits = 0, last_hit = 0, created_at = excluded.created_at`,
		e.Key, e.Request, e.Host, e.Role, e.Plugins, e.FinalReport, metas, e.Session, now)
	if err != nil {
		return e, s.explain(fmt.Errorf("put cached report %q: %w", e.Key, err))
	}
	e.Hits, e.LastHit, e.CreatedAt = 0, time.Time{}, tm(now)
	return e, nil
}

// CachedReport implements warden.ReportCache.
func (s *Store) CachedReport(ctx context.Context, key string) (warden.CachedReport, error) {
	e, err := scanCached(s.pool(ctx).QueryRowContext(ctx, s.d.Rebind(`SELECT `+cacheCols+` FROM report_cache WHERE cache_key = ?`), key))
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("cached report %q: %w", key, warden.ErrNotFound)
	}
	if err != nil {
		return e, s.explain(fmt.Errorf("cached report %q: %w", key, err))
	}
	return e, nil
}

// HitCachedReport implements warden.ReportCache.
func (s *Store) HitCachedReport(ctx context.Context, key string) error {
	res, err := s.exec(ctx, `UPDATE report_cache SET hits = hits + 1, last_hit = ? WHERE cache_key = ?`, ts(s.Now()), key)
	if err == nil {
		err = notFound(res, "cached report", key)
	}
	if err != nil && !errors.Is(err, warden.ErrNotFound) {
		err = s.explain(fmt.Errorf("hit cached report %q: %w", key, err))
	}
	return err
}

// CachedReports implements warden.ReportCache.
func (s *Store) CachedReports(ctx context.Context, limit int) ([]warden.CachedReport, error) {
	q := `SELECT ` + cacheCols + ` FROM report_cache ORDER BY created_at DESC, cache_key`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	rows, err := s.pool(ctx).QueryContext(ctx, q)
	out, err := collect(rows, err, "cached reports", scanCached)
	if err != nil {
		return nil, s.explain(err)
	}
	if out == nil {
		out = []warden.CachedReport{}
	}
	return out, nil
}

// DeleteCachedReports implements warden.ReportCache.
func (s *Store) DeleteCachedReports(ctx context.Context, key string, before time.Time) (int, error) {
	q, args := `DELETE FROM report_cache`, []any{}
	switch {
	case key != "" && !before.IsZero():
		return 0, errors.New("delete cached reports: give a key or a time, not both")
	case key != "":
		q, args = q+` WHERE cache_key = ?`, append(args, key)
	case !before.IsZero():
		q, args = q+` WHERE created_at < ?`, append(args, ts(before))
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return 0, s.explain(fmt.Errorf("delete cached reports: %w", err))
	}
	n, err := res.RowsAffected()
	return int(n), err
}

const requestCols = `session, sum, request, prompts, served, created_at`

func scanRequest(row scanner) (warden.ReportRequest, error) {
	var r warden.ReportRequest
	var created int64
	err := row.Scan(&r.Session, &r.Sum, &r.Request, &r.Prompts, &r.Served, &created)
	r.CreatedAt = tm(created)
	return r, err
}

// NoteReportRequest implements warden.ReportCache.
func (s *Store) NoteReportRequest(ctx context.Context, session, sum, request string) (warden.ReportRequest, error) {
	if session == "" {
		return warden.ReportRequest{}, errors.New("note report request: empty session id")
	}
	fail := func(err error) (warden.ReportRequest, error) {
		return warden.ReportRequest{}, s.explain(fmt.Errorf("note report request of session %q: %w", session, err))
	}
	tx, done, err := s.begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer done()
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, s.d.Rebind(`INSERT INTO report_requests (`+requestCols+`) VALUES (?, ?, ?, 1, '', ?)
		ON CONFLICT (session) DO UPDATE SET prompts = report_requests.prompts + 1`), session, sum, request, ts(s.Now()))
	if err != nil {
		return fail(err)
	}
	r, err := scanRequest(tx.QueryRowContext(ctx, s.d.Rebind(`SELECT `+requestCols+` FROM report_requests WHERE session = ?`), session))
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return r, nil
}

// ServeReportRequest implements warden.ReportCache.
func (s *Store) ServeReportRequest(ctx context.Context, session, key string) error {
	res, err := s.exec(ctx, `UPDATE report_requests SET served = ? WHERE session = ?`, key, session)
	if err == nil {
		err = notFound(res, "report request of session", session)
	}
	if err != nil && !errors.Is(err, warden.ErrNotFound) {
		err = s.explain(fmt.Errorf("serve report request of session %q: %w", session, err))
	}
	return err
}

// ReportRequest implements warden.ReportCache.
func (s *Store) ReportRequest(ctx context.Context, session string) (warden.ReportRequest, error) {
	r, err := scanRequest(s.pool(ctx).QueryRowContext(ctx, s.d.Rebind(`SELECT `+requestCols+` FROM report_requests WHERE session = ?`), session))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("report request of session %q: %w", session, warden.ErrNotFound)
	}
	if err != nil {
		return r, s.explain(fmt.Errorf("report request of session %q: %w", session, err))
	}
	return r, nil
}
