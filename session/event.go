package session

import (
	"context"
	"fmt"

	"github.com/warden-run/warden"
)

// Event records a lifecycle event of the session o.ID and returns the
// session and the governance text due now:
//
//   - Created: Start (o's role, parent, host, depth and intent describe the
//     new session); the text is the session-start prefix for its role.
//   - Resumed: Resume; the text is the resume note and the prefix.
//   - Compacted: Compact; the text is the post-compaction reminder
//     (Governance), which then counts as injected.
//   - Idle, Ended: End; no text.
//
// Any other event is an error. The session is returned as stored where the
// event's method returns it (Created, Compacted, Idle, Ended).
func (t *Tracker) Event(ctx context.Context, ev Event, o StartOptions) (warden.Session, string, error) {
	switch ev {
	case Created:
		return t.Start(ctx, o)
	case Resumed:
		text, err := t.Resume(ctx, o.ID)
		return warden.Session{}, text, err
	case Compacted:
		s, err := t.Compact(ctx, o.ID)
		if err != nil {
			return s, "", err
		}
		text, err := t.Governance(ctx, o.ID)
		return s, text, err
	case Idle, Ended:
		s, err := t.End(ctx, o.ID, ev)
		return s, "", err
	}
	return warden.Session{}, "", fmt.Errorf("unknown event %q: want %s, %s, %s, %s or %s", ev, Created, Resumed, Compacted, Idle, Ended)
}
