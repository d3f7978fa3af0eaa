package postgres_test

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/pgtest"

	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/storetest"
)

// TestUpgradeFromSchema5 opens a store an older warden wrote at schema
// version 5 (testdata/schema5.sql, pg_dump --inserts of that schema): the
// new migrations apply, every record reads back, and the schema is the
// one a new store gets.
func TestUpgradeFromSchema5(t *testing.T) {
	ctx := context.Background()
	dump, err := os.ReadFile("testdata/schema5.sql")
	if err != nil {
		t.Fatal(err)
	}
	db := pgtest.Admin(t)
	url := pgtest.SchemaOn(t, db)
	schema := url[strings.LastIndex(url, "=")+1:]
	if _, err := db.ExecContext(ctx, strings.ReplaceAll(string(dump), "fixture_v5.", schema+".")); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.CheckUpgraded(t, st)

	freshURL := pgtest.SchemaOn(t, db)
	fresh, err := postgres.Open(ctx, freshURL)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	got, want := pgSchema(t, db, schema), pgSchema(t, db, freshURL[strings.LastIndex(freshURL, "=")+1:])
	if got != want {
		t.Errorf("upgraded schema:\n%s\nwant (a new store's):\n%s", got, want)
	}
}

// pgSchema is the columns and indexes of a schema, its name left out.
func pgSchema(t *testing.T, db *sql.DB, schema string) string {
	rows, err := db.Query(`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
		COALESCE(column_default, '') FROM information_schema.columns WHERE table_schema = $1
		UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.ReplaceAll(s, schema+".", "") + "\n")
	}
	return b.String()
}
