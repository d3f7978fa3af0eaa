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

// Schema creates a schema for one test (dropped after it) and returns the
// store URL with it as the search path. No PostgreSQL skips the test, or
// fails it when CI is set.
func Schema(t testing.TB) string {
	t.Helper()
	base := URL()
	db, err := sql.Open("pgx", base)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable in CI: %v", err)
		}
		t.Skipf("PostgreSQL unreachable: %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "warden_t_" + hex.EncodeToString(b[:])
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}
