package sqlstore

import (
	"context"
	"fmt"

	"github.com/warden-run/warden"
)

// SetOutcome implements warden.AuditLog: one UPDATE of the call's record,
// found by the host's id for the call, or else as the session's latest call
// of the tool that ran and has no outcome yet.
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
	res, err := prepared{s: s}.ExecContext(ctx, s.d.Rebind(q), args...)
	if err != nil {
		return fmt.Errorf("outcome of %s: %w", o.Tool, err)
	}
	call := o.Tool
	if o.ToolUse != "" {
		call += " " + o.ToolUse
	}
	return notFound(res, "call in session "+o.Session, call)
}
