package sqlstore

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/warden-run/warden"
)

// SetOutcome implements warden.AuditLog: one UPDATE of the call's record,
// found by the host's id for the call, or else as the session's latest call
// of the tool that ran and has no outcome yet.
//
// The update's commit does not wait for the disk (Dialect.Unsynced): an
// outcome is what the host says a call did, after warden's decision on it
// was made durable. It is in the database once SetOutcome returns, so a
// crash of warden keeps it; a power cut can lose it only until the next
// decision's commit, which syncs the log the outcome is in. A host waits
// for the outcome of every call, so the sync it no longer waits for was
// half of a call's cost through `warden mcp proxy`.
func (s *Store) SetOutcome(ctx context.Context, o warden.Outcome) error {
	outcome := warden.OutcomeFail
	if o.OK {
		outcome = warden.OutcomeOK
	}
	// The newest match first: the call is nearly always the session's
	// latest, so the search stops there. A prepared statement: a host
	// reports an outcome for every call.
	q := `UPDATE audit SET outcome = ? WHERE id = (SELECT id FROM audit WHERE session = ? AND tool_use = ?
		ORDER BY id DESC LIMIT 1)`
	args := []any{outcome, o.Session, o.ToolUse}
	if o.ToolUse == "" {
		q = `UPDATE audit SET outcome = ? WHERE id = (SELECT id FROM audit
			WHERE session = ? AND tool = ? AND decision = 'allow' AND outcome = '' ORDER BY id DESC LIMIT 1)`
		args = []any{outcome, o.Session, o.Tool}
	}
	var n int64
	err := s.unsynced(ctx, func(q2 prepared) error {
		res, err := q2.ExecContext(ctx, s.d.Rebind(q), args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("outcome of %s: %w", o.Tool, err)
	}
	if n == 0 {
		call := o.Tool
		if o.ToolUse != "" {
			call += " " + o.ToolUse
		}
		return fmt.Errorf("call in session %s %q: %w", o.Session, call, warden.ErrNotFound)
	}
	return nil
}

// unsynced runs fn in a transaction whose commit does not wait for the
// disk, on a connection of its own that waits again afterwards (see
// Dialect.Unsynced). A connection that cannot be set back is closed, not
// returned to the pool: a later decision on it would not be durable.
func (s *Store) unsynced(ctx context.Context, fn func(prepared) error) error {
	on, off := s.d.Unsynced[0], s.d.Unsynced[1]
	if on == "" {
		return fn(prepared{s: s})
	}
	// The turn is taken before the connection, which the transaction
	// holds (see LimitConns).
	done, err := s.turn(ctx)
	if err != nil {
		return err
	}
	defer done()
	conn, err := s.pool(ctx).Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, on); err != nil {
		return err
	}
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), off); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(prepared{s, tx}); err != nil {
		return err
	}
	return tx.Commit()
}
