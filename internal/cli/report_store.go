package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/reportgate"
)

// The `warden report` subcommands on the store: ls, show, instructions,
// complete.

func runReportList(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "ls", "[--status pending|final|failed] [--json] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	status := fs.String("status", "", "only reports with this status: pending, final or failed")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := parseReportFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return cmdError(env, "report ls", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "report ls", err)
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
	fs := reportFlags(env, "show", "SESSION [--json] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return cmdError(env, "report show", fmt.Errorf("want one session id, got %d arguments", len(pos)))
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "report show", err)
	}
	defer st.Close()
	r, err := st.Report(ctx, pos[0])
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
	return ExitOK
}

func runReportInstructions(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "instructions", "[--session S] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "the session whose nonce to use (drawn and stored the first time)")
	if code := parseReportFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return cmdError(env, "report instructions", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	pol, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "report instructions", err)
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
	if err := reportgate.RunCompleteWith(ctx, pol, st, *sess, reportgate.CompleteOptions{Transcript: *transcript, Logger: logger}); err != nil {
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
