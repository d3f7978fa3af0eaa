package handler

import (
	"context"
	"errors"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/session"
)

// systemText is the governance text for a system prompt: the session-start
// prefix, or the post-compaction reminder once the session was compacted.
func systemText(ctx context.Context, tr *session.Tracker, sid, host, role string) (string, error) {
	s, ps, err := sessionState(ctx, tr.Store, sid)
	if errors.Is(err, warden.ErrNotFound) {
		_, text, err := tr.Start(ctx, session.StartOptions{ID: sid, Role: role, Host: host})
		return text, err
	}
	if err != nil {
		return "", err
	}
	pol := tr.Engine.Policy()
	if s.Compactions > 0 {
		return session.Reminder(pol, s, ps)
	}
	return session.Prefix(pol, s, ps)
}

// sessionState reads a session (an error wrapping warden.ErrNotFound when
// there is none) and the project state its governance text is made from.
func sessionState(ctx context.Context, st session.Store, sid string) (warden.Session, warden.ProjectState, error) {
	s, err := st.Session(ctx, sid)
	if err != nil {
		return s, warden.ProjectState{}, err
	}
	ps, err := st.State(ctx)
	return s, ps, err
}

// modelText is the governance text to add to a model request that lacks
// warden's text (hook.Model: Gemini CLI's BeforeModel). Gemini CLI keeps what SessionStart and
// BeforeAgent give in its history, so a session that was given its text
// has lost it: its history was compressed (or otherwise cut). That is
// recorded as a compaction, and the request gets the post-compaction
// reminder. A text added to a request is not kept in the history, so the
// reminder, now due (Tracker.Governance), goes into every request until
// the next prompt's BeforeAgent puts it into the history. A request the
// model has not answered yet (the session's first) has lost nothing: a
// prompt given on Gemini CLI's command line (-i) can reach the model
// before SessionStart's text reaches the history, and that request gets the
// text due without a compaction on record. A session warden does not know
// gets nothing here (SessionStart and BeforeAgent come first).
func modelText(ctx context.Context, tr *session.Tracker, sid string, ev hook.Event) (string, error) {
	s, ps, err := sessionState(ctx, tr.Store, sid)
	if errors.Is(err, warden.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	pol := tr.Engine.Policy()
	prefix, err := session.Prefix(pol, s, ps)
	if err != nil {
		return "", err
	}
	reminder, err := session.Reminder(pol, s, ps)
	if err != nil {
		return "", err
	}
	if ev.Carries(prefix) || ev.Carries(reminder) {
		return "", nil
	}
	if s.GovernanceInjected && ev.Answered() {
		if s, err = tr.Compact(ctx, sid); err != nil {
			return "", err
		}
	}
	if s.Compactions > 0 {
		return reminder, nil
	}
	// Never given its text (a failed SessionStart, say), or given it but
	// not yet in the history the model saw: the prefix is due.
	return prefix, nil
}

// guidance is the text added to a tool's result after the call broke a
// rule of the policy but was allowed to run (a warn rule, a first-tool
// violation in warn mode): the warnings of the call's audit record.
func guidance(ctx context.Context, st warden.AuditLog, ev hook.Event) (string, error) {
	if ev.Session == "" || ev.Call.Tool == "" {
		return "", nil
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{Session: ev.Call.Session, Tool: ev.Call.Tool, Limit: 1})
	if err != nil || len(recs) == 0 || len(recs[0].Warnings) == 0 {
		return "", err
	}
	var b strings.Builder
	b.WriteString("## WARDEN GUIDANCE\n\nThe call you just made ran, but it broke the project's policy:\n")
	for _, w := range recs[0].Warnings {
		b.WriteString("- " + w + "\n")
	}
	b.WriteString("Follow the policy from now on; the governance text at the start of this session lists its rules.\n")
	return session.Plain(b.String()), nil
}
