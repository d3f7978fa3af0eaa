package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// Event is a session lifecycle event (see Tracker.Event for what each does).
type Event string

// Lifecycle events.
const (
	Created   Event = "created"
	Resumed   Event = "resumed"
	Compacted Event = "compacted"
	Idle      Event = "idle"
	Ended     Event = "ended"
)

// StartOptions describe a new session.
type StartOptions struct {
	ID   string
	Role string
	Host string
	// Parent is the session that delegated to this one; the new session's
	// depth is then the parent's depth plus one (Depth, when larger, wins).
	Parent string
	Depth  int
	// Intent is the user's first request, if known.
	Intent string
}

// Start records a session's creation (a session that exists already is
// resumed instead) and returns it with the governance text due now: the
// session-start prefix for its role. The text counts as injected. Start
// also applies the retention limits (Purge); a purge failure does not fail
// the start.
func (t *Tracker) Start(ctx context.Context, o StartOptions) (warden.Session, string, error) {
	if o.ID == "" {
		return warden.Session{}, "", errors.New("start session: empty session id")
	}
	depth := o.Depth
	if o.Parent != "" {
		parent, err := t.Store.Session(ctx, o.Parent)
		if err != nil && !errors.Is(err, warden.ErrNotFound) {
			return warden.Session{}, "", err
		}
		if err == nil {
			if err := ownParent(parent, o.ID, t.Agent); err != nil {
				return warden.Session{}, "", err
			}
		}
		if err == nil && parent.Depth+1 > depth {
			depth = parent.Depth + 1
		}
		// A subagent lies one level deeper than the main agent at least,
		// even when warden never saw its parent start.
		depth = max(depth, 1)
		// A subagent whose type the policy does not name as a role takes
		// its parent's role: it is never wider than its parent.
		if err == nil && o.Role == "" {
			o.Role = parent.Role
		}
	}
	now := t.now()
	existed := false
	s, err := t.update(ctx, o.ID, func(s *warden.Session, created bool) error {
		existed = !created
		if created {
			s.StartedAt = now
			s.Role, s.Host, s.Parent, s.Depth, s.Intent = o.Role, o.Host, o.Parent, depth, o.Intent
		} else {
			s.Resumes++
			if o.Role != "" {
				s.Role = o.Role
			}
			// A session a call or a system prompt opened before the host
			// reported its start as a subagent's: the start's parent and
			// depth count (depth only deepens).
			if depth > s.Depth {
				s.Depth = depth
			}
			if s.Parent == "" {
				s.Parent = o.Parent
			}
			if o.Intent != "" {
				s.Intent = o.Intent
			}
		}
		s.Status, s.EndedAt, s.LastSeen = warden.SessionActive, time.Time{}, now
		s.GovernanceInjected = true
		return nil
	})
	if err != nil {
		return s, "", err
	}
	if !existed {
		_, _ = t.Purge(ctx) // best effort: retention is not worth failing a session for
	}
	st, err := t.Store.State(ctx)
	if err != nil {
		return s, "", err
	}
	text, err := Prefix(t.policy(), s, st)
	if existed {
		note, nerr := ResumeNote(t.policy(), s, st)
		if nerr != nil {
			return s, "", nerr
		}
		text = note + "\n" + text
	}
	return s, text, err
}

// Prompt records the user's latest request in the session; later calls
// without an intent of their own are decided with it (rules' `intent`).
func (t *Tracker) Prompt(ctx context.Context, id, text string) (warden.Session, error) {
	now := t.now()
	return t.update(ctx, id, func(s *warden.Session, created bool) error {
		if created {
			s.StartedAt, s.Status = now, warden.SessionActive
		}
		s.Intent, s.LastSeen = text, now
		return nil
	})
}

// TakeRole gives the session a role when it has none yet (OpenCode names
// the agent of each message); a session that does not exist yet is created.
func (t *Tracker) TakeRole(ctx context.Context, id, role string) (warden.Session, error) {
	now := t.now()
	return t.update(ctx, id, func(s *warden.Session, created bool) error {
		if created {
			s.StartedAt, s.Status = now, warden.SessionActive
		}
		if s.Role == "" {
			s.Role = role
		}
		return nil
	})
}

// SetIntent records the session's active intent id.
func (t *Tracker) SetIntent(ctx context.Context, id, intentID string) (warden.Session, error) {
	now := t.now()
	return t.update(ctx, id, func(s *warden.Session, created bool) error {
		if created {
			s.StartedAt, s.Status = now, warden.SessionActive
		}
		s.IntentID, s.LastSeen = intentID, now
		return nil
	})
}

// Governance returns the governance text due for the session now, and
// marks it injected: the session-start prefix for a session that has not
// had it, the post-compaction reminder after a compaction, and "" when
// nothing is due. A session that does not exist yet is created.
func (t *Tracker) Governance(ctx context.Context, id string) (string, error) {
	now := t.now()
	var due bool
	s, err := t.update(ctx, id, func(s *warden.Session, created bool) error {
		if created {
			s.StartedAt, s.Status, s.LastSeen = now, warden.SessionActive, now
		}
		due = !s.GovernanceInjected
		s.GovernanceInjected = true
		return nil
	})
	if err != nil || !due {
		return "", err
	}
	st, err := t.Store.State(ctx)
	if err != nil {
		return "", err
	}
	if s.Compactions > 0 {
		return Reminder(t.policy(), s, st)
	}
	return Prefix(t.policy(), s, st)
}

