package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
)

// goSteps are the steps of a schema version that SQL cannot do, by
// version: they run in the migration's transaction, after its SQL.
var goSteps = map[int]func(ctx context.Context, tx *sql.Tx, d Dialect) error{
	12: redactAtRest,
}

// inputMark starts what engine.Part.GrantValue adds to a command that
// reads its input from its line: a hash of the line.
const inputMark = " (with its input from line "

// SealValue is a grant's or an approval part's value as this warden keeps
// it (engine.Part.GrantValue): a value with a secret redacted, with a hash
// of the exact value (warden.RedactExact); the hash of an input line stays
// as it is.
func SealValue(v string) string {
	if i := strings.LastIndex(v, inputMark); i >= 0 && strings.HasSuffix(v, ")") {
		return warden.RedactExact(v[:i]) + v[i:]
	}
	return warden.RedactExact(v)
}

// redactAtRest rewrites what an older warden kept in clear: the values of
// grants and the parts and summaries of approvals that hold a secret. A
// rewritten grant still covers exactly its call, which the engine now
// matches by the same redacted value.
func redactAtRest(ctx context.Context, tx *sql.Tx, d Dialect) error {
	type change struct{ id, a, b string }
	var grants []change
	rows, err := tx.QueryContext(ctx, `SELECT id, value FROM grants`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, v string
		if err := rows.Scan(&id, &v); err != nil {
			rows.Close()
			return err
		}
		if nv := SealValue(v); nv != v {
			grants = append(grants, change{id, nv, ""})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range grants {
		if _, err := tx.ExecContext(ctx, d.Rebind(`UPDATE grants SET value = ? WHERE id = ?`), c.a, c.id); err != nil {
			return err
		}
	}
	var approvals []change
	rows, err = tx.QueryContext(ctx, `SELECT id, parts, summary FROM approvals`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, parts, summary string
		if err := rows.Scan(&id, &parts, &summary); err != nil {
			rows.Close()
			return err
		}
		var ps []warden.GrantPart
		if err := fromJSON(parts, &ps); err != nil {
			rows.Close()
			return fmt.Errorf("approval %q parts: %w", id, err)
		}
		for i := range ps {
			ps[i].Value = SealValue(ps[i].Value)
		}
		ns := summary
		if tool, rest, ok := strings.Cut(summary, ": "); ok {
			ns = tool + ": " + warden.RedactText(rest)
		}
		if np := toJSON(ps); np != parts || ns != summary {
			approvals = append(approvals, change{id, np, ns})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range approvals {
		if _, err := tx.ExecContext(ctx, d.Rebind(`UPDATE approvals SET parts = ?, summary = ? WHERE id = ?`), c.a, c.b, c.id); err != nil {
			return err
		}
	}
	return nil
}
