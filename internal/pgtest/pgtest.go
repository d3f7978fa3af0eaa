// Package pgtest gives a test its own PostgreSQL schema. It is imported by
// tests only.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// URL is the test database: WARDEN_TEST_POSTGRES, or database test on
// 127.0.0.1:5432.
func URL() string {
	if u := os.Getenv("WARDEN_TEST_POSTGRES"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// Admin connects to the test database for the test (closed after it). No
// PostgreSQL skips the test, or fails it when CI is set.
func Admin(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", URL())
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable in CI: %v", err)
		}
		t.Skipf("PostgreSQL unreachable (set CI to make this a failure): %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Schema creates a schema for one test (dropped after it) and returns the
// store URL with it as the search path.
func Schema(t testing.TB) string {
	t.Helper()
	return SchemaOn(t, Admin(t))
}

// SchemaOn is Schema through a connection the test holds already.
func SchemaOn(t testing.TB, db *sql.DB) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := "warden_t_" + hex.EncodeToString(b[:])
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP SCHEMA " + schema + " CASCADE") })
	sep := "?"
	if strings.Contains(URL(), "?") {
		sep = "&"
	}
	return URL() + sep + "search_path=" + schema
}
