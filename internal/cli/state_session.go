package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

// sessionFlags are the flags of the state subcommands that work on one
// session through the session layer.
type sessionFlags struct {
	storeFlags
	session *string
}

func addSessionFlags(fs *flag.FlagSet) sessionFlags {
	return sessionFlags{storeFlags: addStoreFlags(fs), session: fs.String("session", "", "the session id")}
}

// tracker opens the store and compiles the policy for the session layer;
// done closes the store.
func (f sessionFlags) tracker(ctx context.Context) (tr *session.Tracker, done func(), err error) {
	pol, st, err := f.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	eng, err := engine.Compile(pol, workspace.New())
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return session.New(eng, st), func() { st.Close() }, nil
}

// need says that --session is required when it is missing.
func (f sessionFlags) need() error {
	if *f.session == "" {
		return errors.New("--session is required")
	}
	return nil
}

// runStateEvent is `warden state event EVENT --session S`: it records a
// session event and prints the governance text due.
func runStateEvent(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "state", stateUsage)
	sf := addSessionFlags(fs)
	role := fs.String("role", "", "event created: the session's role")
	parent := fs.String("parent", "", "event created: the delegating session (depth is its depth + 1)")
	host := fs.String("host", "", "event created: the agent host")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	tr, done, err := sf.tracker(ctx)
	if err != nil {
		return cmdError(env, "state", err)
	}
	defer done()
	if len(pos) != 1 {
		return cmdError(env, "state event", errors.New("want one event: created, resumed, compacted, idle or ended"))
	}
	if err := sf.need(); err != nil {
		return cmdError(env, "state event", err)
	}
	ev := session.Event(pos[0])
	s, text, err := tr.Event(ctx, ev, session.StartOptions{ID: *sf.session, Role: *role, Parent: *parent, Host: *host})
	if err != nil {
		return cmdError(env, "state event", err)
	}
	if ev == session.Idle || ev == session.Ended {
		text = fmt.Sprintf("session %s %s: %d calls, %d violations, depth %d, first tool %s\n",
			s.ID, s.Status, s.Calls, s.Violations, s.Depth, dash(s.FirstTool))
	}
	fmt.Fprint(env.Stdout, text)
	return ExitOK
}

// runStateGovernance is `warden state governance --session S`.
func runStateGovernance(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "state", stateUsage)
	sf := addSessionFlags(fs)
	if _, code := parseArgs(fs, args); code >= 0 {
		return code
	}
	tr, done, err := sf.tracker(ctx)
	if err != nil {
		return cmdError(env, "state", err)
	}
	defer done()
	if err := sf.need(); err != nil {
		return cmdError(env, "state governance", err)
	}
	text, err := tr.Governance(ctx, *sf.session)
	if err != nil {
		return cmdError(env, "state governance", err)
	}
	fmt.Fprint(env.Stdout, text)
	return ExitOK
}

// runStatePrompt is `warden state prompt --session S TEXT`.
func runStatePrompt(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "state", stateUsage)
	sf := addSessionFlags(fs)
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	tr, done, err := sf.tracker(ctx)
	if err != nil {
		return cmdError(env, "state", err)
	}
	defer done()
	if err := sf.need(); err != nil {
		return cmdError(env, "state prompt", err)
	}
	if len(pos) == 0 {
		return cmdError(env, "state prompt", errors.New("want the user's request text"))
	}
	if _, err := tr.Prompt(ctx, *sf.session, strings.Join(pos, " ")); err != nil {
		return cmdError(env, "state prompt", err)
	}
	return ExitOK
}
