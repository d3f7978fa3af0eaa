package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

const anchorUsage = "add [--priority critical|high|normal|low] TEXT... | ls [--json] | rm ID..."

// anchorSubcommands are the subcommands of `warden anchor`, each with its
// own flags.
var anchorSubcommands = map[string]subcommandFunc{
	"add":    runAnchorAdd,
	"ls":     runAnchorList,
	"list":   runAnchorList,
	"rm":     runAnchorRemove,
	"remove": runAnchorRemove,
}

func runAnchor(ctx context.Context, env *Env) int {
	return runSubcommand(ctx, env, "anchor", anchorUsage, "add, ls or rm", anchorSubcommands)
}

// runAnchorAdd is `warden anchor add TEXT...`.
func runAnchorAdd(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	priority := fs.String("priority", "normal", "critical, high, normal or low")
	pos, pol, st, code := sf.parseOpen(ctx, env, "anchor", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
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
}

// runAnchorList is `warden anchor ls`.
func runAnchorList(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	_, _, st, code := sf.parseOpen(ctx, env, "anchor", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
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
}

// runAnchorRemove is `warden anchor rm ID...`.
func runAnchorRemove(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int {
	sf := addStoreFlags(fs)
	pos, _, st, code := sf.parseOpen(ctx, env, "anchor", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	if len(pos) == 0 {
		return cmdError(env, "anchor rm", errors.New("want one or more anchor ids"))
	}
	code = ExitOK
	for _, id := range pos {
		if err := st.RemoveAnchor(ctx, id); err != nil {
			code = cmdError(env, "anchor rm", err)
			continue
		}
		fmt.Fprintf(env.Stdout, "removed %s\n", id)
	}
	return code
}
