package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/warden-run/warden/internal/pgtest"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// The shipped migrations load, and every version has SQL for both stores.
func TestShippedMigrations(t *testing.T) {
	if len(migrations) == 0 || SchemaVersion != len(migrations) {
		t.Fatalf("%d migrations, SchemaVersion %d", len(migrations), SchemaVersion)
	}
	for _, m := range migrations {
		for _, d := range []string{"sqlite", "postgres"} {
			steps, err := m.steps(d)
			if err != nil || len(steps) == 0 {
				t.Errorf("migration %d for %s: %v", m.version, d, err)
			}
			for _, st := range steps {
				if strings.TrimSpace(st.sql) == "" {
					t.Errorf("%s is empty", st.file)
				}
			}
		}
	}
}

func TestLoadMigrationsErrors(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, c := range []struct {
		fs   fstest.MapFS
		want string
	}{
		{fstest.MapFS{"0001_a.sql": file("x"), "0003_c.sql": file("x")}, "version 0002 is missing"},
		{fstest.MapFS{"0001_a.sql": file("x"), "0001_b.sql": file("x")}, "is in 0001_a.sql already"},
		{fstest.MapFS{"1_a.sql": file("x")}, "want a name like"},
		{fstest.MapFS{"0000_a.sql": file("x")}, "versions start at 0001"},
	} {
		_, err := loadMigrations(c.fs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error with %q", c.fs, err, c.want)
		}
	}
	ms, err := loadMigrations(fstest.MapFS{"0001_a.postgres.sql": file("x")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms[0].steps("sqlite"); err == nil || !strings.Contains(err.Error(), "no file for sqlite") {
		t.Errorf("a version without SQL for sqlite: %v", err)
	}
}

// hardSQL is SQL the old runner (which split each migration on ';') broke:
// a ';' in a string literal, in a comment, and in a trigger or function
// body; migration 2 has a shared file and one per dialect.
var hardSQL = fstest.MapFS{
	"0001_notes.sql": {Data: []byte(`-- a comment; with a semicolon
CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
INSERT INTO notes (id, body) VALUES (1, 'first; second');
INSERT INTO notes (id, body) VALUES (2, 'it''s; quoted');
`)},
	"0002_body.sql": {Data: []byte(`CREATE TABLE log (body TEXT NOT NULL);
`)},
	"0002_body.sqlite.sql": {Data: []byte(`CREATE TRIGGER notes_log AFTER INSERT ON notes BEGIN
	INSERT INTO log (body) VALUES ('added; ' || NEW.body);
END;
`)},
	"0002_body.postgres.sql": {Data: []byte(`CREATE FUNCTION notes_log() RETURNS trigger AS $$
BEGIN
	INSERT INTO log (body) VALUES ('added; ' || NEW.body);
	RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER notes_log AFTER INSERT ON notes FOR EACH ROW EXECUTE FUNCTION notes_log();
`)},
}

// checkHardSQL applies hardSQL in two steps, as two releases would, and
// checks what each statement did.
func checkHardSQL(t *testing.T, db *sql.DB, d Dialect) {
	ctx := context.Background()
	all, err := loadMigrations(hardSQL)
	if err != nil {
		t.Fatal(err)
	}
	if err := runMigrations(ctx, db, d, all[:1]); err != nil {
		t.Fatal(err)
	}
	if err := runMigrations(ctx, db, d, all); err != nil {
		t.Fatal(err)
	}
	if err := runMigrations(ctx, db, d, all); err != nil { // current: nothing to do
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, d.Rebind(`INSERT INTO notes (id, body) VALUES (3, ?)`), "third"); err != nil {
		t.Fatal(err)
	}
	got := func(q string) string { return strings.Join(queryStrings(t, db, q), "|") }
	if g, w := got(`SELECT body FROM notes ORDER BY id`), "first; second|it's; quoted|third"; g != w {
		t.Errorf("notes %q, want %q", g, w)
	}
	if g, w := got(`SELECT body FROM log`), "added; third"; g != w {
		t.Errorf("log %q, want %q (the trigger of migration 2)", g, w)
	}
	if g, w := got(`SELECT CAST(version AS TEXT) FROM warden_schema ORDER BY version`), "1|2"; g != w {
		t.Errorf("versions %q, want %q", g, w)
	}
	if err := runMigrations(ctx, db, d, all[:1]); err == nil || !strings.Contains(err.Error(), "newer than this warden") {
		t.Errorf("an older build on a newer schema: %v", err)
	}
}

func TestMigrationsSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkHardSQL(t, db, Dialect{Name: "sqlite", Rebind: func(q string) string { return q },
		LockMigrations: func(context.Context, *sql.Tx) error { return nil }})
}

func TestMigrationsPostgres(t *testing.T) {
	db, err := sql.Open("pgx", pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkHardSQL(t, db, Dialect{Name: "postgres", Rebind: func(q string) string { return strings.ReplaceAll(q, "?", "$1") },
		LockMigrations: func(context.Context, *sql.Tx) error { return nil }})
}
