package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/replay"
)

const replayUsage = `[--policy FILE] [--against OLD] [--role R] [--top N] [--no-audit] [--json] [TRANSCRIPT|FOLDER ...]

Decides the tool calls your agents already made against a policy: the
transcripts the hosts keep of sessions in this project (Claude Code,
Codex, Gemini CLI, OpenCode), and warden's own audit trail for sessions no
transcript holds. With files or folders, only those are read. Reports the
outcomes by rule, the calls whose outcome differs under --against, and the
most frequent asks with the narrowest allow rule that would stop each.`

func runReplay(ctx context.Context, env *Env) int {
	fset := newFlags(env, "replay", replayUsage)
	pf := fset.String("policy", "", "policy file to decide against (default: warden.yaml here or in the nearest parent folder)")
	against := fset.String("against", "", "a second policy file: list the calls it decides otherwise")
	store := fset.String("store", "", "the audit trail's store (default: .warden/warden.db next to the policy, when it exists)")
	role := fset.String("role", "", "the role of calls whose session recorded none")
	top := fset.Int("top", 10, "suggest rules for this many of the most frequent asks")
	noAudit := fset.Bool("no-audit", false, "read the hosts' transcripts only, not warden's audit trail")
	asJSON := fset.Bool("json", false, "print the report as JSON")
	pos, code := parseArgs(fset, env.Args)
	if code >= 0 {
		return code
	}
	wd, err := os.Getwd()
	if err != nil {
		return cmdError(env, "replay", err)
	}
	file := *pf
	if file == "" {
		if file, err = policy.Find(wd); err != nil {
			return cmdError(env, "replay", err)
		}
	}
	file, _ = filepath.Abs(file)
	project := filepath.Dir(file)

	var sources []replay.Source
	if len(pos) == 0 {
		home, _ := os.UserHomeDir()
		sources = replay.Discover(project, home, os.Getenv)
	} else {
		for _, p := range pos {
			s, err := sourcesAt(p)
			if err != nil {
				return cmdError(env, "replay", err)
			}
			sources = append(sources, s...)
		}
	}
	var calls []replay.Call
	var skipped []replay.Skip
	covered := map[string]bool{}
	for _, s := range sources {
		t, err := s.Read()
		if err != nil {
			if len(pos) > 0 {
				return cmdError(env, "replay", err)
			}
			skipped = append(skipped, replay.Skip{Source: s.Path, Reason: err.Error()})
			continue
		}
		for _, c := range t.Calls {
			covered[c.Session] = true
		}
		calls = append(calls, t.Calls...)
		skipped = append(skipped, t.Skipped...)
	}
	if !*noAudit && len(pos) == 0 {
		db := *store
		if db == "" {
			if p := filepath.Join(project, ".warden", "warden.db"); fileExists(p) {
				db = p
			}
		}
		if db != "" {
			st, err := openStore(ctx, file, db)
			if err != nil {
				return cmdError(env, "replay", err)
			}
			fromAudit, err := replay.FromAudit(ctx, st, project, warden.AuditFilter{}, covered)
			st.Close()
			if err != nil {
				return cmdError(env, "replay", err)
			}
			calls = append(calls, fromAudit...)
		}
	}
	if len(calls) == 0 {
		return cmdError(env, "replay", errors.New("found no recorded tool calls: no host transcript of a session in "+project+
			" and no audit record (name transcript files or folders to read them)"))
	}
	rep, err := replay.Run(ctx, calls, skipped, replay.Options{Policy: file, Against: *against, Role: *role, Top: *top})
	if err != nil {
		return cmdError(env, "replay", err)
	}
	if *asJSON {
		writeJSON(env.Stdout, rep, true)
		return ExitOK
	}
	printReplay(env, rep, len(sources))
	return ExitOK
}

