package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
)

// Anchors: the project's standing instructions, by priority.

// AddAnchor implements warden.StateStore.
func (s *Store) AddAnchor(ctx context.Context, a warden.Anchor) (warden.Anchor, error) {
	if strings.TrimSpace(a.Content) == "" {
		return a, errors.New("add anchor: content is empty")
	}
	p, err := warden.ParsePriority(string(a.Priority))
	if err != nil {
		return a, fmt.Errorf("add anchor: %w", err)
	}
	a.Priority = p
	if a.ID == "" {
		a.ID = newID("n-")
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.Now()
	}
	a.CreatedAt, a.DemotedAt = tm(ts(a.CreatedAt)), tm(ts(a.DemotedAt))
	_, err = s.exec(ctx, `INSERT INTO anchors (id, priority, content, created_at, demoted_at) VALUES (?, ?, ?, ?, ?)`,
		a.ID, string(a.Priority), a.Content, ts(a.CreatedAt), ts(a.DemotedAt))
	if err != nil {
		return a, fmt.Errorf("add anchor: %w", err)
	}
	return a, nil
}

// DemoteAnchor implements warden.StateStore.
func (s *Store) DemoteAnchor(ctx context.Context, id string) error {
	res, err := s.exec(ctx, `UPDATE anchors SET priority = 'normal', demoted_at = ? WHERE id = ? AND priority = 'high'`, ts(s.Now()), id)
	if err != nil {
		return fmt.Errorf("demote anchor %q: %w", id, err)
	}
	return notFound(res, "high anchor", id)
}

// RemoveAnchor implements warden.StateStore.
func (s *Store) RemoveAnchor(ctx context.Context, id string) error {
	res, err := s.exec(ctx, `DELETE FROM anchors WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("remove anchor %q: %w", id, err)
	}
	return notFound(res, "anchor", id)
}
