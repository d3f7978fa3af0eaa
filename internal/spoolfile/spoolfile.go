// Package spoolfile names the spool file of a project's store: where the
// audit records of calls answered while the store could not take them
// wait (see internal/sqlstore, "The spool"). It imports only the standard
// library, so that warden-hook, which links no store, can spool the
// record of a call it answered itself.
package spoolfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PolicyNames are the names a policy file has, in the order a folder is
// searched (policy.FileNames).
var PolicyNames = [...]string{"warden.yaml", "warden.yml", "warden.json"}

// storeFile is the default store's path relative to the policy's folder
// (sqlite.DefaultFile).
const storeFile = ".warden/warden.db"

// For is the spool file of the store that policyPath and storeURL name as
// warden's --policy and --store do: the .pending file next to a SQLite
// file (the default .warden/warden.db next to the policy included); for
// a PostgreSQL store, a file in the .warden folder next to the policy,
// named for the store (a hash of its URL). "" when there is no such place.
func For(policyPath, storeURL string) string {
	switch {
	case storeURL == "":
		if policyPath == "" {
			return ""
		}
		return DefaultStore(policyPath) + ".pending"
	case strings.HasPrefix(storeURL, "postgres://"), strings.HasPrefix(storeURL, "postgresql://"):
		if policyPath == "" {
			return ""
		}
		sum := sha256.Sum256([]byte(storeURL))
		return filepath.Join(filepath.Dir(DefaultStore(policyPath)), "postgres-"+hex.EncodeToString(sum[:8])+".pending")
	}
	file := SQLiteFile(storeURL)
	if file == "" {
		return ""
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return file + ".pending"
}

// DefaultStore is the default store file of a policy: .warden/warden.db
// in the policy's folder.
func DefaultStore(policyPath string) string {
	abs, err := filepath.Abs(policyPath)
	if err != nil {
		abs = policyPath
	}
	return filepath.Join(filepath.Dir(abs), filepath.FromSlash(storeFile))
}

// SQLiteFile returns the file path of a SQLite store URL (sqlite:PATH,
// file:PATH, or a plain path), or "" when storeURL names another kind of
// store.
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

// FindPolicy returns the policy file that governs dir: the first of
// PolicyNames in dir or a parent folder.
func FindPolicy(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; {
		for _, name := range PolicyNames {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no %s found in %s or any parent folder", PolicyNames[0], abs)
		}
		d = parent
	}
}

// Append appends v as one JSON line to the spool file at path, creating
// it and its folder, and syncs it: one write, so that appends from
// several processes do not interleave.
func Append(path string, v any) error {
	if path == "" {
		return errors.New("spool an audit record: the store has no spool file")
	}
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("spool an audit record: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spool an audit record: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("spool an audit record: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("spool an audit record: %w", err)
	}
	return f.Close()
}
