package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

// runApprovalsApprove is `warden approvals approve ID --once|--session|--always`.
func runApprovalsApprove(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	once := fs.Bool("once", false, "let this one call through")
	sess := fs.Bool("session", false, "allow the same call for the rest of its session")
	always := fs.Bool("always", false, "allow the same call from now on (a grant)")
	pattern := fs.String("pattern", "", "--session/--always: widen the grant to this command or path glob")
	expires := fs.String("expires", "", "--session/--always: the grant ends after this long (90m, 8h, 7d)")
	uses := fs.Int("uses", 0, "--session/--always: the grant ends after this many calls")
	message := fs.String("message", "", "a note")
	anyHost := fs.Bool("any-host", false, "--session/--always: grant the call's kind (shell, write, ...), so the same call from any host's tool of that kind is covered")
	pos, pol, st, code := sf.parseOpen(ctx, env, "approvals", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	life := session.ApprovalLifetime(pol)
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
		var err error
		if exp, err = policy.ParseDuration(*expires); err != nil || exp <= 0 {
			return cmdError(env, "approvals approve", fmt.Errorf("--expires %q: want a positive duration such as 90m, 8h or 7d", *expires))
		}
	}
	if *uses < 0 {
		return cmdError(env, "approvals approve", fmt.Errorf("--uses %d: must not be negative", *uses))
	}
	kind := ""
	if *anyHost {
		ap, err := st.Approval(ctx, pos[0])
		if err != nil {
			return cmdError(env, "approvals approve", err)
		}
		kind = pol.KindOf(ap.Tool)
	}
	a, err := session.Approve(ctx, st, pos[0], session.Answer{Scope: scope, Pattern: *pattern, Expires: exp,
		Uses: *uses, Message: *message, By: whoami(), Kind: kind}, time.Now())
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
}

// runApprovalsReject is `warden approvals reject ID --message M`.
func runApprovalsReject(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	message := fs.String("message", "", "what the model is told (required)")
	pos, pol, st, code := sf.parseOpen(ctx, env, "approvals", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	life := session.ApprovalLifetime(pol)
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
