package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warden-run/warden"
)

// PurgeReport says what a purge did.
type PurgeReport struct {
	AnchorsDemoted   int `json:"anchors_demoted"`
	AnchorsRemoved   int `json:"anchors_removed"`
	HistoryArchived  int `json:"history_archived"`
	SessionsArchived int `json:"sessions_archived"`
	AuditPurged      int `json:"audit_purged"`
	// ApprovalsPurged counts the approvals past their lifetime that were
	// dropped (unanswered, or answered and never delivered).
	ApprovalsPurged int `json:"approvals_purged"`
}

// Purge applies the purge and archive policy (warden.StateLimits) with the limits of the
// tracker's policy: anchors are demoted and deleted by age and count
// (warden.PlanAnchors), history beyond its cap is archived, sessions not
// seen within the session age limit are archived, and audit records older
// than the audit retention are deleted. Purge is idempotent and safe to run
// from several processes at once.
func (t *Tracker) Purge(ctx context.Context) (PurgeReport, error) {
	return Purge(ctx, t.Store, Limits(t.policy()), t.now())
}

// Purge applies the limits at time now (see Tracker.Purge).
func Purge(ctx context.Context, s Store, l warden.StateLimits, now time.Time) (PurgeReport, error) {
	var r PurgeReport
	l = l.WithDefaults()
	st, err := s.State(ctx)
	if err != nil {
		return r, err
	}
	plan := warden.PlanAnchors(st.Anchors, now, l)
	for _, id := range plan.Demote {
		if err := s.DemoteAnchor(ctx, id); err != nil && !errors.Is(err, warden.ErrNotFound) {
			return r, err
		} else if err == nil {
			r.AnchorsDemoted++
		}
	}
	for _, id := range plan.Remove {
		if err := s.RemoveAnchor(ctx, id); err != nil && !errors.Is(err, warden.ErrNotFound) {
			return r, err
		} else if err == nil {
			r.AnchorsRemoved++
		}
	}
	if r.HistoryArchived, err = s.ArchiveHistory(ctx, l.HistoryMax); err != nil {
		return r, err
	}
	if r.SessionsArchived, err = s.ArchiveSessions(ctx, now.Add(-l.SessionMaxAge)); err != nil {
		return r, err
	}
	cut := now.Add(-l.ApprovalLifetime)
	if r.ApprovalsPurged, err = s.PurgeApprovals(ctx, cut, cut); err != nil {
		return r, err
	}
	if l.AuditRetention > 0 {
		if r.AuditPurged, err = s.PurgeAudit(ctx, now.Add(-l.AuditRetention)); err != nil {
			return r, err
		}
	}
	return r, nil
}

// AddAnchor stores an anchor and applies the anchor limits: when there are
// more than AnchorsMax, the oldest of the lowest priority go. It is an error
// (and nothing is stored) when the new anchor itself would be the one to
// go, because every other anchor is more important.
func AddAnchor(ctx context.Context, s warden.StateStore, a warden.Anchor, l warden.StateLimits, now time.Time) (warden.Anchor, error) {
	p, err := warden.ParsePriority(string(a.Priority))
	if err != nil {
		return a, err
	}
	a.Priority = p
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	l = l.WithDefaults()
	st, err := s.State(ctx)
	if err != nil {
		return a, err
	}
	// Would the new anchor survive the count limit? (Ages are not
	// applied here: Purge does that.)
	const trialID = "\x00new"
	trial := append(append([]warden.Anchor{}, st.Anchors...), a)
	trial[len(trial)-1].ID = trialID
	for _, id := range warden.PlanAnchors(trial, now, countOnly(l)).Remove {
		if id == trialID {
			return a, fmt.Errorf("anchor limit: %d anchors, none less important than a %s one; remove one first (warden anchor rm ID)", l.AnchorsMax, a.Priority)
		}
	}
	a, err = s.AddAnchor(ctx, a)
	if err != nil {
		return a, err
	}
	st, err = s.State(ctx)
	if err != nil {
		return a, err
	}
	for _, id := range warden.PlanAnchors(st.Anchors, now, countOnly(l)).Remove {
		if err := s.RemoveAnchor(ctx, id); err != nil && !errors.Is(err, warden.ErrNotFound) {
			return a, err
		}
	}
	return a, nil
}

// SetPhase sets the project phase and records the change in the history.
func SetPhase(ctx context.Context, s warden.StateStore, phase string, l warden.StateLimits, now time.Time) error {
	if err := s.SetPhase(ctx, phase); err != nil {
		return err
	}
	if err := s.AddHistory(ctx, warden.HistoryEntry{Time: now, Action: "phase:" + phase, Result: "pass"}); err != nil {
		return err
	}
	_, err := s.ArchiveHistory(ctx, l.WithDefaults().HistoryMax)
	return err
}

// countOnly keeps the count limit of l and switches the age limits off.
func countOnly(l warden.StateLimits) warden.StateLimits {
	return warden.StateLimits{AnchorsMax: l.AnchorsMax, AnchorDemoteAfter: time.Duration(1 << 62)}
}
