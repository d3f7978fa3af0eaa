package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/warden-run/warden/session"
)

func runPurge(ctx context.Context, env *Env) int {
	fs := newFlags(env, "purge", "[--policy FILE] [--store URL] [--json]")
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, code := parseArgs(fs, env.Args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return cmdError(env, "purge", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	pol, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "purge", err)
	}
	defer st.Close()
	l := session.Limits(pol)
	r, err := session.Purge(ctx, st, l, time.Now())
	if err != nil {
		return cmdError(env, "purge", err)
	}
	if *asJSON {
		writeJSON(env.Stdout, r, true)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "anchors: %d demoted (high older than %s), %d deleted (max %d)\n", r.AnchorsDemoted, l.AnchorDemoteAfter, r.AnchorsRemoved, l.AnchorsMax)
	fmt.Fprintf(env.Stdout, "history: %d entries archived (keeping %d)\n", r.HistoryArchived, l.HistoryMax)
	fmt.Fprintf(env.Stdout, "sessions: %d archived (not seen for %s)\n", r.SessionsArchived, l.SessionMaxAge)
	fmt.Fprintf(env.Stdout, "approvals: %d dropped (past their lifetime of %s)\n", r.ApprovalsPurged, session.FormatDuration(l.ApprovalLifetime))
	if l.AuditRetention > 0 {
		fmt.Fprintf(env.Stdout, "audit: %d records deleted (older than %s)\n", r.AuditPurged, l.AuditRetention)
	} else {
		fmt.Fprintln(env.Stdout, "audit: kept (no audit.retention in the policy)")
	}
	return ExitOK
}
