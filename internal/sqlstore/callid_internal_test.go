package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// TestCallIDLookupsUseTheIndex: every call has an id (the gate gives one
// to a call without), so the lookups of a call id run for every decision:
// SQLite must find it with the index audit_call, not read the audit
// table. (A plain call_id = ? read the whole table: the partial index's
// condition, call_id <> ”, is not implied by a bound value.)
func TestCallIDLookupsUseTheIndex(t *testing.T) {
	s := groupStore(t)
	plan := func(q string, args ...any) string {
		t.Helper()
		rows, err := s.DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
	}
	if p := plan(callRecorded, "c-1"); !strings.Contains(p, "INDEX audit_call") || strings.Contains(p, "SCAN audit") {
		t.Errorf("the group's call id lookup: plan %q, want a search of the index audit_call", p)
	}
	// The audit filter by call id (the replay of a call decided before).
	q, args := auditQuery(warden.AuditFilter{CallID: "c-1", Limit: 1})
	if p := plan(q, args...); !strings.Contains(p, "INDEX audit_call") || strings.Contains(p, "SCAN audit") {
		t.Errorf("the audit filter by call id: plan %q, want a search of the index audit_call", p)
	}
	// The check that a decision's history is current (StaleHistory).
	if p := plan(newestRecord, "s-1"); !strings.Contains(p, "INDEX audit_session") || strings.Contains(p, "SCAN audit") {
		t.Errorf("a session's newest record: plan %q, want a search of the index audit_session", p)
	}
}

// TestSessionsIndexedByIDAlone: a decision updates its session's row; an
// index on a column it changes (last_seen, dropped by migration 0016) is
// written again with every decision, and one more page in each group's
// commit. The same holds on PostgreSQL (package postgres's test).
func TestSessionsIndexedByIDAlone(t *testing.T) {
	s := groupStore(t)
	names := queryStrings(t, s.DB(), `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sessions'`)
	if len(names) != 1 || !strings.HasPrefix(names[0], "sqlite_autoindex_sessions") {
		t.Errorf("indexes of sessions: %q, want its primary key's alone", names)
	}
}

// queryStrings is the one column of q's rows, as strings.
func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
