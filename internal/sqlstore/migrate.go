package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
)

// The schema is built by the migrations in migrations/, applied in order,
// each once, and recorded in the table warden_schema (one row per applied
// version). A file is named NNNN_what.sql when it holds for every
// database, NNNN_what.DIALECT.sql (DIALECT is Dialect.Name: sqlite,
// postgres) when the databases need different SQL; a version has either
// files: a shared one, one per dialect, or both (the shared one runs
// first). Never edit a migration that shipped: add the next version.
//
// Each file runs as one Exec with no arguments, so the database parses the
// whole file (a ';' inside a string literal, a trigger body or a $$ body is
// the database's to read, not warden's): modernc.org/sqlite runs every
// statement of a multi-statement Exec, and pgx sends an Exec without
// arguments through the simple query protocol, which allows several
// statements.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema version: its SQL by dialect name, "" for a file
// shared by all.
type migration struct {
	version int
	sql     map[string]string
	files   map[string]string // file names, by the same keys, for errors
}

// step is one file of a migration.
type step struct{ file, sql string }

// steps are the migration's files for the dialect named d, in the order
// they run: the shared one, then the dialect's.
func (m migration) steps(d string) ([]step, error) {
	var out []step
	for _, k := range []string{"", d} {
		if q, ok := m.sql[k]; ok {
			out = append(out, step{m.files[k], q})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("migration %04d has no file for %s (want %04d_NAME.sql or %04d_NAME.%s.sql)", m.version, d, m.version, m.version, d)
	}
	return out, nil
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+(?:\.([a-z0-9]+))?\.sql$`)

// loadMigrations reads the migrations of fsys (its .sql files at the top
// level): versions from 1 without gaps.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	byVersion := map[int]*migration{}
	for _, name := range names {
		m := migrationName.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("migration %s: want a name like 0001_what.sql or 0001_what.sqlite.sql", name)
		}
		v, _ := strconv.Atoi(m[1])
		if v == 0 {
			return nil, fmt.Errorf("migration %s: versions start at 0001", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		mg := byVersion[v]
		if mg == nil {
			mg = &migration{version: v, sql: map[string]string{}, files: map[string]string{}}
			byVersion[v] = mg
		}
		if prev, ok := mg.files[m[2]]; ok {
			return nil, fmt.Errorf("migration %s: version %04d is in %s already", name, v, prev)
		}
		mg.sql[m[2]], mg.files[m[2]] = string(b), name
	}
	out := make([]migration, len(byVersion))
	for v := 1; v <= len(out); v++ {
		if byVersion[v] == nil {
			return nil, fmt.Errorf("migrations: version %04d is missing (the last is %04d)", v, maxKey(byVersion))
		}
	}
	for v, mg := range byVersion {
		out[v-1] = *mg
	}
	return out, nil
}

func maxKey(m map[int]*migration) int {
	n := 0
	for k := range m {
		n = max(n, k)
	}
	return n
}

// migrations are this build's schema versions.
var migrations = func() []migration {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err)
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		panic(err) // a build with broken migrations fails every test
	}
	return ms
}()

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// migrate brings the schema up to date.
func (s *Store) migrate(ctx context.Context) error {
	return runMigrations(ctx, s.pool(ctx), s.d, migrations)
}

// runMigrations applies the migrations of ms that db has not had yet.
// Concurrent migrations (several processes opening a new database at
// once) are serialised by the database; each migration is applied exactly
// once, all in one transaction.
func runMigrations(ctx context.Context, db *sql.DB, d Dialect, ms []migration) error {
	// Fast path without a write lock: the schema is current.
	var v int
	err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM warden_schema`).Scan(&v)
	if err == nil && v == len(ms) {
		return nil
	}
	if err == nil && v > len(ms) {
		return fmt.Errorf("store schema version %d is newer than this warden (%d): upgrade warden", v, len(ms))
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if err := d.LockMigrations(ctx, tx); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM warden_schema`).Scan(&v); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if v > len(ms) {
		return fmt.Errorf("store schema version %d is newer than this warden (%d): upgrade warden", v, len(ms))
	}
	for _, m := range ms[v:] {
		steps, err := m.steps(d.Name)
		if err != nil {
			return fmt.Errorf("migrate to version %d: %w", m.version, err)
		}
		for _, st := range steps {
			if _, err := tx.ExecContext(ctx, st.sql); err != nil {
				return fmt.Errorf("migrate to version %d (%s): %w", m.version, st.file, err)
			}
		}
		// The Go steps belong to this build's migrations (not to a test's).
		if step := goSteps[m.version]; step != nil && len(ms) == len(migrations) {
			if err := step(ctx, tx, d); err != nil {
				return fmt.Errorf("migrate to version %d: %w", m.version, err)
			}
		}
		if _, err := tx.ExecContext(ctx, d.Rebind(`INSERT INTO warden_schema (version) VALUES (?)`), m.version); err != nil {
			return fmt.Errorf("migrate to version %d: %w", m.version, err)
		}
	}
	return tx.Commit()
}
