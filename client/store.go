package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/spoolfile"
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/sqlite"
)

// OpenStore opens the store that storeURL names: "" is the SQLite file
// .warden/warden.db next to the policy file policyPath (created on first
// use); postgres:// or postgresql:// selects PostgreSQL; sqlite:PATH,
// file:PATH or a plain path is a SQLite file there.
func OpenStore(ctx context.Context, policyPath, storeURL string) (warden.Store, error) {
	switch {
	case storeURL == "":
		if policyPath == "" {
			return nil, errors.New("open store: no policy file to put .warden/ next to; give --policy or --store")
		}
		path := DefaultStorePath(policyPath)
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		// Keep the store out of version control.
		ignore := filepath.Join(filepath.Dir(path), ".gitignore")
		if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
			os.WriteFile(ignore, []byte("# warden's store: sessions, approvals, grants, audit\n*\n"), 0o600)
		}
		return st, nil
	case strings.HasPrefix(storeURL, "postgres://"), strings.HasPrefix(storeURL, "postgresql://"):
		st, err := postgres.Open(ctx, storeURL)
		if err != nil {
			return nil, err
		}
		// Records of calls answered while the server was down join the
		// audit trail (see SpoolFile). A failure leaves them waiting.
		if sp := SpoolFile(policyPath, storeURL); sp != "" {
			st.SetSpool(sp)
			st.ImportSpool(ctx)
		}
		return st, nil
	}
	file := SQLiteFile(storeURL)
	if file == "" {
		return nil, fmt.Errorf("open store: --store %q: want a SQLite file path or a postgres:// URL", warden.RedactString(storeURL))
	}
	return sqlite.Open(ctx, file)
}

// SQLiteFile is the SQLite file a store URL names (sqlite:PATH, file:PATH
// or a plain path), or "" when it names none.
func SQLiteFile(storeURL string) string {
	for _, prefix := range []string{"sqlite:", "file:"} {
		if rest, ok := strings.CutPrefix(storeURL, prefix); ok {
			return strings.TrimPrefix(rest, "//")
		}
	}
	if strings.Contains(storeURL, "://") {
		return ""
	}
	return storeURL
}

// SpoolFile is where the audit records of calls answered while the store
// of policyPath and storeURL (as OpenStore takes them) could not take
// them wait: the SQLite file's .pending file next to it; for a
// PostgreSQL store, a file in the .warden folder next to the policy named
// for the store (a hash of its URL). "" when there is no such place (no
// policy for a PostgreSQL store, an unknown store URL).
func SpoolFile(policyPath, storeURL string) string { return spoolfile.For(policyPath, storeURL) }

// DefaultStorePath is the default store file for a policy: .warden/warden.db
// in the policy's folder, which the policy loader protects from tool calls.
func DefaultStorePath(policyPath string) string {
	abs, err := filepath.Abs(policyPath)
	if err != nil {
		abs = policyPath
	}
	return filepath.Join(filepath.Dir(abs), filepath.FromSlash(sqlite.DefaultFile))
}
