package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/internal/hookd/server"
)

func runHookd(ctx context.Context, env *Env) int {
	fs := flag.NewFlagSet("hookd", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	socket := fs.String("socket", "", "Unix `socket` to serve (default $"+hookd.SocketEnv+", else $XDG_RUNTIME_DIR/warden/hookd.sock, else $TMPDIR/warden-UID/hookd.sock)")
	idle := fs.Duration("idle", server.Idle, "exit after this `long` without a call (0: never)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: warden hookd [--socket PATH] [--idle 15m]\n       warden hookd stop|status [--socket PATH]\n\n"+
			"Serves warden-hook: each call is answered exactly as `warden hook` would, with\n"+
			"the compiled policy and the store kept between calls. warden-hook starts it\n"+
			"when none runs; it exits after --idle without calls, and when its binary changes.")
		fs.PrintDefaults()
	}
	args := env.Args
	op := ""
	if len(args) > 0 && (args[0] == "stop" || args[0] == "status") {
		op, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "warden hookd: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return ExitError
	}
	sock := *socket
	if sock == "" {
		sock = hookd.SocketPath()
	}
	if abs, err := filepath.Abs(sock); err == nil {
		sock = abs
	}
	switch op {
	case "stop", "status":
		req := &hookd.Request{Op: hookd.OpPing}
		if op == "stop" {
			req.Op = hookd.OpStop
		}
		resp, err := hookd.Ask(sock, req, 5*time.Second)
		if err != nil {
			fmt.Fprintf(env.Stdout, "warden hookd: none running on %s\n", sock)
			if derr := hookd.CheckDir(filepath.Dir(sock)); derr != nil && !errors.Is(derr, os.ErrNotExist) {
				// warden-hook will not use this socket: say why.
				fmt.Fprintf(env.Stdout, "warden hookd: the socket's folder is unsafe, so warden-hook runs warden hook for every event: %v\n", derr)
			}
			if op == "stop" {
				return ExitOK
			}
			return ExitError
		}
		verb := "running"
		if op == "stop" {
			verb = "stopped"
		}
		fmt.Fprintf(env.Stdout, "warden hookd: %s on %s (pid %d)\n", verb, sock, resp.PID)
		return ExitOK
	}
	if *idle < 0 {
		fmt.Fprintf(env.Stderr, "warden hookd: --idle %s: want 0 or more\n", *idle)
		return ExitError
	}
	srv := newHookd(sock, *idle, log.New(env.Stderr, "warden hookd: ", log.LstdFlags))
	if err := srv.Serve(ctx); err != nil {
		if errors.Is(err, hookd.ErrLocked) {
			fmt.Fprintf(env.Stderr, "warden hookd: %v (%s)\n", err, sock)
			return ExitOK
		}
		fmt.Fprintf(env.Stderr, "warden hookd: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// newHookd is a hookd that answers calls as `warden hook` does.
func newHookd(socket string, idle time.Duration, logger *log.Logger) *server.Server {
	// hookd answers for hours: the sandbox's walk of each workspace is
	// kept up to date by watching its folders.
	handler.WatchWorkspaces()
	return server.New(socket, idle, logger, func(ctx context.Context, rt *handler.Runtime, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return runHookWith(ctx, &Env{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr}, rt, false)
	})
}

// NewHookd is `warden hookd` on socket, for tests of the front ends
// (package gate/gatetest): it answers calls as `warden hook` does.
func NewHookd(socket string, idle time.Duration, logger *log.Logger) *server.Server {
	return newHookd(socket, idle, logger)
}
