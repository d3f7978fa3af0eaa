package session_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// TestTrackerEvent: each lifecycle event does what its method does and
// returns the governance text due: the role's prefix on creation and on
// resume, the reminder after a compaction, none at the end; an unknown
// event changes nothing and is an error.
func TestTrackerEvent(t *testing.T) {
	e := setup(t, testPolicy)
	s, text, err := e.tr.Event(ctx, session.Created, session.StartOptions{ID: "ev", Role: "builder", Host: "claude"})
	if err != nil || s.Role != "builder" || s.Host != "claude" || s.Status != warden.SessionActive || !strings.Contains(text, "builder") {
		t.Fatalf("created: %+v %q %v", s, text, err)
	}
	if _, text, err = e.tr.Event(ctx, session.Resumed, session.StartOptions{ID: "ev"}); err != nil || !strings.Contains(text, "builder") {
		t.Errorf("resumed: %q %v", text, err)
	}
	s, text, err = e.tr.Event(ctx, session.Compacted, session.StartOptions{ID: "ev"})
	if err != nil || s.Compactions != 1 || text == "" {
		t.Errorf("compacted: %+v %q %v", s, text, err)
	}
	if got, _ := e.store.Session(ctx, "ev"); !got.GovernanceInjected {
		t.Errorf("the reminder returned after the compaction does not count as injected: %+v", got)
	}
	if _, _, err := e.tr.Event(ctx, "paused", session.StartOptions{ID: "ev"}); err == nil || !strings.Contains(err.Error(), "paused") {
		t.Errorf("unknown event: %v", err)
	}
	s, text, err = e.tr.Event(ctx, session.Ended, session.StartOptions{ID: "ev"})
	if err != nil || s.Status != warden.SessionEnded || text != "" || s.Calls != 0 {
		t.Errorf("ended: %+v %q %v", s, text, err)
	}
	if _, _, err := e.tr.Event(ctx, session.Idle, session.StartOptions{ID: "never-started"}); err == nil {
		t.Errorf("idle of a session that never started: no error")
	}
}
