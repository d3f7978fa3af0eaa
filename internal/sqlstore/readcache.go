package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/warden-run/warden"
)

// The halts and grants a decision reads, kept between decisions.
//
// A decision reads the halts in force and the session's grants
// (HaltAndGrants), then records itself (WriteDecision). A process that
// decides many calls (warden serve) may keep what it read: under a
// context made by CachedReads, HaltAndGrants answers from what it read
// before, tagged with the count of changes to the halts and the grants
// (the table changes, counted by triggers, so every writer of any
// version and process counts). The transaction that records the
// decision reads the count, one row, and a decision made on a count that
// moved is not recorded: it fails with a StaleRead error, nothing of it
// kept, and the session layer decides the call again on a fresh read. So
// a decision is recorded only where what it read was still so inside the
// transaction that records it: a halt or a revoked grant counts for
// every call recorded after its own commit, as when each call read them
// itself (more exactly: a call read them before, and another
// transaction could commit between the read and the record).
//
// What is kept is never a reason to deny: an answer kept that says a
// halt is in force is read again before it is given. A call without a
// session (which writes no session) reads fresh. A grant kept is given
// only while it has not expired, at the time of the decision.

// CachedReads returns a context under which the store's HaltAndGrants
// may answer from what it read before, and its WriteDecision checks that
// it still holds (see above). A context is for one call: it carries what
// the call read.
func CachedReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, readKey{}, &readStamp{})
}

type readKey struct{}

// readStamp is what one call read with: the count of changes and the
// store's generation (reopen) of the answer it was given from the cache.
// HaltAndGrants sets it in the call's goroutine before WriteDecision
// hands the write to the group's, which reads it; the group sets stale
// before it answers.
type readStamp struct {
	cached bool // the answer came from the cache: the write checks it
	n      int64
	gen    uint64
	fresh  bool // a write found the count moved: read fresh from now on
}

func stampOf(ctx context.Context) *readStamp {
	st, _ := ctx.Value(readKey{}).(*readStamp)
	return st
}

// StaleRead is WriteDecision's error for a decision made on halts and
// grants that changed before it could be recorded (see CachedReads):
// nothing of it was written; decide the call again.
type StaleRead struct{}

func (StaleRead) Error() string {
	return "the halts or grants changed while the call was decided: decide it again"
}

// StaleRead marks the error for the session layer.
func (StaleRead) StaleRead() bool { return true }

// maxCached bounds the answers kept (one a session and agent): past it
// they are all let go.
const maxCached = 4096

type cacheKey struct{ session, agent string }

type cacheEntry struct {
	halt   warden.Halt
	grants []warden.Grant // never changed once kept
}

// readCache is the answers kept, all read at one count of changes.
type readCache struct {
	mu      sync.Mutex
	n       int64
	gen     uint64 // counts reopens: another database's counts are not this one's
	entries map[cacheKey]cacheEntry
}

// get returns the answer kept for the key.
func (c *readCache) get(k cacheKey) (cacheEntry, int64, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e, c.n, c.gen, ok
}

// put keeps an answer read at the count n, in generation gen; answers of
// another count are let go.
func (c *readCache) put(k cacheKey, e cacheEntry, n int64, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if n != c.n || len(c.entries) >= maxCached {
		c.entries, c.n = nil, n
	}
	if c.entries == nil {
		c.entries = map[cacheKey]cacheEntry{}
	}
	c.entries[k] = e
}

// saw lets go of every answer of another count than n, which a
// transaction read.
func (c *readCache) saw(n int64, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen && n != c.n {
		c.entries, c.n = nil, n
	}
}

// reset forgets everything: the database was replaced.
func (c *readCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
	c.gen++
}

func (c *readCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// changesQuery reads the count of changes.
const changesQuery = `SELECT n FROM changes WHERE id = 1`

// changesCol is the count of changes as a column of another query: the
// sessions a write reads (and locks) bring it along, one round trip less.
const changesCol = `, (` + changesQuery + `)`

// withChanges scans a row of a query with changesCol last: r's columns,
// then the count into n.
type withChanges struct {
	r scanner
	n *int64
}

func (w withChanges) Scan(dest ...any) error { return w.r.Scan(append(dest, w.n)...) }

// cachedIn reports whether a write of the batch decided on a kept answer
// (its write reads the count of changes).
func cachedIn(batch []*writeReq) bool {
	for _, r := range batch {
		if r.st != nil && r.st.cached {
			return true
		}
	}
	return false
}

// changes reads the count of changes, in q's transaction when it has one.
func (s *Store) changes(ctx context.Context, q prepared) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, changesQuery).Scan(&n); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, errors.New("read the count of changes: the changes table has no row")
		}
		return 0, fmt.Errorf("read the count of changes: %w", err)
	}
	return n, nil
}

// cachedHaltAndGrants is HaltAndGrants for a call under CachedReads.
func (s *Store) cachedHaltAndGrants(ctx context.Context, st *readStamp, session, agent string) (warden.Halt, bool, []warden.Grant, error) {
	k := cacheKey{session, agent}
	if st.fresh {
		st.cached = false
		return s.haltAndGrants(ctx, session, agent)
	}
	if e, n, gen, ok := s.rcache.get(k); ok {
		st.cached, st.n, st.gen = true, n, gen
		return e.halt, false, live(e.grants, s.Now()), nil
	}
	// The count first, then the rows: what is kept is at least as new as
	// its count says (a change between the two reads makes the count
	// look older, and the write then asks for a fresh read).
	gen := s.rcache.generation()
	n, err := s.changes(ctx, prepared{s: s})
	if err != nil {
		return warden.Halt{}, false, nil, fmt.Errorf("halted and grants: %w", err)
	}
	h, halted, grants, err := s.haltAndGrants(ctx, session, agent)
	if err == nil && !halted {
		s.rcache.put(k, cacheEntry{halt: h, grants: grants}, n, gen)
	}
	// A fresh read: the write needs no check, as without the cache.
	st.cached = false
	return h, halted, grants, err
}

// live are the grants that have not expired at now (the rest of
// liveGrant, revoked and used up, changes the count), in a list of their
// own: the caller may change it.
func live(grants []warden.Grant, now time.Time) []warden.Grant {
	var out []warden.Grant
	for _, g := range grants {
		if g.Expires.IsZero() || g.Expires.After(now) {
			out = append(out, g)
		}
	}
	return out
}

// stale reports whether a write's call decided on an answer from the
// cache whose count moved (n read in the write's transaction); it marks
// the call to read fresh from then on.
func (s *Store) stale(st *readStamp, n int64) bool {
	if st == nil || !st.cached {
		return false
	}
	if st.n == n && st.gen == s.rcache.generation() {
		return false
	}
	// cached stays: the same write tried again (alone, after its group
	// failed) is refused again; the call's next read is fresh.
	st.fresh = true
	return true
}

// checkStale fails a write whose call decided on an answer from the
// cache whose count moved; n is read once a transaction (*n < 0: not
// yet), inside it.
func (s *Store) checkStale(ctx context.Context, q prepared, st *readStamp, n *int64) error {
	if st == nil || !st.cached {
		return nil
	}
	if *n < 0 {
		gen := s.rcache.generation()
		v, err := s.changes(ctx, q)
		if err != nil {
			return err
		}
		*n = v
		s.rcache.saw(v, gen)
	}
	if s.stale(st, *n) {
		return StaleRead{}
	}
	return nil
}