// sourcesAt is what a path names: a transcript file, an OpenCode database,
// or a folder of them (its *.jsonl, chats' *.json and opencode.db files).
func sourcesAt(p string) ([]replay.Source, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []replay.Source{{Path: p}}, nil
	}
	var out []replay.Source
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n := d.Name()
		if strings.HasSuffix(n, ".jsonl") || n == "opencode.db" ||
			(strings.HasSuffix(n, ".json") && filepath.Base(filepath.Dir(q)) == "chats") {
			out = append(out, replay.Source{Path: q})
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: holds no transcript (*.jsonl, chats/*.json, opencode.db)", p)
	}
	return out, err
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func printReplay(env *Env, r *replay.Report, sources int) {
	w := env.Stdout
	var hosts []string
	for _, h := range []string{"claude", "codex", "gemini", "opencode"} {
		if n := r.Hosts[h]; n > 0 {
			hosts = append(hosts, fmt.Sprintf("%s %d", h, n))
		}
	}
	for h, n := range r.Hosts {
		switch h {
		case "claude", "codex", "gemini", "opencode":
		default:
			hosts = append(hosts, fmt.Sprintf("%s %d", dash(h), n))
		}
	}
	fmt.Fprintf(w, "warden replay: %d calls (%s) from %d transcripts and the audit trail\n", r.Calls, strings.Join(hosts, ", "), sources)
	if r.Skipped > 0 {
		fmt.Fprintf(w, "skipped %d lines that could not be read; the first:\n", r.Skipped)
		for _, s := range r.SkippedLines[:min(len(r.SkippedLines), 5)] {
			fmt.Fprintf(w, "  %s: %s\n", s.Source, s.Reason)
		}
	}
	outcomes := func(title string, m map[warden.Effect]int) {
		fmt.Fprintf(w, "\n%s\n", title)
		for _, e := range []warden.Effect{warden.Allow, warden.Ask, warden.Deny} {
			fmt.Fprintf(w, "  %-5s %6d  %3.0f%%\n", e, m[e], 100*float64(m[e])/float64(max(r.Calls, 1)))
		}
	}
	outcomes("Under "+r.Policy+":", r.Outcomes)
	fmt.Fprintln(w, "\nBy rule:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, rc := range r.Rules {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", rc.Decision, rc.Count, rc.Rule)
	}
	tw.Flush()
	if r.Against != "" {
		outcomes("Under "+r.Against+":", r.AgainstOutcomes)
		fmt.Fprintf(w, "\nDecided otherwise under %s: %d calls\n", r.Against, len(r.Changed))
		for _, c := range r.Changed[:min(len(r.Changed), 50)] {
			fmt.Fprintf(w, "  %s -> %s  %s  (%s -> %s; %s)\n", c.Before, c.After, c.Call, c.BeforeRule, c.AfterRule, c.Source)
		}
		if len(r.Changed) > 50 {
			fmt.Fprintf(w, "  ... and %d more (--json lists them all)\n", len(r.Changed)-50)
		}
	}
	if len(r.Asks) == 0 {
		fmt.Fprintln(w, "\nNo call asks under this policy.")
		return
	}
	fmt.Fprintln(w, "\nMost frequent asks:")
	for i, a := range r.Asks {
		if a.Rule == "" && a.Why == "" {
			continue
		}
		fmt.Fprintf(w, "%d. %s: %d calls, for example %s\n", i+1, a.Pattern, a.Count, strings.Join(a.Examples, "; "))
		if a.Rule == "" {
			fmt.Fprintf(w, "   %s\n", a.Why)
			continue
		}
		fmt.Fprintf(w, "   This rule allows %d of them:\n", a.Covers)
		for _, l := range strings.Split(strings.TrimRight(a.Rule, "\n"), "\n") {
			fmt.Fprintf(w, "     %s\n", l)
		}
		if len(a.AlsoAllows) > 0 {
			fmt.Fprintf(w, "   It would also allow %d other recorded calls: %s\n", len(a.AlsoAllows), strings.Join(a.AlsoAllows[:min(len(a.AlsoAllows), 5)], "; "))
		} else {
			fmt.Fprintln(w, "   It would allow no other recorded call.")
		}
	}
}
