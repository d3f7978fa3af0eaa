package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

const grantsUsage = `ls [--all] [--json | --ids] | revoke ID...
       warden grants add TOOL (--command CMD | --path FILE | --pattern GLOB | --all) [--role R] [--session S] [--expires D] [--uses N]

grants add pre-approves calls: TOOL is the host's tool name (Bash for Claude Code and Codex,
run_shell_command for Gemini CLI, bash for OpenCode; Write, Edit, write_file, ...), or a kind
(shell, write, edit, ...) for the tool of that kind on every host. --command grants exactly
that command line's simple commands, --path exactly that file, --pattern a command glob (shell
tools) or a path glob (file tools), --all every call of a tool without commands (gmail.send).
A grant turns an ask into an allow; it never overrides a deny, a protected path or a role's
tool list. A TOOL that is neither a tool warden knows nor a kind is refused, unless an agent
called it (the audit trail has a call of it).`

// grantsSubcommands are the subcommands of `warden grants`, each with its
// own flags.
var grantsSubcommands = map[string]subcommandFunc{
	"ls":     runGrantsList,
	"list":   runGrantsList,
	"add":    runGrantsAdd,
	"revoke": runGrantsRevoke,
	"rm":     runGrantsRevoke,
}

func runGrants(ctx context.Context, env *Env) int {
	return runSubcommand(ctx, env, "grants", grantsUsage, "ls, add or revoke", grantsSubcommands)
}

// runGrantsList is `warden grants ls`.
func runGrantsList(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	all := fs.Bool("all", false, "also revoked, expired and used-up grants")
	asJSON := fs.Bool("json", false, "print JSON")
	ids := fs.Bool("ids", false, "print only the ids, newest first, one a line")
	_, _, st, code := sf.parseOpen(ctx, env, "grants", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	list, err := st.Grants(ctx, warden.GrantFilter{All: *all})
	if err != nil {
		return cmdError(env, "grants ls", err)
	}
	if *ids {
		for i := len(list) - 1; i >= 0; i-- {
			fmt.Fprintln(env.Stdout, list[i].ID)
		}
		return ExitOK
	}
	if *asJSON {
		writeJSON(env.Stdout, session.ShownGrants(list), true)
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
}

// runGrantsAdd is `warden grants add TOOL ...`: a human pre-approves calls.
func runGrantsAdd(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	command := fs.String("command", "", "the command line to allow, exactly")
	path := fs.String("path", "", "the file to allow, exactly")
	pattern := fs.String("pattern", "", "a command glob (\"git push origin *\") or a path glob (\"src/**\")")
	all := fs.Bool("all", false, "every call of the tool (for a tool without paths or commands, such as gmail.send)")
	role := fs.String("role", "", "the role the grant is for (default: calls without a role)")
	sess := fs.String("session", "", "only this session")
	expires := fs.String("expires", "", "the grant ends after this long (90m, 8h, 7d)")
	uses := fs.Int("uses", 0, "the grant ends after this many calls")
	pos, pol, st, code := sf.parseOpen(ctx, env, "grants", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	if len(pos) != 1 {
		return cmdError(env, "grants add", errors.New("want exactly one TOOL (the host's tool name: Bash, run_shell_command, bash, Write, ...; or a kind, shell, write, ..., for the tool of that kind on every host)"))
	}
	spec := session.GrantSpec{Tool: pos[0], Command: *command, Path: *path, Pattern: *pattern, All: *all,
		Role: *role, Session: *sess, Expires: *expires, Uses: *uses, By: whoami()}
	gpol, err := calledTool(ctx, pol, st, pos[0])
	if err != nil {
		return cmdError(env, "grants add", err)
	}
	grants, err := spec.Grants(gpol, st.Now())
	if err != nil {
		return cmdError(env, "grants add", err)
	}
	for _, g := range grants {
		g, err := st.AddGrant(ctx, g)
		if err != nil {
			return cmdError(env, "grants add", err)
		}
		fmt.Fprintf(env.Stdout, "grant %s: %s\n", g.ID, describeGrant(g))
	}
	return ExitOK
}

// runGrantsRevoke is `warden grants revoke ID...`.
func runGrantsRevoke(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	pos, _, st, code := sf.parseOpen(ctx, env, "grants", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	if len(pos) == 0 {
		return cmdError(env, "grants revoke", errors.New("want one or more grant ids"))
	}
	code = ExitOK
	for _, id := range pos {
		if err := st.RevokeGrant(ctx, id); err != nil {
			code = cmdError(env, "grants revoke", err)
			continue
		}
		fmt.Fprintf(env.Stdout, "revoked %s\n", id)
	}
	return code
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

// calledTool returns the policy to make a grant for tool under. A tool
// that neither the policy nor the built-in table names, but that an agent
// called (the audit trail has a record of it: seed 004's gmail.delete,
// asked for and approved forever), is known all the same: the policy is
// copied with the tool under tools:, with the kind every decision gives
// it (KindOf: other). A name no agent called stays refused, so that a
// slip (Bassh) is not stored as a grant that matches nothing.
func calledTool(ctx context.Context, pol *policy.Policy, st warden.Store, tool string) (*policy.Policy, error) {
	err := pol.ToolName(tool)
	if err == nil {
		return pol, nil
	}
	recs, aerr := st.Audit(ctx, warden.AuditFilter{Tool: tool, Limit: 1})
	if aerr != nil {
		return nil, aerr
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w (no agent has called %s here either)", err, tool)
	}
	cp := *pol
	cp.Tools = maps.Clone(pol.Tools)
	if cp.Tools == nil {
		cp.Tools = map[string]string{}
	}
	cp.Tools[tool] = pol.KindOf(tool)
	return &cp, nil
}
