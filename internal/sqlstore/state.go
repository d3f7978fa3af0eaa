package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/warden-run/warden"
)

// Project state: the phase and the history of actions (anchors are in
// anchors.go).

// State implements warden.StateStore.
func (s *Store) State(ctx context.Context) (warden.ProjectState, error) {
	var st warden.ProjectState
	var updated int64
	err := s.pool(ctx).QueryRowContext(ctx, `SELECT phase, updated_at FROM state WHERE id = 1`).Scan(&st.Phase, &updated)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("state: %w", err)
	}
	st.UpdatedAt = tm(updated)
	rows, err := s.pool(ctx).QueryContext(ctx, `SELECT id, priority, content, created_at, demoted_at FROM anchors
		ORDER BY CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END, created_at, id`)
	if err != nil {
		return st, fmt.Errorf("state: anchors: %w", err)
	}
	defer rows.Close()
	st.Anchors = []warden.Anchor{}
	for rows.Next() {
		var a warden.Anchor
		var created, demoted int64
		var pri string
		if err := rows.Scan(&a.ID, &pri, &a.Content, &created, &demoted); err != nil {
			return st, fmt.Errorf("state: anchors: %w", err)
		}
		a.Priority, a.CreatedAt, a.DemotedAt = warden.Priority(pri), tm(created), tm(demoted)
		st.Anchors = append(st.Anchors, a)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("state: anchors: %w", err)
	}
	hrows, err := s.pool(ctx).QueryContext(ctx, `SELECT id, time, session, agent, action, result FROM history WHERE archived = 0 ORDER BY id`)
	if err != nil {
		return st, fmt.Errorf("state: history: %w", err)
	}
	defer hrows.Close()
	st.History = []warden.HistoryEntry{}
	for hrows.Next() {
		var h warden.HistoryEntry
		var t int64
		if err := hrows.Scan(&h.ID, &t, &h.Session, &h.Agent, &h.Action, &h.Result); err != nil {
			return st, fmt.Errorf("state: history: %w", err)
		}
		h.Time = tm(t)
		st.History = append(st.History, h)
	}
	return st, hrows.Err()
}

// SetPhase implements warden.StateStore.
func (s *Store) SetPhase(ctx context.Context, phase string) error {
	_, err := s.exec(ctx, `INSERT INTO state (id, phase, updated_at) VALUES (1, ?, ?)
		ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, updated_at = excluded.updated_at`, phase, ts(s.Now()))
	if err != nil {
		return fmt.Errorf("set phase: %w", err)
	}
	return nil
}

// AddHistory implements warden.StateStore.
func (s *Store) AddHistory(ctx context.Context, h warden.HistoryEntry) error {
	return s.explain(s.addHistory(ctx, prepared{s: s}, h))
}

func (s *Store) addHistory(ctx context.Context, q querier, h warden.HistoryEntry) error {
	args, err := s.historyRow(nil, h)
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, s.d.Rebind(`INSERT INTO history (time, session, agent, action, result) VALUES (?, ?, ?, ?, ?)`), args...); err != nil {
		return fmt.Errorf("add history: %w", err)
	}
	return nil
}

// historyRow appends the values of a history row for h (stamped now when
// it has no time); an entry without an action is an error.
func (s *Store) historyRow(args []any, h warden.HistoryEntry) ([]any, error) {
	if h.Action == "" {
		return args, errors.New("add history: action is empty")
	}
	if h.Time.IsZero() {
		h.Time = s.Now()
	}
	return append(args, ts(h.Time), h.Session, h.Agent, h.Action, h.Result), nil
}

// ArchivedHistory implements warden.StateStore.
func (s *Store) ArchivedHistory(ctx context.Context, limit int) ([]warden.HistoryEntry, error) {
	q := `SELECT id, time, session, agent, action, result FROM history WHERE archived = 1 ORDER BY id DESC`
	var args []any
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("archived history: %w", err)
	}
	defer rows.Close()
	out := []warden.HistoryEntry{}
	for rows.Next() {
		var h warden.HistoryEntry
		var t int64
		if err := rows.Scan(&h.ID, &t, &h.Session, &h.Agent, &h.Action, &h.Result); err != nil {
			return nil, fmt.Errorf("archived history: %w", err)
		}
		h.Time = tm(t)
		out = append(out, h)
	}
	slices.Reverse(out)
	return out, rows.Err()
}

// ArchiveHistory implements warden.StateStore.
func (s *Store) ArchiveHistory(ctx context.Context, keep int) (int, error) {
	return s.archiveHistory(ctx, prepared{s: s}, keep)
}

func (s *Store) archiveHistory(ctx context.Context, q querier, keep int) (int, error) {
	query, args := s.archiveQuery(keep)
	res, err := q.ExecContext(ctx, s.d.Rebind(query), args...)
	if err != nil {
		return 0, fmt.Errorf("archive history: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// archiveQuery is archiveHistory's statement (not rebound) and its
// arguments.
func (s *Store) archiveQuery(keep int) (string, []any) {
	if keep < 0 {
		keep = 0
	}
	// Everything up to the newest entry beyond the first keep; nothing
	// when there are no more than keep.
	query := `UPDATE history SET archived = 1 WHERE archived = 0 AND id <=
		(SELECT id FROM history WHERE archived = 0 ORDER BY id DESC LIMIT 1 OFFSET ?)`
	if s.d.ForUpdate != "" {
		// Where writers lock rows, two decisions that archive at once
		// would lock the same rows in different orders (a deadlock, and a
		// failed decision): each archives the rows no other transaction
		// holds, in id order, and leaves the rest to the one that does.
		query = `UPDATE history SET archived = 1 WHERE id IN (SELECT id FROM history WHERE archived = 0 AND id <=
		(SELECT id FROM history WHERE archived = 0 ORDER BY id DESC LIMIT 1 OFFSET ?) ORDER BY id` + s.d.ForUpdate + ` SKIP LOCKED)`
	}
	return query, []any{keep}
}
