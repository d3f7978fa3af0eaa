package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/report"
	"github.com/warden-run/warden/reportgate"
	"github.com/warden-run/warden/spawn"
)

// The `warden report` subcommands on the store: ls, show, instructions,
// complete.

func runReportList(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "ls", "[--status pending|final|failed] [--json] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	status := fs.String("status", "", "only reports with this status: pending, final or failed")
	asJSON := fs.Bool("json", false, "print JSON")
	_, st, code := sf.openNoArgs(ctx, env, fs, args, "report ls")
	if code >= 0 {
		return code
	}
	defer st.Close()
	rs, err := st.Reports(ctx, warden.ReportFilter{Status: *status})
	if err != nil {
		return cmdError(env, "report ls", err)
	}
	if *asJSON {
		return printJSON(env, rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(env.Stdout, "no reports")
		return ExitOK
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tSTATUS\tTURNS\tRETRIES\tPLUGINS\tUPDATED")
	for _, r := range rs {
		names := slices.Sorted(maps.Keys(r.Metas))
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", r.Session, r.Status, r.Turns, r.Retries, dash(strings.Join(names, ",")), r.UpdatedAt.Local().Format(time.DateTime))
	}
	w.Flush()
	return ExitOK
}

func runReportShow(ctx context.Context, env *Env, args []string) int {
	id, st, asJSON, code := openOne(ctx, env, args, "show", "SESSION", "session id")
	if code >= 0 {
		return code
	}
	defer st.Close()
	r, err := st.Report(ctx, id)
	if err != nil {
		return cmdError(env, "report show", err)
	}
	if *asJSON {
		return printJSON(env, r)
	}
	fmt.Fprintf(env.Stdout, "session:   %s\nstatus:    %s\nnonce:     %s\nturns:     %d (retries %d)\nupdated:   %s\n",
		r.Session, r.Status, r.Nonce, r.Turns, r.Retries, r.UpdatedAt.Local().Format(time.DateTime))
	if r.Status == warden.ReportFinal {
		fmt.Fprintf(env.Stdout, "completed: %v (on-complete commands started)\n", r.Completed)
	}
	if r.FinalReport != "" {
		fmt.Fprintln(env.Stdout, "\nfinal report:")
		printContent(env.Stdout, r.FinalReport)
	}
	for _, n := range slices.Sorted(maps.Keys(r.Metas)) {
		fmt.Fprintf(env.Stdout, "\nmetadata %q:\n  %s\n", n, r.Metas[n])
	}
	if r.Problem != "" && r.Status != warden.ReportFinal {
		fmt.Fprintln(env.Stdout, "\nproblem (the last retry text):")
		printContent(env.Stdout, r.Problem)
	}
	spawns, err := spawn.List(ctx, st, r.Session)
	if err != nil {
		return cmdError(env, "report show", err)
	}
	if len(spawns) > 0 {
		fmt.Fprintln(env.Stdout, "\nfollow-up sessions:")
		printSpawns(ctx, env, st, spawns)
	}
	return ExitOK
}

// runReportSpawns is `warden report spawns`.
func runReportSpawns(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "spawns", "[--session S] [--json] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "only the follow-ups of this session")
	asJSON := fs.Bool("json", false, "print JSON")
	_, st, code := sf.openNoArgs(ctx, env, fs, args, "report spawns")
	if code >= 0 {
		return code
	}
	defer st.Close()
	list, err := spawn.List(ctx, st, *sess)
	if err != nil {
		return cmdError(env, "report spawns", err)
	}
	if *asJSON {
		if list == nil {
			list = []spawn.Spawn{}
		}
		return printJSON(env, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, "no follow-up sessions")
		return ExitOK
	}
	printSpawns(ctx, env, st, list)
	return ExitOK
}

// printSpawns lists follow-up sessions: their parent, host, the session
// the host started with its status, and the outcome.
func printSpawns(ctx context.Context, env *Env, st warden.SessionStore, list []spawn.Spawn) {
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  SPAWN\tPARENT\tHOST\tROLE\tSESSION\tOUTCOME\tSTARTED")
	for _, s := range list {
		child := dash(s.Child)
		if s.Child != "" {
			if c, err := st.Session(ctx, s.Child); err == nil {
				child += " (" + c.Status + ")"
			}
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, dash(s.Parent), s.Host, dash(s.Role), child,
			oneLine(s.Outcome(), 100), s.Time.Local().Format(time.DateTime))
	}
	w.Flush()
}

func runReportInstructions(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "instructions", "[--session S] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "the session whose nonce to use (drawn and stored the first time)")
	pol, st, code := sf.openNoArgs(ctx, env, fs, args, "report instructions")
	if code >= 0 {
		return code
	}
	defer st.Close()
	text, err := reportgate.HandInstructions(ctx, pol, st, *sess)
	if err != nil {
		return cmdError(env, "report instructions", err)
	}
	fmt.Fprint(env.Stdout, text)
	return ExitOK
}

func runReportComplete(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "complete", "--session S [--transcript FILE] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "the session whose final report to hand over (required)")
	transcript := fs.String("transcript", "", "the host's transcript of the session, for the completion's messages")
	if code := parseReportFlags(fs, args); code >= 0 {
		return code
	}
	if *sess == "" {
		return cmdError(env, "report complete", fmt.Errorf("--session is required"))
	}
	pol, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "report complete", err)
	}
	defer st.Close()
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The plugins may ask for follow-up sessions: this process starts
	// them, waits for them and records how they ended (package spawn).
	runner := &spawn.Runner{Policy: pol, Store: st, Logger: logger}
	err = reportgate.RunCompleteWith(report.WithSpawner(ctx, runner.Spawner()), pol, st, *sess, reportgate.CompleteOptions{Transcript: *transcript, Logger: logger})
	runner.Invalid(ctx, *sess, err)
	if werr := runner.Wait(ctx); err == nil {
		err = werr
	}
	if err != nil {
		return cmdError(env, "report complete", err)
	}
	return ExitOK
}

func printJSON(env *Env, v any) int {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(env.Stderr, "warden report: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// openOne parses the flags of a report subcommand that takes one
// argument (what, named arg in its usage), --json and the store flags,
// and opens the store. code >= 0 is the exit code to return (the store is
// then not open).
func openOne(ctx context.Context, env *Env, args []string, sub, arg, what string) (string, warden.Store, *bool, int) {
	fs := reportFlags(env, sub, arg+" [--json] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return "", nil, nil, code
	}
	if len(pos) != 1 {
		return "", nil, nil, cmdError(env, "report "+sub, fmt.Errorf("want one %s, got %d arguments", what, len(pos)))
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return "", nil, nil, cmdError(env, "report "+sub, err)
	}
	return pos[0], st, asJSON, -1
}

// openNoArgs parses the flags of a report subcommand that takes no
// argument (parseReportFlags) and opens the store. code >= 0 is the exit
// code to return (the store is then not open).
func (sf storeFlags) openNoArgs(ctx context.Context, env *Env, fs *flag.FlagSet, args []string, cmd string) (*policy.Policy, warden.Store, int) {
	if code := parseReportFlags(fs, args); code >= 0 {
		return nil, nil, code
	}
	if fs.NArg() > 0 {
		return nil, nil, cmdError(env, cmd, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	pol, st, err := sf.open(ctx)
	if err != nil {
		return nil, nil, cmdError(env, cmd, err)
	}
	return pol, st, -1
}
