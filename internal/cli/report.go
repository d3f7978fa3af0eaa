package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/warden-run/warden/report"
)

// exitNotFinal is `report check`'s exit code when the session could not
// finalize.
const exitNotFinal = 2

const reportUsage = `Usage:
  warden report ls [--status pending|final|failed] [--json]
  warden report show SESSION [--json]
  warden report instructions [--session S]
  warden report complete --session S [--transcript FILE]
  warden report spawns [--session S] [--json]
  warden report cache ls | show KEY | clear KEY|--expired|--all | key REQUEST
  warden report check [--session S | --nonce N] [--plugins FILE[,FILE...]] [--dir DIR] [--prefix P] [--run-on-complete] [RESPONSE...]
  warden report filter --nonce N [--prefix P]
  (ls, show, instructions, complete, spawns and check --session also take --policy FILE and --store URL)

ls lists the sessions' reports (the policy's report section holds agents to
them at the end of each turn); show prints one, with its final report and
each plugin's metadata.

instructions prints the text a model needs to end its work with a valid
report, for agents wired by hand: with --session, with that session's nonce
(drawn and stored the first time); without, with a fresh nonce, which nothing
stores.

complete hands a session's final report to the plugins' on-complete commands,
once (the hook starts it on its own when a report becomes final), with the
session's request, agent and, from the host's transcript, its last messages.
It starts the follow-up sessions the plugins ask for, waits for them and
records how they ended.

spawns lists the follow-up sessions plugins asked for (of session S, or all):
the parent, the host, the session the host started, and the outcome; a
refused request says why.

cache manages the response cache (report.cache): see warden report cache help.

check reads a model's responses (one file per turn, or stdin) and prints the
final report, each plugin's metadata, each validation result and the retry
feedback the model would get. With --session it checks against the nonce
warden drew for that session and the policy's plugins. Without --session or
--nonce it takes the nonce from the first tag in the input: the model's own
output, which proves nothing about the nonce it was given; use --session for
a session warden ran. It exits 0 when the session is final, 2 when it is not,
1 on bad input or configuration.

filter streams stdin to stdout, passing on only the final report's content.
`

func runReport(ctx context.Context, env *Env) int {
	if len(env.Args) == 0 || env.Args[0] == "-h" || env.Args[0] == "--help" || env.Args[0] == "help" {
		io.WriteString(env.Stdout, reportUsage)
		if len(env.Args) == 0 {
			return ExitError
		}
		return ExitOK
	}
	sub, args := env.Args[0], env.Args[1:]
	switch sub {
	case "ls":
		return runReportList(ctx, env, args)
	case "show":
		return runReportShow(ctx, env, args)
	case "instructions":
		return runReportInstructions(ctx, env, args)
	case "complete":
		return runReportComplete(ctx, env, args)
	case "spawns":
		return runReportSpawns(ctx, env, args)
	case "check":
		return runReportCheck(ctx, env, args)
	case "filter":
		return runReportFilter(env, args)
	case "cache":
		return runReportCache(ctx, env, args)
	}
	fmt.Fprintf(env.Stderr, "warden report: unknown subcommand %q\n\n%s", sub, reportUsage)
	return ExitError
}

// listFlag collects comma-separated values; the flag may repeat.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func reportFlags(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("warden report "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: warden report %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

func parseReportFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitError
	}
	return -1
}

type turnInput struct {
	name string
	data []byte
}

