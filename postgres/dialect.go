// Package postgres is warden's shared store for several warden servers: the
// same schema and contract as the SQLite store, on PostgreSQL through pgx.
// Select it with `--store postgres://user@host:5432/db`.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/sqlstore"
)

// Store is warden's store on PostgreSQL: a warden.Store, and so the session
// layer's session.Store, and a warden.Spooler. It is safe for concurrent
// use by goroutines and by processes sharing the database. It is the SQL
// store both databases share (internal/sqlstore) under this package's
// name; its methods are those of the interfaces it implements, documented
// there, and storetest.Run checks them:
//
//   - Session, UpdateSession, Sessions, ArchiveSessions
//     (warden.SessionStore); AddGrant, Grants, UseGrant, RevokeGrant
//     (warden.GrantStore); CreateApproval, Approval, Approvals,
//     ResolveApproval, ConsumeApproval, PurgeApprovals
//     (warden.ApprovalStore); AppendAudit, Audit, Recent, SetOutcome,
//     PurgeAudit (warden.AuditLog); State, SetPhase, AddAnchor,
//     DemoteAnchor, RemoveAnchor, AddHistory, ArchiveHistory
//     (warden.StateStore); SetHalt, Halted, AgentHalted, Halts,
//     ClearHalt, ClearAgentHalt (warden.HaltStore); Report, Reports,
//     UpdateReport (warden.ReportStore);
//   - WriteDecision (warden.DecisionWriter): one decision's session,
//     history entry, grant uses and audit record in one transaction, the
//     session's update and the record's insert in one statement;
//     concurrent decisions share a transaction and a few round trips
//     (group commit);
//   - HaltAndGrants (warden.DecisionReader): the halt in force and the
//     grants a decision needs, in one read;
//   - Spool (warden.Spooler), SetSpool, SpoolFile, ImportSpool: an audit
//     record the database cannot take now waits in a spool file, synced,
//     and joins the audit trail when it answers again;
//   - Now and the Clock field: the one clock of a decision (tests replace
//     Clock to travel in time);
//   - LimitConns bounds the open connections; DB is the database handle,
//     for tests and tools; Close closes the store.
type Store = sqlstore.Store

var dialect = sqlstore.Dialect{
	Name:           "postgres",
	ForUpdate:      " FOR UPDATE",
	Rebind:         rebind,
	LockMigrations: lockMigrations,
	ModifyingCTE:   true,
	// Concurrent decisions share a transaction, a few round trips and
	// one commit for many (see sqlstore.Dialect.GroupCommit).
	GroupCommit: true,
	// One group at a time (see GroupWriters and
	// sqlstore.Dialect.GroupWriters).
	GroupWriters: GroupWriters,
	Retryable:    retryable,
	// A group in two round trips: BEGIN with the sessions' read, the
	// writes with COMMIT (see sqlstore.Dialect.Batch).
	Batch:     sendBatch,
	Duplicate: duplicate,
	// The server keeps the commit's order and writes it within a few
	// wal_writer_delay periods, or with the next synchronous commit.
	Unsynced: [2]string{"SET synchronous_commit TO off", "RESET synchronous_commit"},
}

// rebind turns the shared queries' ? placeholders into $1, $2, ...
// (the shared queries have no ? inside string literals).
func rebind(q string) string {
	n := strings.Count(q, "?")
	if n == 0 {
		return q
	}
	// By bytes: '?' is one byte in UTF-8 and never part of another
	// character's. A group's joint insert has hundreds of placeholders.
	b := make([]byte, 0, len(q)+n*4)
	for arg := int64(1); ; arg++ {
		i := strings.IndexByte(q, '?')
		if i < 0 {
			return string(append(b, q...))
		}
		b = strconv.AppendInt(append(append(b, q[:i]...), '$'), arg, 10)
		q = q[i+1:]
	}
}

// retryable: a deadlock or a serialization failure, which another
// transaction caused.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// migrationLock is the advisory lock key that serialises migrations of
// warden stores in one database.
const migrationLock = 0x77617264 // "ward"

func lockMigrations(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock)
	return err
}

// Open connects to PostgreSQL at url (postgres://user:pass@host:port/db,
// with any libpq parameters such as sslmode or search_path) and brings the
// schema up to date.
//
// A store holds at most MaxConns connections at once (the URL's
// pool_max_conns=N sets another number): past that, a query waits for a
// connection instead of asking the server for one more. PostgreSQL takes
// 100 connections by default, and several replicas with many decisions
// under way would otherwise use them up, each decision past the limit
// failing (denied) rather than waiting its turn.
func Open(ctx context.Context, url string) (*Store, error) {
	dsn, maxConns, err := poolSize(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", redactURL(err, url))
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", redactURL(err, url))
	}
	s, err := sqlstore.Open(ctx, db, dialect)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open postgres store: %w", redactURL(err, url))
	}
	s.LimitConns(maxConns)
	return s, nil
}

// GroupWriters is how many group commits of one store may be under way
// at once: each holds a connection (of MaxConns) while it runs. A group
// takes two round trips (see sqlstore.Dialect.Batch), the second with
// the commit's disk write. Since the writer waits for the rest of its
// callers (sqlstore's linger), one writer makes groups of all of them:
// two made two smaller groups, more commits and more of the server's CPU
// a decision (in-process at 16 and 64 clients, one writer did 13 to 17%
// more decisions a second with 20 to 35% less of the server's CPU each;
// in the e2e benchmark, seven rounds each, the same at 16 clients and
// 14% more at 64).
const GroupWriters = 1

// MaxConns is how many connections a store holds at most, unless its URL
// says otherwise (pool_max_conns).
const MaxConns = 24

// poolSize takes pool_max_conns=N out of a store URL (URL or key=value
// form), which PostgreSQL itself would refuse as an unknown setting.
func poolSize(dsn string) (string, int, error) {
	const key = "pool_max_conns"
	if !strings.Contains(dsn, key) {
		return dsn, MaxConns, nil
	}
	parse := func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%s=%s: want a number of connections, 1 or more", key, v)
		}
		return n, nil
	}
	if u, err := neturl.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		v, ok := q[key]
		if !ok {
			return dsn, MaxConns, nil
		}
		n, err := parse(v[len(v)-1])
		if err != nil {
			return "", 0, err
		}
		q.Del(key)
		u.RawQuery = q.Encode()
		return u.String(), n, nil
	}
	n, kept := MaxConns, []string{}
	for _, f := range strings.Fields(dsn) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			var err error
			if n, err = parse(v); err != nil {
				return "", 0, err
			}
			continue
		}
		kept = append(kept, f)
	}
	return strings.Join(kept, " "), n, nil
}

// redactURL keeps a password in the URL out of error messages.
func redactURL(err error, url string) error {
	r := warden.RedactString(url)
	if r == url {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), url, r))
}
