package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/postgres"
)

// TestDecisionInTwoBatches: a decision alone is three batches (BEGIN and
// the session's read; the writes; COMMIT, once its caller still waits),
// each one round trip once its statements are prepared on the
// connection; a group of several sends the writes and COMMIT together
// (two); what it wrote is all there. A call recorded before fails the second batch, which leaves
// nothing of the group: the write made alone then says ErrConflict.
func TestDecisionInTwoBatches(t *testing.T) {
	s := freshStore(t, pgtest.Admin(t))
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	write := func(sid, callID string) (warden.AuditRecord, error) {
		_, rec, err := s.WriteDecision(ctx, sid, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
			x.Calls++
			return &warden.DecisionRecord{
				Audit:       warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Allow, CallID: callID, Args: map[string]any{"command": "ls"}},
				History:     &warden.HistoryEntry{Session: sid, Action: "allow:Bash", Result: "ok"},
				HistoryKeep: 50,
			}, nil
		})
		return rec, err
	}
	if _, err := write("one", "c0"); err != nil { // prepares the statements
		t.Fatal(err)
	}
	before := postgres.Batches()
	for i := 1; i <= 5; i++ {
		rec, err := write("one", fmt.Sprint("c", i))
		if err != nil {
			t.Fatal(err)
		}
		if rec.ID == 0 {
			t.Fatalf("record %d has no id", i)
		}
	}
	if n := postgres.Batches() - before; n != 15 {
		t.Errorf("5 decisions one after the other sent %d batches, want 15", n)
	}
	x, err := s.Session(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	if x.Calls != 6 {
		t.Errorf("calls = %d, want 6", x.Calls)
	}
	if recs, err := s.Audit(ctx, warden.AuditFilter{Session: "one"}); err != nil || len(recs) != 6 {
		t.Fatalf("%d records (%v), want 6", len(recs), err)
	}

	// c3 again, in a group of its own and in one with others.
	if _, err := write("one", "c3"); !errors.Is(err, warden.ErrConflict) {
		t.Errorf("a call recorded before: %v, want ErrConflict", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("g", i)
			if i == 0 {
				id = "c3"
			}
			_, errs[i] = write(fmt.Sprint("s", i%3), id)
		}()
	}
	wg.Wait()
	if !errors.Is(errs[0], warden.ErrConflict) {
		t.Errorf("a call recorded before, in a group: %v, want ErrConflict", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("write g%d: %v", i+1, err)
		}
	}
	if x, err := s.Session(ctx, "one"); err != nil || x.Calls != 6 {
		t.Errorf("calls = %d (%v) after the conflicts, want 6", x.Calls, err)
	}
	total := 0
	for i := range 3 {
		recs, err := s.Audit(ctx, warden.AuditFilter{Session: fmt.Sprint("s", i)})
		if err != nil {
			t.Fatal(err)
		}
		total += len(recs)
	}
	if total != 7 {
		t.Errorf("%d records of the 7 new calls", total)
	}
	// No connection was left in a transaction: a plain query still runs.
	var one int
	for range 30 {
		if err := s.DB().QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
			t.Fatal(err)
		}
	}
}
