package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/postgres"
)

// TestSessionsIndexedByIDAlone: a decision updates its session's row
// (calls, last_seen, violations); an index on any column but the id makes
// each such update write new index entries and keeps PostgreSQL from a
// HOT update, and a busy session then leaves thousands of dead versions
// behind it (15,051 dead versions after 15,000 decisions of 16 sessions
// in the service benchmark; 31 with HOT updates). Migration 0016 dropped
// the one on last_seen.
func TestSessionsIndexedByIDAlone(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Admin(t)
	url := pgtest.SchemaOn(t, db)
	schema := url[strings.LastIndex(url, "=")+1:]
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := db.QueryContext(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'sessions'`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var defs []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || !strings.Contains(defs[0], "(id)") {
		t.Errorf("indexes of sessions: %q, want its primary key alone", defs)
	}
}
