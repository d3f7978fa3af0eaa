package cli

import (
	"context"
	"errors"
	"fmt"
	"os/user"

	"github.com/warden-run/warden"
)

func runHalt(ctx context.Context, env *Env) int {
	fs := newFlags(env, "halt", "[--session S | --agent NAME] [--message M] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "halt this session (and its subagents); without it, every session of the project")
	agent := fs.String("agent", "", "halt this agent token of warden serve (its `name`): every call it sends, in any session, new ones included")
	msg := fs.String("message", "", "what the model is told")
	pos, code := parseArgs(fs, env.Args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return cmdError(env, "halt", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if *sess != "" && *agent != "" {
		return cmdError(env, "halt", errors.New("give --session or --agent, not both"))
	}
	if err := warden.CheckSessionID(*sess); err != nil {
		return cmdError(env, "halt", fmt.Errorf("--session: %w", err))
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
	h, err := st.SetHalt(ctx, warden.Halt{Session: *sess, Agent: *agent, Message: *msg, By: by})
	if err != nil {
		return cmdError(env, "halt", err)
	}
	if h.Agent != "" {
		fmt.Fprintf(env.Stdout, "halted: agent %s, in every session, new ones included; each next call it sends is denied (HALTED). Lift it with: warden resume --agent %s\n", h.Agent, h.Agent)
	} else if h.Session == "" {
		fmt.Fprintln(env.Stdout, "halted: every session of the project; each next call is denied (HALTED). Lift it with: warden resume")
	} else {
		fmt.Fprintf(env.Stdout, "halted: session %s and its subagents; each next call is denied (HALTED). Lift it with: warden resume --session %s\n", h.Session, h.Session)
	}
	return ExitOK
}

func runResume(ctx context.Context, env *Env) int {
	fs := newFlags(env, "resume", "[--session S | --agent NAME] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "lift this session's halt; without it, the project's")
	agent := fs.String("agent", "", "lift this agent token's halt (its `name`)")
	pos, code := parseArgs(fs, env.Args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return cmdError(env, "resume", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if *sess != "" && *agent != "" {
		return cmdError(env, "resume", errors.New("give --session or --agent, not both"))
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "resume", err)
	}
	defer st.Close()
	clear := func() error { return st.ClearHalt(ctx, *sess) }
	if *agent != "" {
		clear = func() error { return st.ClearAgentHalt(ctx, *agent) }
	}
	if err := clear(); err != nil {
		if errors.Is(err, warden.ErrNotFound) {
			hs, _ := st.Halts(ctx)
			fmt.Fprintf(env.Stderr, "warden resume: %v (halts now: %d; see warden state)\n", err, len(hs))
			return ExitError
		}
		return cmdError(env, "resume", err)
	}
	if *agent != "" {
		fmt.Fprintf(env.Stdout, "resumed: agent %s\n", *agent)
	} else if *sess == "" {
		fmt.Fprintln(env.Stdout, "resumed: the project's halt is lifted")
	} else {
		fmt.Fprintf(env.Stdout, "resumed: session %s\n", *sess)
	}
	return ExitOK
}