func runReportCheck(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "check", "[--session S | --nonce N] [--plugins FILE[,FILE...]] [--dir DIR] [--prefix P] [--run-on-complete] [RESPONSE...]")
	var plugins listFlag
	fs.Var(&plugins, "plugins", "plugin files (YAML or JSON), comma-separated, relative to --dir (default with --session: the policy's)")
	dir := fs.String("dir", ".", "folder the plugin paths are relative to (the agent file's folder)")
	nonce := fs.String("nonce", "", "the session's nonce (default: the --session's; without either, taken from the first tag in the input, which is the model's own output)")
	sess := fs.String("session", "", "check against the nonce warden drew for this session, and the policy's plugins")
	sf := addStoreFlags(fs)
	prefix := fs.String("prefix", report.DefaultPrefix, "tag prefix")
	runHooks := fs.Bool("run-on-complete", false, "when the session is final, run the plugins' on-complete commands and wait for them")
	if code := parseReportFlags(fs, args); code >= 0 {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "warden report check: "+format+"\n", a...)
		return ExitError
	}

	var files report.PluginFiles
	var err error
	if *sess != "" {
		if *nonce != "" {
			return fail("give --session or --nonce, not both")
		}
		pol, st, err := sf.open(ctx)
		if err != nil {
			return fail("%v", err)
		}
		r, err := st.Report(ctx, *sess)
		st.Close()
		if err != nil {
			return fail("%v (the session has no nonce: it was never given the report instructions)", err)
		}
		*nonce = r.Nonce
		if len(plugins) == 0 && pol.Report != nil {
			files = pol.Report.Files
		}
	}
	if files == nil {
		if files, err = report.LoadPlugins(*dir, plugins); err != nil {
			return fail("%v", err)
		}
	}
	var inputs []turnInput
	names := fs.Args()
	if len(names) == 0 {
		names = []string{"-"}
	}
	for _, n := range names {
		var data []byte
		if n == "-" {
			data, err = io.ReadAll(env.Stdin)
			n = "stdin"
		} else {
			data, err = os.ReadFile(n)
		}
		if err != nil {
			return fail("read response %s: %v", n, err)
		}
		inputs = append(inputs, turnInput{n, data})
	}
	if *nonce == "" {
		for _, in := range inputs {
			if t, ok := report.DetectTags(*prefix, in.data); ok {
				*nonce = t.Nonce
				break
			}
		}
		if *nonce == "" {
			return fail("no --nonce given and no <%s-NONCE-FINAL> or <%s-NONCE-META> tag found in %s; pass --session or --nonce", *prefix, *prefix, inputs[0].name)
		}
		fmt.Fprintf(env.Stderr, "warden report check: nonce %s taken from the input (the model's own output); pass --session to check against the nonce warden gave the session\n", *nonce)
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := report.NewSession(&report.Config{Prefix: *prefix, Nonce: *nonce, Plugins: files.Factories(), Logger: logger})
	if err != nil {
		return fail("%v", err)
	}

	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "nonce: %s\n", *nonce)
	if len(files) == 0 {
		fmt.Fprintf(w, "plugins: none\n")
	}
	for _, f := range files {
		fmt.Fprintf(w, "plugin %q: %s\n", f.Name, f.File)
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "plugin hash: %s\n", files.Hash())
	}
	var last *report.Turn
	for i, in := range inputs {
		if last != nil && last.Done {
			fmt.Fprintf(w, "\n(the session was final after turn %d; %d more response(s) not checked)\n", last.Number, len(inputs)-i)
			break
		}
		last = s.Turn(in.data)
		printTurn(w, in.name, last)
		if !last.Done {
			fmt.Fprintf(w, "\nretry feedback (what the model would be sent):\n\n%s", last.Feedback)
		}
	}
	if !last.Done {
		fmt.Fprintf(w, "\nresult: NOT FINAL after %d turn(s)\n", last.Number)
		return exitNotFinal
	}
	fmt.Fprintf(w, "\nresult: FINAL after %d turn(s)\n", last.Number)
	if *runHooks {
		w.Flush()
		pend, err := s.Complete(ctx, false)
		if err != nil {
			return fail("%v", err)
		}
		if errs := pend.Wait(); len(errs) > 0 {
			fmt.Fprintf(w, "on-complete: %d failed (see the warnings on stderr); the session is final regardless\n", len(errs))
		} else {
			fmt.Fprintf(w, "on-complete: done, no failures\n")
		}
	}
	return ExitOK
}

func printTurn(w io.Writer, name string, t *report.Turn) {
	fmt.Fprintf(w, "\n== turn %d: %s\n", t.Number, name)
	r := t.Response
	switch {
	case t.Final == report.FinalKept:
		fmt.Fprintf(w, "final report: kept from an earlier turn")
		if r.Final != nil {
			fmt.Fprintf(w, " (the block on line %d is ignored)", r.Final.Line)
		}
		fmt.Fprintln(w)
	case r.Final == nil:
		fmt.Fprintf(w, "final report: %s\n", t.Final)
	default:
		fmt.Fprintf(w, "final report: %s (line %d)\n", t.Final, r.Final.Line)
		printContent(w, r.Final.Content)
	}
	if r.IgnoredFinals > 0 {
		fmt.Fprintf(w, "later final report blocks ignored: %d\n", r.IgnoredFinals)
	}
	for _, c := range t.Metas {
		fmt.Fprintf(w, "meta %q: %s", c.Plugin, c.Status)
		if c.Block != nil {
			fmt.Fprintf(w, " (line %d)", c.Block.Line)
		}
		fmt.Fprintln(w)
		for _, d := range c.Details {
			fmt.Fprintf(w, "  %s\n", d)
		}
		switch {
		case c.Status == report.MetaValid:
			fmt.Fprintf(w, "  %s\n", c.Value)
		case c.Block != nil && c.Status != report.MetaKept:
			printContent(w, c.Block.Content)
		}
	}
	for _, u := range t.Unknown {
		if u.HasPlugin {
			fmt.Fprintf(w, "meta block on line %d: plugin %q is not configured; ignored\n", u.Line, u.Plugin)
		} else {
			fmt.Fprintf(w, "meta block on line %d: no plugin attribute; ignored\n", u.Line)
		}
	}
}

// printContent shows a block's content, each line indented with "  | ".
func printContent(w io.Writer, s string) {
	s = strings.Trim(s, "\n")
	for _, line := range strings.Split(s, "\n") {
		fmt.Fprintf(w, "  | %s\n", line)
	}
}

func runReportFilter(env *Env, args []string) int {
	fs := reportFlags(env, "filter", "--nonce N [--prefix P] < response > final")
	nonce := fs.String("nonce", "", "the session's nonce (required)")
	prefix := fs.String("prefix", report.DefaultPrefix, "tag prefix")
	if code := parseReportFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "warden report filter: unexpected argument %q (the response comes on stdin)\n", fs.Arg(0))
		return ExitError
	}
	tags, err := report.ParseTags(*prefix, *nonce)
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden report filter: %v (pass --nonce with the session's nonce)\n", err)
		return ExitError
	}
	f := report.NewFilter(env.Stdout, tags)
	buf := make([]byte, 32*1024)
	for {
		n, err := env.Stdin.Read(buf)
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				fmt.Fprintf(env.Stderr, "warden report filter: write: %v\n", werr)
				return ExitError
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "warden report filter: read stdin: %v\n", err)
			return ExitError
		}
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "warden report filter: write: %v\n", err)
		return ExitError
	}
	return ExitOK
}