// Compact records that the host compacted the session's context: the
// governance text is due again, as the post-compaction reminder (returned
// by the next Governance call).
func (t *Tracker) Compact(ctx context.Context, id string) (warden.Session, error) {
	now := t.now()
	return t.update(ctx, id, func(s *warden.Session, created bool) error {
		if created {
			s.StartedAt, s.Status = now, warden.SessionActive
		}
		s.Compactions++
		s.GovernanceInjected = false
		s.LastSeen = now
		return nil
	})
}

// Resume records that a session was resumed and returns the resume note
// followed by the session-start prefix (the text counts as injected).
func (t *Tracker) Resume(ctx context.Context, id string) (string, error) {
	_, text, err := t.Start(ctx, StartOptions{ID: id})
	return text, err
}

// End records that a session went idle (Idle) or ended (Ended), and adds
// its stats to the project history.
func (t *Tracker) End(ctx context.Context, id string, ev Event) (warden.Session, error) {
	status := warden.SessionEnded
	switch ev {
	case Idle:
		status = warden.SessionIdle
	case Ended:
	default:
		return warden.Session{}, fmt.Errorf("end session: event %q: want idle or ended", ev)
	}
	now := t.now()
	s, err := t.update(ctx, id, func(s *warden.Session, created bool) error {
		if created {
			return fmt.Errorf("end session %q: %w", id, warden.ErrNotFound)
		}
		s.Status, s.EndedAt, s.LastSeen = status, now, now
		return nil
	})
	if err != nil {
		return s, err
	}
	// A session that ends has not failed: its denied calls and broken
	// session rules each have an entry of their own (violation:...), and
	// the end's action counts them.
	h := warden.HistoryEntry{Time: now, Session: id, Agent: s.Role, Result: "pass",
		Action: fmt.Sprintf("session:%s calls=%d violations=%d depth=%d first_tool=%s",
			status, s.Calls, s.Violations, s.Depth, orNone(s.FirstTool))}
	if err := t.Store.AddHistory(ctx, h); err != nil {
		return s, err
	}
	_, err = t.Store.ArchiveHistory(ctx, Limits(t.policy()).HistoryMax)
	return s, err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Outcome records what a call that was let through did (a host's
// post-tool-use event) in the project history: "outcome:TOOL", with result
// pass or fail and a short, redacted detail.
func (t *Tracker) Outcome(ctx context.Context, id, tool string, ok bool, detail string) error {
	outcome := warden.OutcomeOK
	if !ok {
		outcome = warden.OutcomeFail
	}
	return t.RecordOutcome(ctx, id, tool, outcome, detail)
}

// HistoryResult is the history result of a call's outcome: pass for
// warden.OutcomeOK, fail for OutcomeFail, and unknown where the host did
// not tell (an unknown outcome is never recorded as a pass).
func HistoryResult(outcome string) string {
	switch outcome {
	case warden.OutcomeOK:
		return "pass"
	case warden.OutcomeFail:
		return "fail"
	}
	return "unknown"
}

// RecordOutcome is Outcome with the outcome as the host reported it
// (warden.OutcomeOK, OutcomeFail, or "" unknown): the history's result is
// HistoryResult's.
func (t *Tracker) RecordOutcome(ctx context.Context, id, tool, outcome, detail string) error {
	now := t.now()
	s, err := t.update(ctx, id, func(s *warden.Session, created bool) error {
		if created {
			s.StartedAt, s.Status = now, warden.SessionActive
		}
		s.LastSeen = now
		return nil
	})
	if err != nil {
		return err
	}
	result := HistoryResult(outcome)
	action := "outcome:" + tool
	if detail = strings.Join(strings.Fields(warden.RedactString(detail)), " "); detail != "" {
		if len(detail) > 120 {
			detail = detail[:117] + "..."
		}
		action += " " + detail
	}
	if err := t.Store.AddHistory(ctx, warden.HistoryEntry{Time: now, Session: id, Agent: s.Role, Action: action, Result: result}); err != nil {
		return err
	}
	_, err = t.Store.ArchiveHistory(ctx, Limits(t.policy()).HistoryMax)
	return err
}

// CallOutcome records a call's outcome, as the host reported it, on the
// call's audit record, where sequence rules read it (after.ok,
// repeat.failures). A call warden has no record of (the host ran it
// without asking, or its record is purged) is no error: there is nothing
// to tie the outcome to.
func (t *Tracker) CallOutcome(ctx context.Context, o warden.Outcome) error {
	if o.Session == "" || o.Tool == "" {
		return nil
	}
	if err := t.Store.SetOutcome(ctx, o); err != nil && !errors.Is(err, warden.ErrNotFound) {
		return err
	}
	return nil
}
