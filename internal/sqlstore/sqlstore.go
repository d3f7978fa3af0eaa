// Package sqlstore is the warden.Store both SQL stores share: the schema,
// the migrations and every query. The sqlite and postgres packages open a
// database and give its Dialect; nothing else differs between them.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
)

// Store is a warden.Store on a SQL database. It is safe for concurrent use
// by goroutines and by processes sharing the database.
type Store struct {
	db *sql.DB
	d  Dialect
	// stmts caches the prepared statements of the queries a decision runs,
	// by query text: SQLite parses a query each time it is prepared, which
	// was a quarter of a decision's CPU time.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// Now is the store's clock; it stamps records and decides whether a
	// grant has expired. Tests replace it.
	Now func() time.Time
	// group is the group commit of WriteDecision (see groupWriter).
	group groupWriter
}

// DB returns the underlying database handle (for tests and tools).
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error {
	s.group.stop()
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	return s.db.Close()
}

// prepare returns the prepared statement for a (rebound) query.
func (s *Store) prepare(ctx context.Context, q string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st := s.stmts[q]; st != nil {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[q] = st
	return st, nil
}

// prepared runs queries through cached prepared statements, inside tx
// when it is set.
type prepared struct {
	s  *Store
	tx *sql.Tx
}

func (p prepared) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	st, err := p.s.prepare(ctx, q)
	if err != nil || p.tx == nil {
		return st, err
	}
	return p.tx.StmtContext(ctx, st), nil
}

