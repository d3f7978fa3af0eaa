package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// statefulDecider opens the session layer for `check --session/--store`:
// it returns a decide function that tracks the session, honours grants,
// records audit and approvals, and a closer. It is set by the session
// layer's wiring (stateful.go); nil means stateless only.
var statefulDecider func(ctx context.Context, env *Env, eng *engine.Engine, storeURL, session string, wait time.Duration) (decide func(context.Context, warden.ToolCall) (warden.Decision, error), closer func() error, err error)

// newFlags returns a flag set that reports errors to env.Stderr.
func newFlags(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("warden "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: warden %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses flags, mapping -h to exit 0 and errors to exit 1. It
// returns -1 when the command should go on.
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitError
	}
	return -1
}

// findPolicyHere finds the policy of the working folder as the hooks do
// (handler.FindPolicy): a folder whose policy is gone but whose store is
// still there is not governed by a parent's policy instead.
func findPolicyHere() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return handler.FindPolicy(wd)
}

// loadEngine finds, loads and compiles the policy, over the view of the
// workspace ws.
func loadEngine(policyPath string, ws engine.Workspace) (*engine.Engine, error) {
	if policyPath == "" {
		var err error
		if policyPath, err = findPolicyHere(); err != nil {
			return nil, err
		}
	}
	// A front end that decides: only with a whole, settled file.
	p, err := policy.LoadStable(policyPath)
	if err != nil {
		return nil, err
	}
	eng, err := engine.Compile(p, ws)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.File, err)
	}
	return eng, nil
}

func runCheck(ctx context.Context, env *Env) int {
	fs := newFlags(env, "check", "[--policy FILE] [--jsonl] [--session ID --store URL] < call.json")
	policyPath := fs.String("policy", "", "policy file (default: warden.yaml here or in the nearest parent folder)")
	jsonl := fs.Bool("jsonl", false, "read a stream of calls, one JSON object per line, and write one decision per line")
	session := fs.String("session", "", "session id: track the session in the store (first tool, depth, grants, audit)")
	store := fs.String("store", "", "store URL: a SQLite file path or postgres://... (default: .warden/ next to the policy)")
	wait := fs.Duration("wait", 0, "with a store: on ask, wait this long for a human's answer (warden approvals)")
	text := fs.Bool("text", false, "print the model-facing text instead of JSON")
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "warden check: unexpected argument %q (the call is read from stdin)\n", fs.Arg(0))
		return ExitError
	}
	fail := func(err error) int {
		if *text {
			return failText(env, "check", err)
		}
		return failClosed(env, "check", err)
	}
	if err := warden.CheckSessionID(*session); err != nil {
		return fail(fmt.Errorf("--session: %w", err))
	}
	ws := workspace.New()
	eng, err := loadEngine(*policyPath, ws)
	if err != nil {
		return fail(err)
	}
	decide := func(_ context.Context, c warden.ToolCall) (warden.Decision, error) {
		return eng.Decide(c, nil).Decision, nil
	}
	if *session != "" || *store != "" {
		if statefulDecider == nil {
			return fail(errors.New("--session and --store need the session store, which this build does not have"))
		}
		d, closer, err := statefulDecider(ctx, env, eng, *store, *session, *wait)
		if err != nil {
			return fail(err)
		}
		defer closer()
		decide = d
	}
	if *jsonl {
		// A stream decides many calls: the view is checked before each.
		one := decide
		decide = func(ctx context.Context, c warden.ToolCall) (warden.Decision, error) {
			ws.Refresh()
			return one(ctx, c)
		}
		return checkStream(ctx, env, decide)
	}
	data, err := warden.ReadInput(env.Stdin)
	if err != nil {
		return fail(fmt.Errorf("stdin: %w", err))
	}
	call, err := warden.ParseToolCall(data)
	if err != nil {
		return fail(fmt.Errorf("stdin: %w", err))
	}
	if *session != "" && call.Session == "" {
		call.Session = *session
	}
	if err := warden.CheckSessionID(call.Session); err != nil {
		return fail(fmt.Errorf("stdin: %w", err))
	}
	d, err := decide(ctx, call)
	if err != nil {
		return fail(err)
	}
	if *text {
		io.WriteString(env.Stdout, d.Text())
	} else {
		writeJSON(env.Stdout, d, true)
	}
	return exitFor(d)
}

// checkStream decides a stream of calls, one per line. A line that is not a
// valid call gives an error line and the stream goes on.
func checkStream(ctx context.Context, env *Env, decide func(context.Context, warden.ToolCall) (warden.Decision, error)) int {
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	code := ExitOK
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		call, err := warden.ParseToolCall([]byte(text))
		var d warden.Decision
		if err == nil {
			err = warden.CheckSessionID(call.Session)
		}
		if err == nil {
			d, err = decide(ctx, call)
		}
		if err != nil {
			code = ExitError
			writeJSON(out, errorLine{Line: line, Error: err.Error(), Decision: warden.FailClosed(err)}, false)
			fmt.Fprintf(env.Stderr, "warden check: stdin line %d: %v\n", line, err)
			continue
		}
		writeJSON(out, d, false)
		out.Flush()
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(env.Stderr, "warden check: stdin after line %d: %v\n", line, err)
		return ExitError
	}
	return code
}

// errorLine is the output line for an input line that could not be decided.
type errorLine struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
	warden.Decision
}

// failClosed reports an error on stderr and a deny on stdout: a failure
// never reads as an allow.
func failClosed(env *Env, cmd string, err error) int {
	fmt.Fprintf(env.Stderr, "warden %s: %v\n", cmd, err)
	writeJSON(env.Stdout, warden.FailClosed(err), true)
	return ExitError
}

// failText is failClosed for --text: the deny as the model-facing text.
func failText(env *Env, cmd string, err error) int {
	fmt.Fprintf(env.Stderr, "warden %s: %v\n", cmd, err)
	io.WriteString(env.Stdout, warden.FailClosed(err).Text())
	return ExitError
}

func exitFor(d warden.Decision) int {
	switch d.Decision {
	case warden.Allow:
		return ExitOK
	case warden.Ask:
		return ExitAsk
	}
	return ExitDeny
}

func writeJSON(w io.Writer, v any, indent bool) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	enc.Encode(v)
}
