package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/storetest"
)

// TestUpgradeFromSchema5 opens a store an older warden wrote at schema
// version 5 (testdata/schema5.sql, the .dump of that file): the new
// migrations apply, every record reads back, and the schema is the one a
// new store gets.
func TestUpgradeFromSchema5(t *testing.T) {
	ctx := context.Background()
	dump, err := os.ReadFile("testdata/schema5.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, string(dump)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.CheckUpgraded(t, st)

	fresh, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if got, want := sqliteSchema(t, st.DB()), sqliteSchema(t, fresh.DB()); got != want {
		t.Errorf("upgraded schema:\n%s\nwant (a new store's):\n%s", got, want)
	}
}

// sqliteSchema is the database's tables and indexes, white space folded.
func sqliteSchema(t *testing.T, db *sql.DB) string {
	rows, err := db.Query(`SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	space := regexp.MustCompile(`\s+`)
	var b strings.Builder
	for rows.Next() {
		var typ, name, q string
		if err := rows.Scan(&typ, &name, &q); err != nil {
			t.Fatal(err)
		}
		b.WriteString(typ + " " + name + ": " + space.ReplaceAllString(q, " ") + "\n")
	}
	return b.String()
}
