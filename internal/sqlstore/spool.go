package sqlstore

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/spoolfile"
)

// The spool: audit records of answered calls that the store could not
// take when they were decided (a SQLite file too busy in time, PostgreSQL
// down), one JSON object a line in a file next to the project's store,
// synced, until the store answers again. Records in it are redacted as
// every audit record is.

// SpoolRecord appends an audit record (secrets already redacted) to the
// spool file at path, creating it and its folder, and syncs it.
func SpoolRecord(path string, r warden.AuditRecord) error { return spoolfile.Append(path, r) }

// SetSpool gives the store its spool file: Spool writes to it, and every
// audit record the store takes afterwards is followed by the records
// waiting in it (see ImportSpool). Call it before the store is used.
func (s *Store) SetSpool(path string) { s.spool = path }

// SpoolFile is the store's spool file ("" for none).
func (s *Store) SpoolFile() string { return s.spool }

// Spool keeps an audit record the store could not take (it is down) in
// its spool file, synced: it joins the audit trail when the store answers
// again. A record whose CallID the store holds by then is dropped.
func (s *Store) Spool(r warden.AuditRecord) error { return SpoolRecord(s.spool, r) }

// spoolWaiting reports whether the spool file exists (records wait in
// it): one stat.
func (s *Store) spoolWaiting() bool {
	if s.spool == "" {
		return false
	}
	_, err := os.Stat(s.spool)
	return err == nil
}

// drainSpool moves the records waiting in the spool file into the store,
// when there is a file: after a write the store took, it answers again.
// One drain at a time runs in a process.
func (s *Store) drainSpool(ctx context.Context) {
	if s.spool == "" {
		return
	}
	if _, err := os.Stat(s.spool); err != nil {
		return
	}
	if !s.draining.CompareAndSwap(false, true) {
		return
	}
	defer s.draining.Store(false)
	s.importSpool(ctx, time.Now().Add(drainBudget))
}

// drainBudget bounds the time a write spends taking spooled records in
// after it: the call that made the write is waiting for its answer. What
// is left waits for the next write.
const drainBudget = 50 * time.Millisecond

// ImportSpool moves the spooled records into the store. One process takes
// the spool (by renaming it); records it could not store go back to the
// spool; a record whose CallID the store holds already is dropped.
func (s *Store) ImportSpool(ctx context.Context) error { return s.importSpool(ctx, time.Time{}) }

// importSpool is ImportSpool that stops taking records in at until (zero:
// no limit) and puts the rest back.
func (s *Store) importSpool(ctx context.Context, until time.Time) error {
	sp := s.spool
	if sp == "" {
		return nil
	}
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
	moved := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var r warden.AuditRecord
		if json.Unmarshal(line, &r) != nil {
			continue // a torn last line of a crashed writer
		}
		r.ID = 0
		// At least one record a drain, however slow the store.
		if firstErr != nil || moved > 0 && !until.IsZero() && time.Now().After(until) {
			back = append(back, line)
			continue
		}
		moved++
		if _, err := s.appendAudit(ctx, prepared{s: s}, r); err != nil && !errors.Is(err, warden.ErrConflict) {
			back = append(back, line)
			firstErr = err
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
