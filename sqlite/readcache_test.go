package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/storetest"
)

// TestCachedReads: two stores on one file, as two processes.
func TestCachedReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	a, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.CachedReads(t, a, b)
}
