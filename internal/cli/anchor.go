package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

func runAnchor(ctx context.Context, env *Env) int {
	const usage = "add [--priority critical|high|normal|low] TEXT... | ls [--json] | rm ID..."
	sub, args, code := subcommand(env, "anchor", usage)
	if code >= 0 {
		return code
	}
	fs := newFlags(env, "anchor "+sub, usage)
	sf := addStoreFlags(fs)
	priority := fs.String("priority", "normal", "add: critical, high, normal or low")
	asJSON := fs.Bool("json", false, "ls: print JSON")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	pol, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "anchor", err)
	}
	defer st.Close()
	switch sub {
	case "add":
		text := strings.TrimSpace(strings.Join(pos, " "))
		if text == "" {
			return cmdError(env, "anchor add", errors.New("want the anchor's text"))
		}
		p, err := warden.ParsePriority(*priority)
		if err != nil {
			return cmdError(env, "anchor add", fmt.Errorf("--priority: %w", err))
		}
		a, err := session.AddAnchor(ctx, st, warden.Anchor{Priority: p, Content: text}, session.Limits(pol), time.Now())
		if err != nil {
			return cmdError(env, "anchor add", err)
		}
		fmt.Fprintf(env.Stdout, "%s [%s] %s\n", a.ID, strings.ToUpper(string(a.Priority)), a.Content)
		return ExitOK
	case "ls", "list":
		s, err := st.State(ctx)
		if err != nil {
			return cmdError(env, "anchor ls", err)
		}
		if *asJSON {
			writeJSON(env.Stdout, s.Anchors, true)
			return ExitOK
		}
		if len(s.Anchors) == 0 {
			fmt.Fprintln(env.Stdout, "no anchors")
		}
		for _, a := range s.Anchors {
			fmt.Fprintf(env.Stdout, "%s [%s] %s (added %s ago)\n", a.ID, strings.ToUpper(string(a.Priority)), a.Content, age(a.CreatedAt))
		}
		return ExitOK
	case "rm", "remove":
		if len(pos) == 0 {
			return cmdError(env, "anchor rm", errors.New("want one or more anchor ids"))
		}
		code := ExitOK
		for _, id := range pos {
			if err := st.RemoveAnchor(ctx, id); err != nil {
				code = cmdError(env, "anchor rm", err)
				continue
			}
			fmt.Fprintf(env.Stdout, "removed %s\n", id)
		}
		return code
	}
	return cmdError(env, "anchor", fmt.Errorf("unknown subcommand %q (want add, ls or rm)", sub))
}
