// Package postgres is warden's shared store for several warden servers: the
// same schema and contract as the SQLite store, on PostgreSQL through pgx.
// Select it with `--store postgres://user@host:5432/db`.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/sqlstore"
)

// Store is the SQL store on PostgreSQL.
type Store = sqlstore.Store

var dialect = sqlstore.Dialect{
	Name:           "postgres",
	ForUpdate:      " FOR UPDATE",
	Rebind:         rebind,
	LockMigrations: lockMigrations,
	ModifyingCTE:   true,
	// The server keeps the commit's order and writes it within a few
	// wal_writer_delay periods, or with the next synchronous commit.
	Unsynced: [2]string{"SET synchronous_commit TO off", "RESET synchronous_commit"},
}

// rebind turns the shared queries' ? placeholders into $1, $2, ...
// (the shared queries have no ? inside string literals).
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// migrationLock is the advisory lock key that serialises migrations of
// warden stores in one database.
const migrationLock = 0x77617264 // "ward"

func lockMigrations(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock)
	return err
}

// Open connects to PostgreSQL at url (postgres://user:pass@host:port/db,
// with any libpq parameters such as sslmode or search_path) and brings the
// schema up to date.
func Open(ctx context.Context, url string) (*Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", redactURL(err, url))
	}
	s, err := sqlstore.Open(ctx, db, dialect)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open postgres store: %w", redactURL(err, url))
	}
	return s, nil
}

// redactURL keeps a password in the URL out of error messages.
func redactURL(err error, url string) error {
	r := warden.RedactString(url)
	if r == url {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), url, r))
}
