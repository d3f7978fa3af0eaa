package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/sqlstore"
)

// CachedReads checks sqlstore.CachedReads on two stores a and b on one
// database (two processes): a halt or grant b changes after a kept
// answer of a is never recorded on: a's write fails sqlstore.StaleRead,
// writes nothing, and the call's next read is fresh; an answer kept never
// says halted.
func CachedReads(t *testing.T, a, b *sqlstore.Store) {
	bg := context.Background()
	const sid, agent = "cache-s1", "bench"
	read := func(ctx context.Context) (bool, []warden.Grant) {
		t.Helper()
		_, halted, grants, err := a.HaltAndGrants(ctx, sid, agent)
		if err != nil {
			t.Fatal(err)
		}
		return halted, grants
	}
	ran := 0
	write := func(ctx context.Context) error {
		t.Helper()
		_, _, err := a.WriteDecision(ctx, sid, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
			ran++
			x.Calls++
			return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Allow, Args: map[string]any{}}}, nil
		})
		return err
	}
	records := func() int {
		t.Helper()
		recs, err := a.Audit(bg, warden.AuditFilter{Session: sid})
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	stale := func(err error) bool { return errors.As(err, new(sqlstore.StaleRead)) }

	// A first read is fresh and kept; a second call answers from it and
	// records on it while nothing changed.
	read(sqlstore.CachedReads(bg))
	ctx := sqlstore.CachedReads(bg)
	read(ctx)
	if err := write(ctx); err != nil {
		t.Fatalf("a write on an answer kept, nothing changed: %v", err)
	}
	if records() != 1 {
		t.Fatalf("%d records, want 1", records())
	}

	// Another process adds a grant: a call that read the answer kept
	// before is not recorded, and its next read has the grant.
	ctx = sqlstore.CachedReads(bg)
	if _, grants := read(ctx); len(grants) != 0 {
		t.Fatalf("grants %v before one was added", grants)
	}
	g, err := b.AddGrant(bg, warden.Grant{Tool: "Bash", Session: sid, Subject: "command", Value: "make", UsesLeft: -1})
	if err != nil {
		t.Fatal(err)
	}
	before := ran
	if err := write(ctx); !stale(err) {
		t.Fatalf("a write on an answer kept from before a grant was added: %v, want StaleRead", err)
	}
	if ran != before || records() != 1 {
		t.Fatalf("a stale write ran its decision (%d times) or recorded it (%d records)", ran-before, records())
	}
	if _, grants := read(ctx); len(grants) != 1 || grants[0].ID != g.ID {
		t.Fatalf("the read after a stale write: grants %v, want %s", grants, g.ID)
	}
	if err := write(ctx); err != nil {
		t.Fatalf("a write after a fresh read: %v", err)
	}

	// A halt set elsewhere: the call on the answer kept is refused, and
	// the reads after say halted, none from what was kept.
	read(sqlstore.CachedReads(bg)) // kept, with the grant
	ctx = sqlstore.CachedReads(bg)
	if halted, grants := read(ctx); halted || len(grants) != 1 {
		t.Fatalf("kept answer: halted %v, grants %v", halted, grants)
	}
	if _, err := b.SetHalt(bg, warden.Halt{Message: "stop everything", By: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := write(ctx); !stale(err) {
		t.Fatalf("a write on an answer kept from before a halt: %v, want StaleRead", err)
	}
	if halted, _ := read(ctx); !halted {
		t.Fatal("the read after a halt's stale write is not halted")
	}
	for range 2 {
		if halted, _ := read(sqlstore.CachedReads(bg)); !halted {
			t.Fatal("a new call's read after a halt is not halted")
		}
	}

	// Resumed elsewhere: a kept answer never says halted.
	if err := b.ClearHalt(bg, ""); err != nil {
		t.Fatal(err)
	}
	if halted, _ := read(sqlstore.CachedReads(bg)); halted {
		t.Fatal("a read after the halt was cleared is halted")
	}

	// A grant revoked elsewhere.
	read(sqlstore.CachedReads(bg))
	ctx = sqlstore.CachedReads(bg)
	if _, grants := read(ctx); len(grants) != 1 {
		t.Fatalf("kept answer: grants %v, want the one", grants)
	}
	if err := b.RevokeGrant(bg, g.ID); err != nil {
		t.Fatal(err)
	}
	if err := write(ctx); !stale(err) {
		t.Fatalf("a write on an answer kept from before a grant was revoked: %v, want StaleRead", err)
	}
	if _, grants := read(ctx); len(grants) != 0 {
		t.Fatalf("grants %v after the revoke", grants)
	}
}
