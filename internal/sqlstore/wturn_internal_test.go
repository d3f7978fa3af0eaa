package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// TestWriteTurnOutlastsBusyTimeout: where the database takes one writer at
// a time, a write of the process waits for the process's other writes in
// turn, however long they hold the file's lock, instead of failing once
// SQLite's busy timeout (here 20 ms) has passed. Each kind of lone write
// is tried: a statement (UseGrant), an audit record, a transaction
// (UpdateSession).
func TestWriteTurnOutlastsBusyTimeout(t *testing.T) {
	ctx := context.Background()
	s := groupStoreBusy(t, 20)
	g, err := s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "x", UsesLeft: 5})
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]func() error{
		"use grant": func() error { _, err := s.UseGrant(ctx, g.ID); return err },
		"audit": func() error {
			_, err := s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow})
			return err
		},
		"session": func() error {
			_, err := s.UpdateSession(ctx, "S", func(x *warden.Session, _ bool) error { x.Calls++; return nil })
			return err
		},
	}
	for name, write := range writes {
		tx, done, err := s.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() { errc <- write() }()
		// The transaction holds the lock ten busy timeouts long.
		time.Sleep(200 * time.Millisecond)
		select {
		case err := <-errc:
			t.Fatalf("%s: done while another write held the lock (%v)", name, err)
		default:
		}
		if _, err := tx.ExecContext(ctx, `UPDATE grants SET value = value WHERE id = ?`, g.ID); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		done()
		if err := <-errc; err != nil {
			t.Errorf("%s after a long write of the same process: %v", name, err)
		}
	}
}
