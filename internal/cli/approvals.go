package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

const approvalsUsage = `ls [--all] [--json | --ids]
       warden approvals approve ID (--once | --session | --always) [--pattern P] [--expires D] [--uses N] [--message M]
       warden approvals reject ID --message M`

func runApprovals(ctx context.Context, env *Env) int {
	sub, args, code := subcommand(env, "approvals", approvalsUsage)
	if code >= 0 {
		return code
	}
	fs := newFlags(env, "approvals "+sub, approvalsUsage)
	sf := addStoreFlags(fs)
	all := fs.Bool("all", false, "ls: also answered approvals")
	asJSON := fs.Bool("json", false, "ls: print JSON")
	ids := fs.Bool("ids", false, "ls: print only the ids, newest first, one a line (ID=$(warden approvals ls --ids | head -1))")
	once := fs.Bool("once", false, "approve: let this one call through")
	sess := fs.Bool("session", false, "approve: allow the same call for the rest of its session")
	always := fs.Bool("always", false, "approve: allow the same call from now on (a grant)")
	pattern := fs.String("pattern", "", "approve --session/--always: widen the grant to this command or path glob")
	expires := fs.String("expires", "", "approve --session/--always: the grant ends after this long (90m, 8h, 7d)")
	uses := fs.Int("uses", 0, "approve --session/--always: the grant ends after this many calls")
	message := fs.String("message", "", "reject: what the model is told (required); approve: a note")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	pol, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "approvals", err)
	}
	life := session.ApprovalLifetime(pol)
	defer st.Close()
	switch sub {
	case "ls", "list":
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
			if list == nil {
				list = []warden.Approval{}
			}
			for i := range list {
				list[i].ExpiresAt = session.ApprovalExpiry(list[i], life)
				parts := make([]warden.GrantPart, len(list[i].Parts))
				for j, p := range list[i].Parts {
					parts[j] = warden.GrantPart{Subject: p.Subject, Value: warden.RedactString(p.Value)}
				}
				list[i].Parts = parts
			}
			writeJSON(env.Stdout, list, true)
			return ExitOK
		}
		printApprovals(env, list, life)
		return ExitOK
	case "approve":
		if len(pos) != 1 {
			return cmdError(env, "approvals approve", errors.New("want exactly one approval id"))
		}
		scope := ""
		n := 0
		for s, set := range map[string]bool{warden.ScopeOnce: *once, warden.ScopeSession: *sess, warden.ScopeAlways: *always} {
			if set {
				scope = s
				n++
			}
		}
		if n != 1 {
			return cmdError(env, "approvals approve", errors.New("give exactly one of --once, --session, --always"))
		}
		var exp time.Duration
		if *expires != "" {
			if exp, err = policy.ParseDuration(*expires); err != nil || exp <= 0 {
				return cmdError(env, "approvals approve", fmt.Errorf("--expires %q: want a positive duration such as 90m, 8h or 7d", *expires))
			}
		}
		if *uses < 0 {
			return cmdError(env, "approvals approve", fmt.Errorf("--uses %d: must not be negative", *uses))
		}
		a, err := session.Approve(ctx, st, pos[0], session.Answer{Scope: scope, Pattern: *pattern, Expires: exp,
			Uses: *uses, Message: *message, By: whoami()}, time.Now())
		if err != nil {
			return cmdError(env, "approvals approve", err)
		}
		fmt.Fprintf(env.Stdout, "approved %s (%s): %s\n", a.ID, a.Scope, a.Summary)
		within := "within " + session.FormatDuration(life)
		switch a.Scope {
		case warden.ScopeOnce:
			fmt.Fprintf(env.Stdout, "The next identical call, from any session of this project %s, goes through once; later ones ask again.\n", within)
		case warden.ScopeSession:
			fmt.Fprintf(env.Stdout, "Covers session %s, the session that asked: its identical calls are allowed until it ends.\n"+
				"Hosts that start a new session for every run (claude -p, codex exec, gemini -p, opencode run): the next identical\n"+
				"call from a new session (%s) goes through once; later calls in that session ask again.\n", dash(a.Session), within)
		case warden.ScopeAlways:
			fmt.Fprintln(env.Stdout, "Identical calls are allowed from now on, in every session; `warden grants ls` lists the grant and `warden grants revoke ID` ends it.")
		}
		if len(a.Grants) > 0 {
			grants, err := st.Grants(ctx, warden.GrantFilter{All: true})
			if err != nil {
				return cmdError(env, "approvals approve", err)
			}
			for _, g := range grants {
				for _, id := range a.Grants {
					if g.ID == id {
						fmt.Fprintf(env.Stdout, "grant %s: %s\n", g.ID, describeGrant(g))
					}
				}
			}
		}
		return ExitOK
	case "reject":
		if len(pos) != 1 {
			return cmdError(env, "approvals reject", errors.New("want exactly one approval id"))
		}
		a, err := session.Reject(ctx, st, pos[0], *message, whoami())
		if err != nil {
			return cmdError(env, "approvals reject", err)
		}
		fmt.Fprintf(env.Stdout, "rejected %s: %s\nThe next identical call, from any session of this project within %s, is denied, and the model is told: %s\n",
			a.ID, a.Summary, session.FormatDuration(life), a.Message)
		return ExitOK
	}
	return cmdError(env, "approvals", fmt.Errorf("unknown subcommand %q (want ls, approve or reject)", sub))
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
