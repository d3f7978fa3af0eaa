package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
)

func init() {
	register("grants", "list and revoke the standing approvals humans gave (ls, revoke)", runGrants)
}

func runGrants(ctx context.Context, env *Env) int {
	const usage = "ls [--all] [--json] | revoke ID..."
	sub, args, code := subcommand(env, "grants", usage)
	if code >= 0 {
		return code
	}
	fs := newFlags(env, "grants "+sub, usage)
	sf := addStoreFlags(fs)
	all := fs.Bool("all", false, "ls: also revoked, expired and used-up grants")
	asJSON := fs.Bool("json", false, "ls: print JSON")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "grants", err)
	}
	defer st.Close()
	switch sub {
	case "ls", "list":
		list, err := st.Grants(ctx, warden.GrantFilter{All: *all})
		if err != nil {
			return cmdError(env, "grants ls", err)
		}
		if *asJSON {
			if list == nil {
				list = []warden.Grant{}
			}
			for i := range list {
				list[i].Value, list[i].Pattern = warden.RedactString(list[i].Value), warden.RedactString(list[i].Pattern)
			}
			writeJSON(env.Stdout, list, true)
			return ExitOK
		}
		if len(list) == 0 {
			fmt.Fprintln(env.Stdout, "no grants")
			return ExitOK
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTOOL\tROLE\tSESSION\tCOVERS\tUSES LEFT\tEXPIRES\tAPPROVAL")
		for _, g := range list {
			uses := "unlimited"
			if g.UsesLeft >= 0 {
				uses = fmt.Sprint(g.UsesLeft)
			}
			exp := "never"
			if !g.Expires.IsZero() {
				exp = g.Expires.Local().Format(time.DateTime)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.Tool, dash(g.Role), dash(g.Session),
				covers(g), uses, exp, dash(g.Approval))
		}
		tw.Flush()
		return ExitOK
	case "revoke", "rm":
		if len(pos) == 0 {
			return cmdError(env, "grants revoke", errors.New("want one or more grant ids"))
		}
		code := ExitOK
		for _, id := range pos {
			if err := st.RevokeGrant(ctx, id); err != nil {
				code = cmdError(env, "grants revoke", err)
				continue
			}
			fmt.Fprintf(env.Stdout, "revoked %s\n", id)
		}
		return code
	}
	return cmdError(env, "grants", fmt.Errorf("unknown subcommand %q (want ls or revoke)", sub))
}

// covers says what a grant allows, with secrets redacted.
func covers(g warden.Grant) string {
	if g.Pattern != "" {
		return g.Subject + " matching " + warden.RedactString(g.Pattern)
	}
	return g.Subject + " " + warden.RedactString(g.Value)
}

func describeGrant(g warden.Grant) string {
	s := fmt.Sprintf("%s %s", g.Tool, covers(g))
	if g.Role != "" {
		s += ", role " + g.Role
	}
	if g.Session != "" {
		s += ", session " + g.Session
	}
	if g.UsesLeft > 0 {
		s += fmt.Sprintf(", %d uses", g.UsesLeft)
	}
	if !g.Expires.IsZero() {
		s += ", until " + g.Expires.Local().Format(time.DateTime)
	}
	return s
}
