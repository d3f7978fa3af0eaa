package sqlite

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/warden-run/warden"
)

// spoolFile holds the audit records of a store that could not be written
// to it in time, one JSON object a line, until the store is next opened.
func spoolFile(db string) string { return db + ".pending" }

// Spool appends an audit record (secrets already redacted) to the spool
// file of the store at path and syncs it: a record that a store too busy
// to take it in time must still not lose. Open moves spooled records into
// the store; a record whose CallID the store holds already is dropped.
func Spool(path string, r warden.AuditRecord) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(spoolFile(path), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spool an audit record: %w", err)
	}
	// One write: appends from several processes do not interleave.
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

// importSpool moves the spooled records of the store at path into s. One
// process takes the spool (by renaming it); records it could not store go
// back to the spool.
func importSpool(ctx context.Context, s *Store, path string) error {
	sp := spoolFile(path)
	if _, err := os.Stat(sp); err != nil {
		return nil
	}
	var b [6]byte
	rand.Read(b[:])
	taken := sp + "." + hex.EncodeToString(b[:])
	if err := os.Rename(sp, taken); err != nil {
		return nil // another process took it
	}
	f, err := os.Open(taken)
	if err != nil {
		return err
	}
	defer f.Close()
	var back [][]byte
	var firstErr error
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var r warden.AuditRecord
		if json.Unmarshal(line, &r) != nil {
			continue // a torn last line of a crashed writer
		}
		r.ID = 0
		if _, err := s.AppendAudit(ctx, r); err != nil && !errors.Is(err, warden.ErrConflict) {
			back = append(back, line)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if len(back) > 0 {
		out, err := os.OpenFile(sp, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("audit spool %s: %w (its records stay in %s)", sp, err, taken)
		}
		for _, l := range back {
			out.Write(append(l, '\n'))
		}
		out.Sync()
		out.Close()
	}
	os.Remove(taken)
	return firstErr
}
