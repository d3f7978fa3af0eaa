package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/spawn"
)

const stateUsage = `[--json]                      show phase, anchors, history and sessions
       warden state phase NAME                       set the project phase
       warden state sessions [--all] [--json]        list sessions
       warden state history [--archived] [--limit N] [--json]
                                                     the project history: the live entries, or with
                                                     --archived those past state.history_max
       warden state event EVENT --session S [--role R] [--parent P] [--host H]
                                                     record created|resumed|compacted|idle|ended and print
                                                     the governance text due (prefix, resume note, reminder)
       warden state governance --session S           print the governance text due now, if any
       warden state prompt --session S TEXT          record the user's latest request (the calls' intent)`

// stateSubcommands are the subcommands of `warden state`, each with its
// own flags ("": the overview).
var stateSubcommands = map[string]func(ctx context.Context, env *Env, args []string) int{
	"":           runStateShow,
	"phase":      runStatePhase,
	"sessions":   runStateSessions,
	"history":    runStateHistory,
	"event":      runStateEvent,
	"governance": runStateGovernance,
	"prompt":     runStatePrompt,
}

func runState(ctx context.Context, env *Env) int {
	sub := ""
	args := env.Args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	run, ok := stateSubcommands[sub]
	if !ok {
		return cmdError(env, "state", fmt.Errorf("unknown subcommand %q (want phase, sessions, history, event, governance or prompt)", sub))
	}
	return run(ctx, env, args)
}

// runStateShow is `warden state`: phase, anchors, history and sessions.
func runStateShow(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "state", stateUsage)
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	_, _, st, code := sf.parseOpen(ctx, env, "state", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	s, err := st.State(ctx)
	if err != nil {
		return cmdError(env, "state", err)
	}
	sessions, err := st.Sessions(ctx, warden.SessionFilter{Limit: 20})
	if err != nil {
		return cmdError(env, "state", err)
	}
	halts, err := st.Halts(ctx)
	if err != nil {
		return cmdError(env, "state", err)
	}
	// The follow-up sessions report plugins started (package spawn).
	spawns, err := spawn.List(ctx, st, "")
	if err != nil {
		return cmdError(env, "state", err)
	}
	if *asJSON {
		if sessions == nil {
			sessions = []warden.Session{}
		}
		writeJSON(env.Stdout, struct {
			warden.ProjectState
			Halts    []warden.Halt    `json:"halts"`
			Sessions []warden.Session `json:"sessions"`
			Spawns   []spawn.Spawn    `json:"spawns,omitempty"`
		}{s, halts, sessions, spawns}, true)
		return ExitOK
	}
	printHalts(env, halts)
	printState(env, s, sessions)
	if len(spawns) > 0 {
		fmt.Fprintln(env.Stdout, "\nFollow-up sessions (started by report plugins):")
		printSpawns(ctx, env, st, spawns)
	}
	return ExitOK
}

// runStatePhase is `warden state phase NAME`.
func runStatePhase(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "state", stateUsage)
	sf := addStoreFlags(fs)
	pos, pol, st, code := sf.parseOpen(ctx, env, "state", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return cmdError(env, "state phase", errors.New("want the phase name"))
	}
	if err := session.SetPhase(ctx, st, pos[0], session.Limits(pol), time.Now()); err != nil {
		return cmdError(env, "state phase", err)
	}
	fmt.Fprintf(env.Stdout, "phase: %s\n", pos[0])
	return ExitOK
}

// runStateSessions is `warden state sessions`.
func runStateSessions(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "state", stateUsage)
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "include archived sessions")
	_, _, st, code := sf.parseOpen(ctx, env, "state", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	list, err := st.Sessions(ctx, warden.SessionFilter{Archived: *all})
	if err != nil {
		return cmdError(env, "state sessions", err)
	}
	if *asJSON {
		if list == nil {
			list = []warden.Session{}
		}
		writeJSON(env.Stdout, list, true)
		return ExitOK
	}
	printSessions(env, list)
	return ExitOK
}

