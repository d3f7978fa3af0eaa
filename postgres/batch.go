package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/warden-run/warden/internal/sqlstore"
)

// batches counts the batches sent (tests: round trips a decision).
var batches atomic.Int64

// sendBatch is the dialect's Batch: stmts in one round trip, through
// pgx's pipeline on conn's connection. Each statement is prepared once a
// connection (pgx's statement cache); one not yet prepared there costs a
// round trip of its own first.
func sendBatch(ctx context.Context, conn *sql.Conn, stmts []sqlstore.BatchStmt) error {
	batches.Add(1)
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("batch: the connection is a %T, not pgx's", dc)
		}
		b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(stmts))}
		for _, st := range stmts {
			b.Queue(st.Query, st.Args...)
		}
		br := sc.Conn().SendBatch(ctx, b)
		for _, st := range stmts {
			if err := batchResult(br, st); err != nil {
				br.Close()
				return fmt.Errorf("%s: %w", st.What, err)
			}
		}
		return br.Close()
	})
}

// batchResult reads the result of st, the next statement of br.
func batchResult(br pgx.BatchResults, st sqlstore.BatchStmt) error {
	if st.Row == nil {
		_, err := br.Exec()
		return err
	}
	rows, err := br.Query()
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := st.Row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// duplicate: a unique constraint's violation (23505).
func duplicate(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
