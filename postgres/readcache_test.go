package postgres_test

import (
	"context"
	"testing"

	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/storetest"
)

// TestCachedReads: two stores on one schema, as two replicas.
func TestCachedReads(t *testing.T) {
	url := pgtest.Schema(t)
	a, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.CachedReads(t, a, b)
}
