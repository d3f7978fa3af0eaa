package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/remote"
	"github.com/warden-run/warden/spawn"
)

// hookWork, when set (by a test), counts the hook's decisions still
// running after it answered (handler.Runtime.Work).
var hookWork *sync.WaitGroup

func runHook(ctx context.Context, env *Env) int {
	rt := handler.Local()
	rt.Work = hookWork
	// warden-hook gives the id of a call hookd may have taken already.
	rt.CallID = os.Getenv(hookd.CallIDEnv)
	// A follow-up session warden started (package spawn) says so.
	rt.Spawn = os.Getenv(spawn.Env)
	return runHookWith(ctx, env, rt, true)
}

// runHookWith is `warden hook` in the given runtime: its flags and its
// printing; package hook/handler answers the event. forward lets a --serve
// flag or $WARDEN_SERVE_URL send the event to a team's service (not
// inside hookd, whose client did that already).
func runHookWith(ctx context.Context, env *Env, rt *handler.Runtime, forward bool) int {
	var f hook.Flags
	fs := f.FlagSet(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: warden hook claude|codex|gemini|opencode [--policy FILE]\n\n"+
			"Reads the host's hook JSON on stdin and answers in the host's JSON on stdout.\n"+
			"`warden init HOST` wires it into the host's configuration.")
		fs.PrintDefaults()
	}
	if len(env.Args) == 0 {
		fs.Usage()
		return ExitError
	}
	if isHelp(env.Args[0]) {
		fs.Usage()
		return ExitOK
	}
	// The input first (unless help is asked for): the event it names
	// decides how a failure is said.
	var data []byte
	var inErr error
	if !slices.ContainsFunc(env.Args[1:], isHelp) {
		// Within the call's deadline: a host that never closes stdin gets a
		// deny, not a hook that waits until the host gives up on it (which
		// three hosts take for "no objection").
		data, inErr = hookd.ReadInput(env.Stdin, hook.CallDeadline(env.Args[1:]))
		if inErr == nil {
			inErr = warden.CheckInput(data)
		}
	}
	event := hook.EventName(data)
	h, ok := host.Lookup(env.Args[0])
	if !ok {
		// Answer in Claude Code's shape (Codex and Gemini CLI read it too)
		// and exit 2, which every host reads as "block".
		return printReply(env, handler.Fatal(host.Default, event, fmt.Errorf("warden hook: unknown host %q (want %s)", env.Args[0], host.Want())))
	}
	if err := fs.Parse(env.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		// A mistake in the hook's command line must not turn into "no
		// objection": answer deny.
		return printReply(env, handler.Fatal(h, event, fmt.Errorf("warden hook %s: bad command line %q: %v", env.Args[0], env.Args[1:], err)))
	}
	if inErr != nil {
		return printReply(env, handler.Fatal(h, event, fmt.Errorf("hook input from %s: %w", h.Name(), inErr)))
	}
	if url := hookd.ServeURL(env.Args[1:]); url != "" && forward {
		// Not in hookd or warden serve (they decide here): the team's
		// service decides and audits this event.
		return remote.RunHook(url, hookd.ServeToken, env.Args, data, rt.CallID, env.Stdout, env.Stderr)
	}
	return printReply(env, handler.Run(ctx, rt, h, data, f))
}

// printReply prints a hook's answer and returns its exit code.
func printReply(env *Env, r handler.Reply) int {
	env.Stdout.Write(r.Stdout)
	if r.Stderr != "" {
		fmt.Fprint(env.Stderr, r.Stderr)
	}
	return r.Code
}
