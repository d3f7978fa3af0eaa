package cli

import (
	"context"
	"errors"
	"fmt"
	"os/user"

	"github.com/warden-run/warden"
)

func runHalt(ctx context.Context, env *Env) int {
	fs := newFlags(env, "halt", "[--session S] [--message M] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "halt this session (and its subagents); without it, every session of the project")
	msg := fs.String("message", "", "what the model is told")
	pos, code := parseArgs(fs, env.Args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return cmdError(env, "halt", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "halt", err)
	}
	defer st.Close()
	by := ""
	if u, err := user.Current(); err == nil {
		by = u.Username
	}
	h, err := st.SetHalt(ctx, warden.Halt{Session: *sess, Message: *msg, By: by})
	if err != nil {
		return cmdError(env, "halt", err)
	}
	if h.Session == "" {
		fmt.Fprintln(env.Stdout, "halted: every session of the project; each next call is denied (HALTED). Lift it with: warden resume")
	} else {
		fmt.Fprintf(env.Stdout, "halted: session %s and its subagents; each next call is denied (HALTED). Lift it with: warden resume --session %s\n", h.Session, h.Session)
	}
	return ExitOK
}

func runResume(ctx context.Context, env *Env) int {
	fs := newFlags(env, "resume", "[--session S] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "lift this session's halt; without it, the project's")
	pos, code := parseArgs(fs, env.Args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return cmdError(env, "resume", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "resume", err)
	}
	defer st.Close()
	if err := st.ClearHalt(ctx, *sess); err != nil {
		if errors.Is(err, warden.ErrNotFound) {
			hs, _ := st.Halts(ctx)
			fmt.Fprintf(env.Stderr, "warden resume: %v (halts now: %d; see warden state)\n", err, len(hs))
			return ExitError
		}
		return cmdError(env, "resume", err)
	}
	if *sess == "" {
		fmt.Fprintln(env.Stdout, "resumed: the project's halt is lifted")
	} else {
		fmt.Fprintf(env.Stdout, "resumed: session %s\n", *sess)
	}
	return ExitOK
}
