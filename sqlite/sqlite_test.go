package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) warden.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), ".warden", "warden.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