func (p prepared) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p prepared) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (p prepared) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, q)
	if err != nil {
		// Run it unprepared: the Row carries the error.
		if p.tx != nil {
			return p.tx.QueryRowContext(ctx, q, args...)
		}
		return p.s.db.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

// migrations are applied in order, each once. Never edit one that shipped:
// append a new one.
var migrations = []string{
	`CREATE TABLE sessions (
		id TEXT PRIMARY KEY,
		role TEXT NOT NULL DEFAULT '',
		host TEXT NOT NULL DEFAULT '',
		parent TEXT NOT NULL DEFAULT '',
		depth INTEGER NOT NULL DEFAULT 0,
		first_tool TEXT NOT NULL DEFAULT '',
		calls INTEGER NOT NULL DEFAULT 0,
		violations INTEGER NOT NULL DEFAULT 0,
		governance INTEGER NOT NULL DEFAULT 0,
		compactions INTEGER NOT NULL DEFAULT 0,
		resumes INTEGER NOT NULL DEFAULT 0,
		intent_id TEXT NOT NULL DEFAULT '',
		intent TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL DEFAULT '',
		started_at BIGINT NOT NULL DEFAULT 0,
		last_seen BIGINT NOT NULL DEFAULT 0,
		ended_at BIGINT NOT NULL DEFAULT 0,
		archived INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sessions_last_seen ON sessions (last_seen);
	CREATE TABLE grants (
		id TEXT PRIMARY KEY,
		tool TEXT NOT NULL,
		role TEXT NOT NULL DEFAULT '',
		session TEXT NOT NULL DEFAULT '',
		subject TEXT NOT NULL,
		value TEXT NOT NULL DEFAULT '',
		pattern TEXT NOT NULL DEFAULT '',
		expires BIGINT NOT NULL DEFAULT 0,
		uses_left INTEGER NOT NULL DEFAULT -1,
		created_at BIGINT NOT NULL,
		created_by TEXT NOT NULL DEFAULT '',
		approval TEXT NOT NULL DEFAULT '',
		revoked_at BIGINT NOT NULL DEFAULT 0
	);
	CREATE TABLE approvals (
		id TEXT PRIMARY KEY,
		session TEXT NOT NULL DEFAULT '',
		role TEXT NOT NULL DEFAULT '',
		host TEXT NOT NULL DEFAULT '',
		tool TEXT NOT NULL,
		args TEXT NOT NULL DEFAULT '{}',
		summary TEXT NOT NULL DEFAULT '',
		code TEXT NOT NULL DEFAULT '',
		rule TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		parts TEXT NOT NULL DEFAULT '[]',
		fingerprint TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL,
		scope TEXT NOT NULL DEFAULT '',
		message TEXT NOT NULL DEFAULT '',
		decided_by TEXT NOT NULL DEFAULT '',
		created_at BIGINT NOT NULL,
		decided_at BIGINT NOT NULL DEFAULT 0,
		grants TEXT NOT NULL DEFAULT '[]',
		consumed INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX approvals_status ON approvals (status);
	CREATE INDEX approvals_fingerprint ON approvals (fingerprint);
	CREATE TABLE audit (
		id {{autoid}},
		time BIGINT NOT NULL,
		session TEXT NOT NULL DEFAULT '',
		role TEXT NOT NULL DEFAULT '',
		host TEXT NOT NULL DEFAULT '',
		tool TEXT NOT NULL,
		depth INTEGER NOT NULL DEFAULT 0,
		args TEXT NOT NULL DEFAULT '{}',
		decision TEXT NOT NULL,
		code TEXT NOT NULL DEFAULT '',
		rule TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		matched TEXT NOT NULL DEFAULT '[]',
		warnings TEXT NOT NULL DEFAULT '[]',
		grants TEXT NOT NULL DEFAULT '[]',
		approval TEXT NOT NULL DEFAULT '',
		mode TEXT NOT NULL DEFAULT '',
		enforced TEXT NOT NULL DEFAULT '',
		latency BIGINT NOT NULL DEFAULT 0
	);
	CREATE INDEX audit_time ON audit (time);
	CREATE INDEX audit_session ON audit (session);
	CREATE TABLE state (
		id INTEGER PRIMARY KEY,
		phase TEXT NOT NULL DEFAULT '',
		updated_at BIGINT NOT NULL DEFAULT 0
	);
	CREATE TABLE anchors (
		id TEXT PRIMARY KEY,
		priority TEXT NOT NULL,
		content TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		demoted_at BIGINT NOT NULL DEFAULT 0
	);
	CREATE TABLE history (
		id {{autoid}},
		time BIGINT NOT NULL,
		session TEXT NOT NULL DEFAULT '',
		agent TEXT NOT NULL DEFAULT '',
		action TEXT NOT NULL,
		result TEXT NOT NULL DEFAULT '',
		archived INTEGER NOT NULL DEFAULT 0
	);`,
	// At most one pending approval per call: concurrent hook processes
	// asking for the same call share one approval.
	`UPDATE approvals SET fingerprint = fingerprint || ':' || id WHERE status = 'pending' AND fingerprint <> ''
		AND id NOT IN (SELECT MIN(id) FROM approvals WHERE status = 'pending' AND fingerprint <> '' GROUP BY fingerprint);
	CREATE UNIQUE INDEX approvals_pending_fingerprint ON approvals (fingerprint) WHERE status = 'pending' AND fingerprint <> ''`,
	// Trimming the live history after each violation reads this index
	// instead of the whole table.
	`CREATE INDEX history_live ON history (archived, id)`,
	// Emergency halts: a session's, or the project's (session '').
	`CREATE TABLE halts (
		session TEXT PRIMARY KEY,
		message TEXT NOT NULL DEFAULT '',
		by_whom TEXT NOT NULL DEFAULT '',
		at BIGINT NOT NULL DEFAULT 0
	)`,
	// One record per host call: a call retried after a crash (hookd
	// killed mid-call) is decided once.
	`ALTER TABLE audit ADD COLUMN call_id TEXT NOT NULL DEFAULT '';
	CREATE UNIQUE INDEX audit_call ON audit (call_id) WHERE call_id <> ''`,
	// The plain-language sentence a compiled rule came from (warden compile).
	`ALTER TABLE audit ADD COLUMN source TEXT NOT NULL DEFAULT ''`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// migrate brings the schema up to date. Concurrent migrations (several
// processes opening a new database at once) are serialised by the
// database; each migration is applied exactly once.
func (s *Store) migrate(ctx context.Context) error {
	// Fast path without a write lock: the schema is current.
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM warden_schema`).Scan(&v)
	if err == nil && v == len(migrations) {
		return nil
	}
	if err == nil && v > len(migrations) {
		return fmt.Errorf("store schema version %d is newer than this warden (%d): upgrade warden", v, len(migrations))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if err := s.d.LockMigrations(ctx, tx); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM warden_schema`).Scan(&v); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("store schema version %d is newer than this warden (%d): upgrade warden", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		for _, stmt := range strings.Split(strings.ReplaceAll(migrations[i], "{{autoid}}", s.d.AutoID), ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate to version %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.d.Rebind(`INSERT INTO warden_schema (version) VALUES (?)`), i+1); err != nil {
			return fmt.Errorf("migrate to version %d: %w", i+1, err)
		}
	}
	return tx.Commit()
}

// Time is stored as microseconds since the Unix epoch; 0 is the zero time.
func ts(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func tm(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newID(prefix string) string {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + hex.EncodeToString(b[:])
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func fromJSON(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.db.ExecContext(ctx, s.d.Rebind(q), args...)
}

// notFound turns "no row changed" into ErrNotFound.
func notFound(res sql.Result, what, id string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", what, id, warden.ErrNotFound)
	}
	return nil
}

// ---- sessions

const sessionCols = `id, role, host, parent, depth, first_tool, calls, violations, governance,
	compactions, resumes, intent_id, intent, status, started_at, last_seen, ended_at, archived`

type scanner interface{ Scan(dest ...any) error }

func scanSession(r scanner) (warden.Session, error) {
	var x warden.Session
	var gov, arch int
	var started, seen, ended int64
	err := r.Scan(&x.ID, &x.Role, &x.Host, &x.Parent, &x.Depth, &x.FirstTool, &x.Calls, &x.Violations,
		&gov, &x.Compactions, &x.Resumes, &x.IntentID, &x.Intent, &x.Status, &started, &seen, &ended, &arch)
	x.GovernanceInjected, x.Archived = gov != 0, arch != 0
	x.StartedAt, x.LastSeen, x.EndedAt = tm(started), tm(seen), tm(ended)
	return x, err
}

// Session implements warden.SessionStore.
func (s *Store) Session(ctx context.Context, id string) (warden.Session, error) {
	x, err := scanSession(prepared{s: s}.QueryRowContext(ctx, s.d.Rebind(`SELECT `+sessionCols+` FROM sessions WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return x, fmt.Errorf("session %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return x, fmt.Errorf("session %q: %w", id, err)
	}
	return x, nil
}

// UpdateSession implements warden.SessionStore.
func (s *Store) UpdateSession(ctx context.Context, id string, fn func(*warden.Session, bool) error) (warden.Session, error) {
	x, _, err := s.WriteDecision(ctx, id, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
		return nil, fn(x, created)
	})
	return x, err
}

// WriteDecision implements warden.DecisionWriter.
//
// With Dialect.GroupCommit, concurrent calls share one transaction and
// one disk sync (group commit): a call returns once the transaction that
// holds its write has committed. A call whose ctx is done before its turn
// stores nothing.
func (s *Store) WriteDecision(ctx context.Context, id string, fn func(*warden.Session, bool) (*warden.DecisionRecord, error)) (warden.Session, warden.AuditRecord, error) {
	if id == "" {
		return warden.Session{}, warden.AuditRecord{}, errors.New("update session: empty session id")
	}
	if s.d.GroupCommit {
		// fn runs in the group's goroutine: a panic there must be this
		// call's error, not the end of the process.
		safe := func(x *warden.Session, created bool) (dr *warden.DecisionRecord, err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("internal error (panic: %v)", p)
				}
			}()
			return fn(x, created)
		}
		r := s.group.write(s, &writeReq{ctx: ctx, id: id, fn: safe})
		return r.sess, r.rec, s.explain(r.err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return warden.Session{}, warden.AuditRecord{}, s.explain(fmt.Errorf("update session %q: %w", id, err))
	}
	defer tx.Rollback()
	x, rec, err := s.writeDecision(ctx, prepared{s, tx}, id, fn)
	if err != nil {
		return x, rec, s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		return warden.Session{}, rec, s.explain(fmt.Errorf("update session %q: commit: %w", id, err))
	}
	return x, rec, nil
}

// explain passes an error through the dialect's Explain.
func (s *Store) explain(err error) error {
	if err == nil || s.d.Explain == nil {
		return err
	}
	return s.d.Explain(err)
}

// writeDecision is one WriteDecision inside the transaction of q.
func (s *Store) writeDecision(ctx context.Context, q prepared, id string, fn func(*warden.Session, bool) (*warden.DecisionRecord, error)) (warden.Session, warden.AuditRecord, error) {
	var rec warden.AuditRecord
	res, err := q.ExecContext(ctx, s.d.Rebind(`INSERT INTO sessions (id) VALUES (?) ON CONFLICT (id) DO NOTHING`), id)
	if err != nil {
		return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
	}
	x, err := scanSession(q.QueryRowContext(ctx, s.d.Rebind(`SELECT `+sessionCols+` FROM sessions WHERE id = ?`+s.d.ForUpdate), id))
	if err != nil {
		return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
	}
	dr, err := fn(&x, n == 1)
	if err != nil {
		return warden.Session{}, rec, err
	}
	x.ID = id
	_, err = q.ExecContext(ctx, s.d.Rebind(`UPDATE sessions SET role = ?, host = ?, parent = ?, depth = ?, first_tool = ?,
		calls = ?, violations = ?, governance = ?, compactions = ?, resumes = ?, intent_id = ?, intent = ?,
		status = ?, started_at = ?, last_seen = ?, ended_at = ?, archived = ? WHERE id = ?`),
		x.Role, x.Host, x.Parent, x.Depth, x.FirstTool, x.Calls, x.Violations, b2i(x.GovernanceInjected),
		x.Compactions, x.Resumes, x.IntentID, x.Intent, x.Status, ts(x.StartedAt), ts(x.LastSeen),
		ts(x.EndedAt), b2i(x.Archived), id)
	if err != nil {
		return warden.Session{}, rec, fmt.Errorf("update session %q: %w", id, err)
	}
	if dr != nil {
		for _, g := range dr.UseGrants {
			res, err := q.ExecContext(ctx, s.d.Rebind(useGrant), g, ts(s.now()))
			if err != nil {
				return warden.Session{}, rec, fmt.Errorf("use grant %s: %w", g, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return warden.Session{}, rec, &warden.GrantUnusableError{ID: g}
			}
		}
		if dr.History != nil {
			if err := s.addHistory(ctx, q, *dr.History); err != nil {
				return warden.Session{}, rec, err
			}
		}
		if dr.HistoryKeep > 0 {
			if _, err := s.archiveHistory(ctx, q, dr.HistoryKeep); err != nil {
				return warden.Session{}, rec, err
			}
		}
		if rec, err = s.appendAudit(ctx, q, dr.Audit); err != nil {
			return warden.Session{}, rec, err
		}
	}
	// Reflect the stored precision.
	x.StartedAt, x.LastSeen, x.EndedAt = tm(ts(x.StartedAt)), tm(ts(x.LastSeen)), tm(ts(x.EndedAt))
	return x, rec, nil
}

// Sessions implements warden.SessionStore.
func (s *Store) Sessions(ctx context.Context, f warden.SessionFilter) ([]warden.Session, error) {
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE 1 = 1`
	var args []any
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if !f.Archived {
		q += ` AND archived = 0`
	}
	q += ` ORDER BY last_seen DESC, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	defer rows.Close()
	var out []warden.Session
	for rows.Next() {
		x, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// ArchiveSessions implements warden.SessionStore.
func (s *Store) ArchiveSessions(ctx context.Context, before time.Time) (int, error) {
	res, err := s.exec(ctx, `UPDATE sessions SET archived = 1 WHERE archived = 0 AND last_seen < ?`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("archive sessions: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ---- grants

const grantCols = `id, tool, role, session, subject, value, pattern, expires, uses_left, created_at, created_by, approval`

func scanGrant(r scanner) (warden.Grant, error) {
	var g warden.Grant
	var exp, created int64
	err := r.Scan(&g.ID, &g.Tool, &g.Role, &g.Session, &g.Subject, &g.Value, &g.Pattern, &exp, &g.UsesLeft,
		&created, &g.CreatedBy, &g.Approval)
	g.Expires, g.CreatedAt = tm(exp), tm(created)
	return g, err
}

func (s *Store) prepGrant(g warden.Grant) (warden.Grant, error) {
	if g.Tool == "" || g.Subject == "" {
		return g, errors.New("grant: tool and subject are required")
	}
	if g.Value == "" && g.Pattern == "" {
		return g, errors.New("grant: value or pattern is required")
	}
	if g.ID == "" {
		g.ID = newID("g-")
	}
	if g.CreatedAt.IsZero() {
		g.CreatedAt = s.now()
	}
	if g.UsesLeft == 0 {
		g.UsesLeft = -1
	}
	g.CreatedAt, g.Expires = tm(ts(g.CreatedAt)), tm(ts(g.Expires))
	return g, nil
}

type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func (s *Store) insertGrant(ctx context.Context, db execer, g warden.Grant) error {
	_, err := db.ExecContext(ctx, s.d.Rebind(`INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		g.ID, g.Tool, g.Role, g.Session, g.Subject, g.Value, g.Pattern, ts(g.Expires), g.UsesLeft,
		ts(g.CreatedAt), g.CreatedBy, g.Approval)
	return err
}

// AddGrant implements warden.GrantStore.
func (s *Store) AddGrant(ctx context.Context, g warden.Grant) (warden.Grant, error) {
	g, err := s.prepGrant(g)
	if err != nil {
		return g, err
	}
	if err := s.insertGrant(ctx, s.db, g); err != nil {
		return g, fmt.Errorf("add grant: %w", err)
	}
	return g, nil
}

// Grants implements warden.GrantStore.
func (s *Store) Grants(ctx context.Context, f warden.GrantFilter) ([]warden.Grant, error) {
	q := `SELECT ` + grantCols + ` FROM grants WHERE 1 = 1`
	var args []any
	if !f.All {
		q += ` AND revoked_at = 0 AND (expires = 0 OR expires > ?) AND uses_left <> 0`
		args = append(args, ts(s.now()))
	}
	if f.Session != "" {
		q += ` AND (session = '' OR session = ?)`
		args = append(args, f.Session)
	}
	q += ` ORDER BY created_at, id`
	rows, err := prepared{s: s}.QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	defer rows.Close()
	var out []warden.Grant
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, fmt.Errorf("grants: %w", err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// useGrant counts one use of a grant that is in force.
const useGrant = `UPDATE grants SET uses_left = CASE WHEN uses_left > 0 THEN uses_left - 1 ELSE uses_left END
		WHERE id = ? AND revoked_at = 0 AND (expires = 0 OR expires > ?) AND uses_left <> 0`

// UseGrant implements warden.GrantStore.
func (s *Store) UseGrant(ctx context.Context, id string) (bool, error) {
	res, err := s.exec(ctx, useGrant, id, ts(s.now()))
	if err != nil {
		return false, fmt.Errorf("use grant %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("use grant %q: %w", id, err)
	}
	if n == 1 {
		return true, nil
	}
	var one int
	err = s.db.QueryRowContext(ctx, s.d.Rebind(`SELECT 1 FROM grants WHERE id = ?`), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("grant %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("use grant %q: %w", id, err)
	}
	return false, nil
}

// RevokeGrant implements warden.GrantStore.
func (s *Store) RevokeGrant(ctx context.Context, id string) error {
	res, err := s.exec(ctx, `UPDATE grants SET revoked_at = ? WHERE id = ?`, ts(s.now()), id)
	if err != nil {
		return fmt.Errorf("revoke grant %q: %w", id, err)
	}
	return notFound(res, "grant", id)
}

// ---- approvals

const approvalCols = `id, session, role, host, tool, args, summary, code, rule, reason, parts, fingerprint,
	status, scope, message, decided_by, created_at, decided_at, grants, consumed`

func scanApproval(r scanner) (warden.Approval, error) {
	var a warden.Approval
	var args, parts, grants string
	var created, decided int64
	var consumed int
	err := r.Scan(&a.ID, &a.Session, &a.Role, &a.Host, &a.Tool, &args, &a.Summary, &a.Code, &a.Rule, &a.Reason,
		&parts, &a.Fingerprint, &a.Status, &a.Scope, &a.Message, &a.DecidedBy, &created, &decided, &grants, &consumed)
	if err != nil {
		return a, err
	}
	a.CreatedAt, a.DecidedAt, a.Consumed = tm(created), tm(decided), consumed != 0
	if err := fromJSON(args, &a.Args); err != nil {
		return a, fmt.Errorf("approval %q args: %w", a.ID, err)
	}
	if err := fromJSON(parts, &a.Parts); err != nil {
		return a, fmt.Errorf("approval %q parts: %w", a.ID, err)
	}
	if err := fromJSON(grants, &a.Grants); err != nil {
		return a, fmt.Errorf("approval %q grants: %w", a.ID, err)
	}
	return a, nil
}

// CreateApproval implements warden.ApprovalStore.
func (s *Store) CreateApproval(ctx context.Context, a warden.Approval) (warden.Approval, error) {
	if a.Tool == "" {
		return a, errors.New("create approval: tool is required")
	}
	a.CreatedAt = tm(ts(s.now()))
	a.Status, a.Scope, a.DecidedAt, a.DecidedBy, a.Message, a.Grants, a.Consumed = warden.ApprovalPending, "", time.Time{}, "", "", nil, false
	if a.Args == nil {
		a.Args = map[string]any{}
	}
	for range 5 {
		a.ID = newID("a-")
		res, err := s.exec(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (fingerprint) WHERE status = 'pending' AND fingerprint <> '' DO NOTHING`,
			a.ID, a.Session, a.Role, a.Host, a.Tool, toJSON(a.Args), a.Summary, string(a.Code), a.Rule, a.Reason,
			toJSON(a.Parts), a.Fingerprint, a.Status, "", "", "", ts(a.CreatedAt), 0, "[]", 0)
		if err != nil {
			return a, fmt.Errorf("create approval: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return a, err
		}
		// The call has a pending approval already: share it.
		existing, err := scanApproval(s.db.QueryRowContext(ctx, s.d.Rebind(`SELECT `+approvalCols+` FROM approvals
			WHERE fingerprint = ? AND status = 'pending'`), a.Fingerprint))
		if err == nil {
			return existing, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return a, fmt.Errorf("create approval: %w", err)
		}
		// It was answered meanwhile: try again.
	}
	return a, errors.New("create approval: the pending approval of this call keeps changing; retry")
}

// Approval implements warden.ApprovalStore.
func (s *Store) Approval(ctx context.Context, id string) (warden.Approval, error) {
	a, err := scanApproval(s.db.QueryRowContext(ctx, s.d.Rebind(`SELECT `+approvalCols+` FROM approvals WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("approval %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("approval %q: %w", id, err)
	}
	return a, nil
}

// Approvals implements warden.ApprovalStore.
func (s *Store) Approvals(ctx context.Context, f warden.ApprovalFilter) ([]warden.Approval, error) {
	q := `SELECT ` + approvalCols + ` FROM approvals WHERE 1 = 1`
	var args []any
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if f.Session != "" {
		q += ` AND session = ?`
		args = append(args, f.Session)
	}
	if f.Fingerprint != "" {
		q += ` AND fingerprint = ?`
		args = append(args, f.Fingerprint)
	}
	q += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	defer rows.Close()
	var out []warden.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("approvals: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ResolveApproval implements warden.ApprovalStore.
func (s *Store) ResolveApproval(ctx context.Context, id string, r warden.Resolution, grants []warden.Grant) (warden.Approval, error) {
	switch {
	case r.Status == warden.ApprovalRejected:
		if len(grants) > 0 {
			return warden.Approval{}, errors.New("resolve approval: a rejection makes no grants")
		}
		r.Scope = ""
	case r.Status == warden.ApprovalApproved:
		switch r.Scope {
		case warden.ScopeOnce, warden.ScopeSession, warden.ScopeAlways:
		default:
			return warden.Approval{}, fmt.Errorf("resolve approval: scope %q: want once, session or always", r.Scope)
		}
	default:
		return warden.Approval{}, fmt.Errorf("resolve approval: status %q: want approved or rejected", r.Status)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
	}
	defer tx.Rollback()
	var status string
	err = tx.QueryRowContext(ctx, s.d.Rebind(`SELECT status FROM approvals WHERE id = ?`+s.d.ForUpdate), id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return warden.Approval{}, fmt.Errorf("approval %q: %w", id, warden.ErrNotFound)
	}
	if err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
	}
	if status != warden.ApprovalPending {
		return warden.Approval{}, fmt.Errorf("approval %q is %s already: %w", id, status, warden.ErrConflict)
	}
	ids := []string{}
	for _, g := range grants {
		g.Approval = id
		g, err := s.prepGrant(g)
		if err != nil {
			return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
		}
		if err := s.insertGrant(ctx, tx, g); err != nil {
			return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
		}
		ids = append(ids, g.ID)
	}
	_, err = tx.ExecContext(ctx, s.d.Rebind(`UPDATE approvals SET status = ?, scope = ?, message = ?, decided_by = ?,
		decided_at = ?, grants = ? WHERE id = ?`), r.Status, r.Scope, r.Message, r.DecidedBy, ts(s.now()), toJSON(ids), id)
	if err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return warden.Approval{}, fmt.Errorf("resolve approval %q: commit: %w", id, err)
	}
	return s.Approval(ctx, id)
}

// ConsumeApproval implements warden.ApprovalStore.
func (s *Store) ConsumeApproval(ctx context.Context, id string) (bool, error) {
	res, err := s.exec(ctx, `UPDATE approvals SET consumed = 1 WHERE id = ? AND status IN (?, ?) AND consumed = 0`,
		id, warden.ApprovalApproved, warden.ApprovalRejected)
	if err != nil {
		return false, fmt.Errorf("consume approval %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PurgeApprovals implements warden.ApprovalStore.
func (s *Store) PurgeApprovals(ctx context.Context, pendingBefore, answeredBefore time.Time) (int, error) {
	res, err := s.exec(ctx, `DELETE FROM approvals WHERE (status = ? AND created_at < ?) OR (status <> ? AND decided_at < ?)`,
		warden.ApprovalPending, ts(pendingBefore), warden.ApprovalPending, ts(answeredBefore))
	if err != nil {
		return 0, fmt.Errorf("purge approvals: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ---- audit

const auditCols = `time, session, role, host, tool, depth, args, decision, code, rule, reason, matched,
	warnings, grants, approval, mode, enforced, latency, call_id, source`

// AppendAudit implements warden.AuditLog.
func (s *Store) AppendAudit(ctx context.Context, r warden.AuditRecord) (warden.AuditRecord, error) {
	r, err := s.appendAudit(ctx, prepared{s: s}, r)
	return r, s.explain(err)
}

// querier is a database or a transaction.
type querier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func (s *Store) appendAudit(ctx context.Context, q querier, r warden.AuditRecord) (warden.AuditRecord, error) {
	if r.Time.IsZero() {
		r.Time = s.now()
	}
	r.Time = tm(ts(r.Time))
	if r.Args == nil {
		r.Args = map[string]any{}
	}
	err := q.QueryRowContext(ctx, s.d.Rebind(`INSERT INTO audit (`+auditCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (call_id) WHERE call_id <> '' DO NOTHING RETURNING id`),
		ts(r.Time), r.Session, r.Role, r.Host, r.Tool, r.Depth, toJSON(r.Args), string(r.Decision), string(r.Code),
		r.Rule, r.Reason, toJSON(nonNil(r.Matched)), toJSON(nonNil(r.Warnings)), toJSON(nonNil(r.Grants)),
		r.Approval, r.Mode, string(r.Enforced), int64(r.Latency), r.CallID, r.Source).Scan(&r.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("append audit: call %s was decided already: %w", r.CallID, warden.ErrConflict)
	}
	if err != nil {
		return r, fmt.Errorf("append audit: %w", err)
	}
	return r, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Audit implements warden.AuditLog.
func (s *Store) Audit(ctx context.Context, f warden.AuditFilter) ([]warden.AuditRecord, error) {
	q := `SELECT id, ` + auditCols + ` FROM audit WHERE 1 = 1`
	var args []any
	add := func(cond string, v any) {
		q += ` AND ` + cond
		args = append(args, v)
	}
	if f.Session != "" {
		add(`session = ?`, f.Session)
	}
	if f.Decision != "" {
		add(`decision = ?`, string(f.Decision))
	}
	if f.Enforced != "" {
		add(`(CASE WHEN mode = 'audit' AND enforced <> '' THEN enforced ELSE decision END) = ?`, string(f.Enforced))
	}
	if f.Tool != "" {
		add(`tool = ?`, f.Tool)
	}
	if f.Rule != "" {
		add(`rule = ?`, f.Rule)
	}
	if f.CallID != "" {
		add(`call_id = ?`, f.CallID)
	}
	if !f.Since.IsZero() {
		add(`time >= ?`, ts(f.Since))
	}
	if !f.Until.IsZero() {
		add(`time < ?`, ts(f.Until))
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	var out []warden.AuditRecord
	for rows.Next() {
		var r warden.AuditRecord
		var t, lat int64
		var argsJ, matched, warnings, grants, decision, code, enforced string
		if err := rows.Scan(&r.ID, &t, &r.Session, &r.Role, &r.Host, &r.Tool, &r.Depth, &argsJ, &decision, &code,
			&r.Rule, &r.Reason, &matched, &warnings, &grants, &r.Approval, &r.Mode, &enforced, &lat, &r.CallID, &r.Source); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		r.Time, r.Latency = tm(t), time.Duration(lat)
		r.Decision, r.Code, r.Enforced = warden.Effect(decision), warden.Code(code), warden.Effect(enforced)
		for _, j := range []struct {
			s string
			v any
		}{{argsJ, &r.Args}, {matched, &r.Matched}, {warnings, &r.Warnings}, {grants, &r.Grants}} {
			if err := fromJSON(j.s, j.v); err != nil {
				return nil, fmt.Errorf("audit record %d: %w", r.ID, err)
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// PurgeAudit implements warden.AuditLog.
func (s *Store) PurgeAudit(ctx context.Context, before time.Time) (int, error) {
	res, err := s.exec(ctx, `DELETE FROM audit WHERE time < ?`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("purge audit: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ---- project state

// State implements warden.StateStore.
func (s *Store) State(ctx context.Context) (warden.ProjectState, error) {
	var st warden.ProjectState
	var updated int64
	err := s.db.QueryRowContext(ctx, `SELECT phase, updated_at FROM state WHERE id = 1`).Scan(&st.Phase, &updated)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("state: %w", err)
	}
	st.UpdatedAt = tm(updated)
	rows, err := s.db.QueryContext(ctx, `SELECT id, priority, content, created_at, demoted_at FROM anchors
		ORDER BY CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END, created_at, id`)
	if err != nil {
		return st, fmt.Errorf("state: anchors: %w", err)
	}
	defer rows.Close()
	st.Anchors = []warden.Anchor{}
	for rows.Next() {
		var a warden.Anchor
		var created, demoted int64
		var pri string
		if err := rows.Scan(&a.ID, &pri, &a.Content, &created, &demoted); err != nil {
			return st, fmt.Errorf("state: anchors: %w", err)
		}
		a.Priority, a.CreatedAt, a.DemotedAt = warden.Priority(pri), tm(created), tm(demoted)
		st.Anchors = append(st.Anchors, a)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("state: anchors: %w", err)
	}
	hrows, err := s.db.QueryContext(ctx, `SELECT id, time, session, agent, action, result FROM history WHERE archived = 0 ORDER BY id`)
	if err != nil {
		return st, fmt.Errorf("state: history: %w", err)
	}
	defer hrows.Close()
	st.History = []warden.HistoryEntry{}
	for hrows.Next() {
		var h warden.HistoryEntry
		var t int64
		if err := hrows.Scan(&h.ID, &t, &h.Session, &h.Agent, &h.Action, &h.Result); err != nil {
			return st, fmt.Errorf("state: history: %w", err)
		}
		h.Time = tm(t)
		st.History = append(st.History, h)
	}
	return st, hrows.Err()
}

// SetPhase implements warden.StateStore.
func (s *Store) SetPhase(ctx context.Context, phase string) error {
	_, err := s.exec(ctx, `INSERT INTO state (id, phase, updated_at) VALUES (1, ?, ?)
		ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, updated_at = excluded.updated_at`, phase, ts(s.now()))
	if err != nil {
		return fmt.Errorf("set phase: %w", err)
	}
	return nil
}

// AddAnchor implements warden.StateStore.
func (s *Store) AddAnchor(ctx context.Context, a warden.Anchor) (warden.Anchor, error) {
	if strings.TrimSpace(a.Content) == "" {
		return a, errors.New("add anchor: content is empty")
	}
	p, err := warden.ParsePriority(string(a.Priority))
	if err != nil {
		return a, fmt.Errorf("add anchor: %w", err)
	}
	a.Priority = p
	if a.ID == "" {
		a.ID = newID("n-")
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.now()
	}
	a.CreatedAt, a.DemotedAt = tm(ts(a.CreatedAt)), tm(ts(a.DemotedAt))
	_, err = s.exec(ctx, `INSERT INTO anchors (id, priority, content, created_at, demoted_at) VALUES (?, ?, ?, ?, ?)`,
		a.ID, string(a.Priority), a.Content, ts(a.CreatedAt), ts(a.DemotedAt))
	if err != nil {
		return a, fmt.Errorf("add anchor: %w", err)
	}
	return a, nil
}

// DemoteAnchor implements warden.StateStore.
func (s *Store) DemoteAnchor(ctx context.Context, id string) error {
	res, err := s.exec(ctx, `UPDATE anchors SET priority = 'normal', demoted_at = ? WHERE id = ? AND priority = 'high'`, ts(s.now()), id)
	if err != nil {
		return fmt.Errorf("demote anchor %q: %w", id, err)
	}
	return notFound(res, "high anchor", id)
}

// RemoveAnchor implements warden.StateStore.
func (s *Store) RemoveAnchor(ctx context.Context, id string) error {
	res, err := s.exec(ctx, `DELETE FROM anchors WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("remove anchor %q: %w", id, err)
	}
	return notFound(res, "anchor", id)
}

// AddHistory implements warden.StateStore.
func (s *Store) AddHistory(ctx context.Context, h warden.HistoryEntry) error {
	return s.explain(s.addHistory(ctx, prepared{s: s}, h))
}

func (s *Store) addHistory(ctx context.Context, q querier, h warden.HistoryEntry) error {
	if h.Action == "" {
		return errors.New("add history: action is empty")
	}
	if h.Time.IsZero() {
		h.Time = s.now()
	}
	_, err := q.ExecContext(ctx, s.d.Rebind(`INSERT INTO history (time, session, agent, action, result) VALUES (?, ?, ?, ?, ?)`),
		ts(h.Time), h.Session, h.Agent, h.Action, h.Result)
	if err != nil {
		return fmt.Errorf("add history: %w", err)
	}
	return nil
}

// ArchiveHistory implements warden.StateStore.
func (s *Store) ArchiveHistory(ctx context.Context, keep int) (int, error) {
	return s.archiveHistory(ctx, prepared{s: s}, keep)
}

func (s *Store) archiveHistory(ctx context.Context, q querier, keep int) (int, error) {
	if keep < 0 {
		keep = 0
	}
	// Everything up to the newest entry beyond the first keep; nothing
	// when there are no more than keep.
	res, err := q.ExecContext(ctx, s.d.Rebind(`UPDATE history SET archived = 1 WHERE archived = 0 AND id <=
		(SELECT id FROM history WHERE archived = 0 ORDER BY id DESC LIMIT 1 OFFSET ?)`), keep)
	if err != nil {
		return 0, fmt.Errorf("archive history: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// Dialect is what differs between the SQL databases.
type Dialect struct {
	// AutoID is the column type of an auto-incrementing primary key.
	AutoID string
	// ForUpdate is appended to a SELECT that must lock its rows.
	ForUpdate string
	// Rebind turns the queries' ? placeholders into the database's own.
	Rebind func(q string) string
	// LockMigrations serialises migrations across processes; it runs
	// inside the migration transaction.
	LockMigrations func(ctx context.Context, tx *sql.Tx) error
	// Explain, when set, rewrites an error of the writes a decision makes
	// into one a person can act on (a full disk said as such).
	Explain func(err error) error
	// GroupCommit makes concurrent WriteDecision calls share one
	// transaction (see groupWriter). For a database with one writer at a
	// time (SQLite); where writers lock rows, a group could deadlock with
	// another process's.
	GroupCommit bool
}

// Open wraps an open database and brings its schema up to date.
func Open(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	s := &Store{db: db, d: d}
	if err := db.PingContext(ctx); err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		return nil, s.explain(err)
	}
	return s, nil
}

// Interface guards.
var _ warden.Store = (*Store)(nil)
