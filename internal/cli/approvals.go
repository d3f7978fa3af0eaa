package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

const approvalsUsage = `ls [--all] [--json | --ids]
       warden approvals approve ID (--once | --session | --always) [--pattern P] [--expires D] [--uses N] [--message M]
       warden approvals reject ID --message M`

// approvalsSubcommands are the subcommands of `warden approvals`, each
// with its own flags.
var approvalsSubcommands = map[string]subcommandFunc{
	"ls":      runApprovalsList,
	"list":    runApprovalsList,
	"approve": runApprovalsApprove,
	"reject":  runApprovalsReject,
}

func runApprovals(ctx context.Context, env *Env) int {
	return runSubcommand(ctx, env, "approvals", approvalsUsage, "ls, approve or reject", approvalsSubcommands)
}

// runApprovalsList is `warden approvals ls`.
func runApprovalsList(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	all := fs.Bool("all", false, "also answered approvals")
	asJSON := fs.Bool("json", false, "print JSON")
	ids := fs.Bool("ids", false, "print only the ids, newest first, one a line (ID=$(warden approvals ls --ids | head -1))")
	pos, pol, st, code := sf.parseOpen(ctx, env, "approvals", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	life := session.ApprovalLifetime(pol)
	if len(pos) > 0 {
		return cmdError(env, "approvals ls", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	f := warden.ApprovalFilter{Status: warden.ApprovalPending}
	if *all {
		f.Status = ""
	}
	list, err := st.Approvals(ctx, f)
	if err != nil {
		return cmdError(env, "approvals ls", err)
	}
	if *ids {
		for i := len(list) - 1; i >= 0; i-- {
			fmt.Fprintln(env.Stdout, list[i].ID)
		}
		return ExitOK
	}
	if *asJSON {
		writeJSON(env.Stdout, session.ShownApprovals(list, life), true)
		return ExitOK
	}
	printApprovals(env, list, life)
	return ExitOK
}

func printApprovals(env *Env, list []warden.Approval, life time.Duration) {
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, "no approvals waiting")
		return
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tAGE\tEXPIRES IN\tSESSION\tROLE\tCALL\tWHY")
	for _, a := range list {
		status := a.Status
		if a.Scope != "" {
			status += " " + a.Scope
		}
		why := a.Reason
		if a.Rule != "" {
			why = a.Rule + ": " + why
		}
		if a.Consumed {
			status += " delivered"
		}
		expires := "expired (warden purge drops it)"
		if left := time.Until(session.ApprovalExpiry(a, life)); left > 0 {
			expires = session.FormatDuration(left.Round(time.Minute))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, status, age(a.CreatedAt), expires, dash(a.Session),
			dash(a.Role), a.Summary, oneLine(why, 80))
	}
	tw.Flush()
}

func age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Hour).String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n-3] + "..."
	}
	return s
}
