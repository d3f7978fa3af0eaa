package sqlstore

import (
	"context"
	"fmt"

	"github.com/warden-run/warden"
)

// StaleHistory is WriteDecision's error for a decision made on a
// session's audit records (warden.DecisionRecord.HistoryRead) when the
// session has a newer record than the decision read: another call of the
// session was recorded meanwhile. Nothing of the decision was written;
// decide the call again on the records as they are.
type StaleHistory struct{ Session string }

func (e StaleHistory) Error() string {
	return fmt.Sprintf("session %q recorded another call while this one was decided on its history: decide it again", e.Session)
}

// StaleRead marks the error for the session layer, which decides again.
func (StaleHistory) StaleRead() bool { return true }

// newestRecord is the id of a session's newest audit record (0: none),
// one seek of the index audit_session. Audit ids are given in the order
// the records are committed for a session: under SQLite's one writer at
// a time, and where writers lock the session's row (PostgreSQL) for
// every decision of the session. On PostgreSQL a record written outside
// a decision's transaction (AppendAudit: an ask queued for a human, a
// halted call, a failure) takes no such lock, and may commit after a
// record with a higher id: the check does not see it.
const newestRecord = `SELECT COALESCE(MAX(id), 0) FROM audit WHERE session = ?`

// newestSub is newestRecord as a column of a query whose rows are
// sessions s (a pipelined group's newestStmt).
const newestSub = `, (SELECT COALESCE(MAX(a.id), 0) FROM audit a WHERE a.session = s.id)`

// historyCurrent fails with StaleHistory when dr was decided on the
// session's audit records and the session has a record newer than the
// newest it read.
func (s *Store) historyCurrent(ctx context.Context, q prepared, session string, dr *warden.DecisionRecord) error {
	if dr == nil || !dr.HistoryRead {
		return nil
	}
	var newest int64
	if err := q.QueryRowContext(ctx, s.d.Rebind(newestRecord), session).Scan(&newest); err != nil {
		return fmt.Errorf("read the session's newest record: %w", err)
	}
	if newest > dr.HistoryThrough {
		return StaleHistory{Session: session}
	}
	return nil
}
