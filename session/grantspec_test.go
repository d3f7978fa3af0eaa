package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// TestGrantSpec: a grant added by hand is exactly one grant's worth, with
// its bounds, and a spec that is not says what to give instead.
func TestGrantSpec(t *testing.T) {
	e := setup(t, testPolicy)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	gs, err := session.GrantSpec{Tool: "Bash", Command: "git push origin main && make", Role: "builder", Session: "s1", Expires: "8h", Uses: 3, By: "alice"}.Grants(e.pol, now)
	if err != nil || len(gs) != 2 {
		t.Fatalf("command: %+v %v, want one grant per simple command", gs, err)
	}
	for _, g := range gs {
		if g.Subject != warden.SubjectCommand || g.Tool != "Bash" || g.Role != "builder" || g.Session != "s1" || g.UsesLeft != 3 ||
			g.CreatedBy != "alice" || !g.CreatedAt.Equal(now) || !g.Expires.Equal(now.Add(8*time.Hour)) {
			t.Errorf("command grant %+v", g)
		}
	}
	if gs, err := (session.GrantSpec{Tool: "Write", All: true}).Grants(e.pol, now); err != nil || len(gs) != 1 || gs[0].Pattern != "**" || !gs[0].Expires.IsZero() {
		t.Errorf("all: %+v %v", gs, err)
	}
	for spec, want := range map[*session.GrantSpec]string{
		{Command: "ls"}: "tool is required",
		{Tool: "Bash"}:  "exactly one of",
		{Tool: "Bash", Command: "ls", Pattern: "ls *"}: "exactly one of",
		{Tool: "Bash", Command: "ls", All: true}:       "exactly one of",
		{Tool: "Bash", Command: "ls", Uses: -1}:        "must not be negative",
		{Tool: "Bash", Command: "ls", Expires: "soon"}: "positive duration",
		{Tool: "Bash", Command: "ls", Expires: "0s"}:   "positive duration",
		{Tool: "Bash", Command: "ls", Session: "a\nb"}: "session",
		{Tool: "Bash", All: true}:                      "every program",
	} {
		if gs, err := spec.Grants(e.pol, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %+v %v, want an error saying %q", *spec, gs, err, want)
		}
	}
}
