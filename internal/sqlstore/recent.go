package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/warden-run/warden"
)

// Recent: a session's latest records, for the sequence rules, which read
// them on every decision of a session. Decoding 500 records took 4 ms, most
// of a resident process's decision (hookd, serve, the MCP proxy), so the
// store keeps the records it decoded, per session, and on each call reads
// only the ids and outcomes of the session's latest records: a record is
// never changed after it is appended except for its outcome, so a record
// whose id is kept is the kept record with the outcome just read. What
// another process appended (and this one has not decoded yet) is read by
// id; what was purged is no longer among the ids, and leaves the cache.
// The cache is bounded by the bytes of the records' arguments.

const (
	// recentBudget bounds the bytes of arguments kept for all sessions;
	// past it the least recently read sessions are dropped.
	recentBudget = 64 << 20
	// recentSessions bounds the sessions kept.
	recentSessions = 256
)

type recentCache struct {
	mu       sync.Mutex
	sessions map[string]*recentEntry
	tick     uint64
	bytes    int
	gen      uint64 // counts resets
}

// recentEntry is one session's records, oldest first. A list once
// returned is never changed: a read that finds something new builds a new
// one.
type recentEntry struct {
	mu    sync.Mutex
	used  uint64
	gen   uint64 // the cache's gen when the entry was made
	list  []warden.AuditRecord
	sizes []int // recordSize of each
	bytes int
}

// entry returns the session's entry.
func (c *recentCache) entry(session string) *recentEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessions == nil {
		c.sessions = map[string]*recentEntry{}
	}
	c.tick++
	e := c.sessions[session]
	if e == nil {
		e = &recentEntry{gen: c.gen}
		c.sessions[session] = e
	}
	e.used = c.tick
	return e
}

// reset forgets every session's records: the store's database was
// replaced (another file restored in its place), and its ids name other
// records.
func (c *recentCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions = nil
	c.bytes = 0
	c.gen++
}

// resize accounts for an entry's new size and drops the least recently
// read sessions past the budget (never the one just read).
func (c *recentCache) resize(e *recentEntry, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.gen != c.gen {
		return // made before a reset: no longer in the cache
	}
	c.bytes += bytes - e.bytes
	e.bytes = bytes
	for c.bytes > recentBudget || len(c.sessions) > recentSessions {
		var oldest string
		var at uint64
		for k, x := range c.sessions {
			if x != e && (oldest == "" || x.used < at) {
				oldest, at = k, x.used
			}
		}
		if oldest == "" {
			return
		}
		c.bytes -= c.sessions[oldest].bytes
		delete(c.sessions, oldest)
	}
}

// Recent implements warden.AuditLog.
func (s *Store) Recent(ctx context.Context, session string, limit int) ([]warden.AuditRecord, error) {
	if session == "" || limit <= 0 {
		return s.Audit(ctx, warden.AuditFilter{Session: session, Limit: limit})
	}
	ids, outcomes, err := s.recentIDs(ctx, session, limit)
	if err != nil {
		return nil, err
	}
	e := s.recent.entry(session)
	e.mu.Lock()
	defer e.mu.Unlock()
	// Both lists are in id order: walk them together.
	old := e.list
	same := len(old) == len(ids)
	var missing []int64
	for i, j := 0, 0; i < len(ids); i++ {
		for j < len(old) && old[j].ID < ids[i] {
			j++
		}
		if j < len(old) && old[j].ID == ids[i] {
			same = same && old[j].Outcome == outcomes[i] && i == j
			continue
		}
		same = false
		missing = append(missing, ids[i])
	}
	if same {
		return old, nil
	}
	fresh := map[int64]*warden.AuditRecord{}
	for len(missing) > 0 {
		n := min(len(missing), 256)
		recs, err := s.auditByID(ctx, missing[:n])
		if err != nil {
			return nil, err
		}
		for i := range recs {
			fresh[recs[i].ID] = &recs[i]
		}
		missing = missing[n:]
	}
	list := make([]warden.AuditRecord, 0, len(ids))
	sizes := make([]int, 0, len(ids))
	bytes := 0
	for i, j := 0, 0; i < len(ids); i++ {
		for j < len(old) && old[j].ID < ids[i] {
			j++
		}
		var r warden.AuditRecord
		var n int
		switch {
		case j < len(old) && old[j].ID == ids[i]:
			r, n = old[j], e.sizes[j]
		case fresh[ids[i]] != nil:
			r = *fresh[ids[i]]
			n = recordSize(&r)
		default:
			continue // purged between the two reads
		}
		r.Outcome = outcomes[i]
		list, sizes = append(list, r), append(sizes, n)
		bytes += n
	}
	e.list, e.sizes = list, sizes
	s.recent.resize(e, bytes)
	return list, nil
}

// recentIDs returns the ids and outcomes of the session's newest limit
// records, in id order. They come as one row, an aggregate of the rows:
// scanning 500 rows one by one took more time than the rest of a
// decision.
func (s *Store) recentIDs(ctx context.Context, session string, limit int) ([]int64, []string, error) {
	agg := `group_concat(id || ' ' || outcome, ',')`
	if s.d.Name == "postgres" {
		agg = `string_agg(id::text || ' ' || outcome, ',')`
	}
	var text sql.NullString
	err := prepared{s: s}.QueryRowContext(ctx, s.d.Rebind(`SELECT `+agg+` FROM
		(SELECT id, outcome FROM audit WHERE session = ? ORDER BY id DESC LIMIT ?) AS latest`), session, limit).Scan(&text)
	if err != nil {
		return nil, nil, fmt.Errorf("audit: %w", err)
	}
	type idOutcome struct {
		id      int64
		outcome string
	}
	var xs []idOutcome
	for item := range strings.SplitSeq(text.String, ",") {
		if item == "" {
			continue
		}
		num, outcome, _ := strings.Cut(item, " ")
		id, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("audit: record id %q: %w", num, err)
		}
		xs = append(xs, idOutcome{id, outcome})
	}
	slices.SortFunc(xs, func(a, b idOutcome) int { return cmp.Compare(a.id, b.id) })
	ids, outcomes := make([]int64, len(xs)), make([]string, len(xs))
	for i, x := range xs {
		ids[i], outcomes[i] = x.id, x.outcome
	}
	return ids, outcomes, nil
}

// auditByID reads the records with the ids.
func (s *Store) auditByID(ctx context.Context, ids []int64) ([]warden.AuditRecord, error) {
	if len(ids) == 1 { // the common case, a prepared statement
		rows, err := prepared{s: s}.QueryContext(ctx, s.d.Rebind(`SELECT id, `+auditCols+` FROM audit WHERE id = ?`), ids[0])
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		return scanAudit(rows)
	}
	q := `SELECT id, ` + auditCols + ` FROM audit WHERE id IN (?` + strings.Repeat(`, ?`, len(ids)-1) + `)`
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.pool(ctx).QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return scanAudit(rows)
}

// recordSize estimates the bytes a kept record holds.
func recordSize(r *warden.AuditRecord) int {
	n := 256 + len(r.Reason)
	for k, v := range r.Args {
		n += len(k) + size(v)
	}
	return n
}

// size estimates the bytes of a decoded JSON value.
func size(v any) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case []any:
		n := 16
		for _, x := range v {
			n += size(x)
		}
		return n
	case map[string]any:
		n := 16
		for k, x := range v {
			n += len(k) + size(x)
		}
		return n
	}
	return 8
}
