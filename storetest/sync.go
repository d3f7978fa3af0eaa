package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// OutcomesLeaveSync checks that writing outcomes, whose commits do not wait
// for the disk, leaves no connection of the pool in that mode: a decision
// made on such a connection would be answered before it is durable. show
// is the query that reads a connection's setting, and want the value of a
// connection whose commits wait.
func OutcomesLeaveSync(t *testing.T, s warden.Store, db *sql.DB, show, want string) {
	t.Helper()
	ctx := context.Background()
	for i := range 4 {
		sid := fmt.Sprint("sync-", i)
		if _, err := s.AppendAudit(ctx, warden.AuditRecord{Time: time.Now(), Session: sid, Tool: "Bash", Decision: warden.Allow}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetOutcome(ctx, warden.Outcome{Session: sid, Tool: "Bash", OK: true}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Outcome != warden.OutcomeOK {
			t.Errorf("record %d of %s: outcome %q, want %q", r.ID, r.Session, r.Outcome, warden.OutcomeOK)
		}
	}
	// Hold as many connections as the pool keeps idle: every connection
	// the writes above used is among them.
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 8 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var got string
		if err := c.QueryRowContext(ctx, show).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("connection %d: %s = %s after an outcome was written, want %s", i, show, got, want)
		}
	}
}
