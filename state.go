package warden

import (
	"fmt"
	"sort"
	"time"
)

// ProjectState is the project's memory that outlives sessions and is
// re-injected after a compaction: the phase, the anchors, and the
// recent history.
type ProjectState struct {
	Phase   string   `json:"phase"`
	Anchors []Anchor `json:"anchors"`
	// History holds the live entries, oldest first; older ones are archived.
	History   []HistoryEntry `json:"history"`
	UpdatedAt time.Time      `json:"updated_at,omitempty"`
}

// Anchor is a fact that must survive compaction, with a priority.
type Anchor struct {
	ID        string    `json:"id"`
	Priority  Priority  `json:"priority"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	// DemotedAt is when a high anchor was demoted to normal; the age of a
	// demoted anchor counts from then.
	DemotedAt time.Time `json:"demoted_at,omitempty"`
}

// Priority is an anchor's priority.
type Priority string

// Anchor priorities, most important first.
const (
	Critical Priority = "critical"
	High     Priority = "high"
	Normal   Priority = "normal"
	Low      Priority = "low"
)

// ParsePriority checks a priority name; empty means normal.
func ParsePriority(s string) (Priority, error) {
	switch p := Priority(s); p {
	case Critical, High, Normal, Low:
		return p, nil
	case "":
		return Normal, nil
	}
	return "", fmt.Errorf("priority %q: want critical, high, normal or low", s)
}

func (p Priority) rank() int {
	switch p {
	case Critical:
		return 0
	case High:
		return 1
	case Normal:
		return 2
	}
	return 3
}

// Preserved reports whether anchors of this priority survive age and count
// limits (critical and high).
func (p Priority) Preserved() bool { return p == Critical || p == High }

// HistoryEntry is one line of project history (a violation, a phase change,
// a session's stats).
type HistoryEntry struct {
	ID      int64     `json:"id"`
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Action  string    `json:"action"`
	Result  string    `json:"result,omitempty"`
}

// StateLimits are the retention limits of the project state (docs/policy.md, top level `state`).
type StateLimits struct {
	AnchorsMax        int           // default 20
	AnchorDemoteAfter time.Duration // default 48h
	HistoryMax        int           // default 50
	SessionMaxAge     time.Duration // default 168h
	// AuditRetention is how long audit records are kept; zero keeps them.
	AuditRetention time.Duration
	// ApprovalLifetime is how long an approval lives (pending, or answered
	// and not yet delivered); default 24h.
	ApprovalLifetime time.Duration
}

// WithDefaults fills zero limits with the defaults docs/policy.md gives.
func (l StateLimits) WithDefaults() StateLimits {
	if l.AnchorsMax <= 0 {
		l.AnchorsMax = 20
	}
	if l.AnchorDemoteAfter <= 0 {
		l.AnchorDemoteAfter = 48 * time.Hour
	}
	if l.HistoryMax <= 0 {
		l.HistoryMax = 50
	}
	if l.SessionMaxAge <= 0 {
		l.SessionMaxAge = 168 * time.Hour
	}
	if l.ApprovalLifetime <= 0 {
		l.ApprovalLifetime = 24 * time.Hour
	}
	return l
}

// AnchorPlan is what the anchor policy does to a set of anchors.
type AnchorPlan struct {
	Demote []string // high anchors to demote to normal
	Remove []string // anchors to delete
}

// PlanAnchors applies the anchor policy at time now: a high anchor
// older than AnchorDemoteAfter is demoted to normal; a normal or low anchor
// older than that (counted from its demotion, if it was demoted) is deleted;
// and while more than AnchorsMax remain, the oldest of the lowest priority is
// deleted. Critical and high anchors are never deleted, so more than
// AnchorsMax anchors remain only when they are all critical or high.
// PlanAnchors is pure.
func PlanAnchors(anchors []Anchor, now time.Time, l StateLimits) AnchorPlan {
	l = l.WithDefaults()
	var plan AnchorPlan
	type live struct {
		a   Anchor
		pri Priority
		at  time.Time
	}
	var keep []live
	for _, a := range anchors {
		switch {
		case a.Priority == High && now.Sub(a.CreatedAt) > l.AnchorDemoteAfter:
			plan.Demote = append(plan.Demote, a.ID)
			keep = append(keep, live{a, Normal, now})
		case a.Priority == Normal || a.Priority == Low:
			since := a.CreatedAt
			if !a.DemotedAt.IsZero() {
				since = a.DemotedAt
			}
			if now.Sub(since) > l.AnchorDemoteAfter {
				plan.Remove = append(plan.Remove, a.ID)
				continue
			}
			keep = append(keep, live{a, a.Priority, a.CreatedAt})
		default:
			keep = append(keep, live{a, a.Priority, a.CreatedAt})
		}
	}
	if len(keep) > l.AnchorsMax {
		// Candidates for eviction: not preserved, lowest priority first,
		// then oldest first.
		var cand []live
		for _, k := range keep {
			if !k.pri.Preserved() {
				cand = append(cand, k)
			}
		}
		sort.SliceStable(cand, func(i, j int) bool {
			if cand[i].pri.rank() != cand[j].pri.rank() {
				return cand[i].pri.rank() > cand[j].pri.rank()
			}
			return cand[i].a.CreatedAt.Before(cand[j].a.CreatedAt)
		})
		for n := len(keep) - l.AnchorsMax; n > 0 && len(cand) > 0; n-- {
			plan.Remove = append(plan.Remove, cand[0].a.ID)
			// A demoted anchor that is evicted is not demoted as well.
			for i, id := range plan.Demote {
				if id == cand[0].a.ID {
					plan.Demote = append(plan.Demote[:i], plan.Demote[i+1:]...)
					break
				}
			}
			cand = cand[1:]
		}
	}
	return plan
}
