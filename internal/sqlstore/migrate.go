package sqlstore

import (
	"context"
	"fmt"
	"strings"
)

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