// printHalts shows the emergency halts first: they stop every call.
func printHalts(env *Env, halts []warden.Halt) {
	for _, h := range halts {
		what := "HALTED: every session of the project"
		if h.Session != "" {
			what = "HALTED: session " + h.Session
		} else if h.Agent != "" {
			what = "HALTED: agent " + h.Agent + ", in every session"
		}
		fmt.Fprintf(env.Stdout, "%s since %s", what, h.At.Local().Format("2006-01-02 15:04:05"))
		if h.By != "" {
			fmt.Fprintf(env.Stdout, " by %s", h.By)
		}
		if h.Message != "" {
			fmt.Fprintf(env.Stdout, ": %s", h.Message)
		}
		fmt.Fprintln(env.Stdout)
	}
	if len(halts) > 0 {
		fmt.Fprintln(env.Stdout)
	}
}

func printState(env *Env, s warden.ProjectState, sessions []warden.Session) {
	phase := s.Phase
	if phase == "" {
		phase = "init (not set)"
	}
	fmt.Fprintf(env.Stdout, "Phase: %s\n\nAnchors (%d):\n", phase, len(s.Anchors))
	if len(s.Anchors) == 0 {
		fmt.Fprintln(env.Stdout, "  none")
	}
	for _, a := range s.Anchors {
		fmt.Fprintf(env.Stdout, "  %s [%s] %s\n", a.ID, strings.ToUpper(string(a.Priority)), a.Content)
	}
	fmt.Fprintf(env.Stdout, "\nHistory (%d live entries):\n", len(s.History))
	if len(s.History) == 0 {
		fmt.Fprintln(env.Stdout, "  none")
	}
	printHistory(env, s.History)
	fmt.Fprintln(env.Stdout, "\nSessions (most recent first):")
	printSessions(env, sessions)
}

func printSessions(env *Env, list []warden.Session) {
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, "  none")
		return
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tROLE\tSTATUS\tDEPTH\tPARENT\tFIRST TOOL\tCALLS\tVIOLATIONS\tLAST SEEN")
	for _, s := range list {
		status := s.Status
		if s.Archived {
			status += " (archived)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n", s.ID, dash(s.Role), dash(status), s.Depth, dash(s.Parent),
			dash(s.FirstTool), s.Calls, s.Violations, age(s.LastSeen))
	}
	tw.Flush()
}

func printHistory(env *Env, list []warden.HistoryEntry) {
	for _, h := range list {
		fmt.Fprintf(env.Stdout, "  %s  %-5s %s %s %s\n", h.Time.Local().Format("2006-01-02 15:04:05"), h.Result,
			dash(h.Session), dash(h.Agent), h.Action)
	}
}

// runStateHistory is `warden state history`: the live history, or the
// archived entries (those past state.history_max, which `warden state`
// no longer shows).
func runStateHistory(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "state", stateUsage)
	sf := addStoreFlags(fs)
	archived := fs.Bool("archived", false, "the archived entries (past state.history_max), not the live ones")
	limit := fs.Int("limit", 0, "only the newest N entries")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, st, code := sf.parseOpen(ctx, env, "state", fs, args)
	if code >= 0 {
		return code
	}
	defer st.Close()
	if len(pos) > 0 {
		return cmdError(env, "state history", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if *limit < 0 {
		return cmdError(env, "state history", errors.New("--limit must be 0 (all) or more"))
	}
	var list []warden.HistoryEntry
	what := "live"
	if *archived {
		var err error
		if list, err = st.ArchivedHistory(ctx, *limit); err != nil {
			return cmdError(env, "state history", err)
		}
		what = "archived"
	} else {
		s, err := st.State(ctx)
		if err != nil {
			return cmdError(env, "state history", err)
		}
		list = s.History
		if *limit > 0 && len(list) > *limit {
			list = list[len(list)-*limit:]
		}
	}
	if *asJSON {
		if list == nil {
			list = []warden.HistoryEntry{}
		}
		writeJSON(env.Stdout, list, true)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "History (%d %s entries, oldest first):\n", len(list), what)
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, "  none")
	}
	printHistory(env, list)
	return ExitOK
}
