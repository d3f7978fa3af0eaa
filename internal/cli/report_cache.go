package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/reportgate"
)

// `warden report cache`: the response cache's entries (report.cache,
// docs/reports.md "Response cache").

const reportCacheUsage = `Usage:
  warden report cache ls [--json] [--limit N]
  warden report cache show KEY [--json]
  warden report cache clear KEY | --expired | --all
  warden report cache key [--host H] [--role R] REQUEST...
  (each also takes --policy FILE and --store URL)

ls lists the entries, newest first: each final report kept under the key of
the request that produced it. show prints one (KEY may be a unique prefix,
with or without "sha256:"). clear deletes one entry, the expired ones (older
than report.cache.ttl) or all. key prints the key a request would have on a
host and in a role under the current policy: two requests are identical when
their keys are equal.
`

func runReportCache(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Stdout, reportCacheUsage)
		if len(args) == 0 {
			return ExitError
		}
		return ExitOK
	}
	switch args[0] {
	case "ls":
		return runReportCacheList(ctx, env, args[1:])
	case "show":
		return runReportCacheShow(ctx, env, args[1:])
	case "clear":
		return runReportCacheClear(ctx, env, args[1:])
	case "key":
		return runReportCacheKey(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "warden report cache: unknown subcommand %q\n\n%s", args[0], reportCacheUsage)
	return ExitError
}

func runReportCacheList(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "cache ls", "[--json] [--limit N] [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 0, "list at most this many entries (0: all)")
	pol, st, code := sf.openNoArgs(ctx, env, fs, args, "report cache ls")
	if code >= 0 {
		return code
	}
	defer st.Close()
	es, err := st.CachedReports(ctx, *limit)
	if err != nil {
		return cmdError(env, "report cache ls", err)
	}
	if *asJSON {
		return printJSON(env, es)
	}
	if len(es) == 0 {
		fmt.Fprintln(env.Stdout, "no cached reports")
		return ExitOK
	}
	ttl := time.Duration(0)
	if pol.Report != nil {
		ttl = pol.Report.Cache.TTL
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tCREATED\tSTATE\tHITS\tHOST\tROLE\tSESSION\tREQUEST")
	for _, e := range es {
		state := "live"
		if ttl > 0 && st.Now().Sub(e.CreatedAt) >= ttl {
			state = "expired"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", shortKey(e.Key), e.CreatedAt.Local().Format(time.DateTime), state, e.Hits,
			dash(e.Host), dash(e.Role), dash(e.Session), requestLine(e.Request, 60))
	}
	w.Flush()
	return ExitOK
}

// shortKey is a key's first 12 hex digits.
func shortKey(k string) string {
	k = strings.TrimPrefix(k, "sha256:")
	if len(k) > 12 {
		k = k[:12]
	}
	return k
}

// requestLine is a request on one line, cut to n runes.
func requestLine(s string, n int) string {
	s = strings.Join(strings.Fields(warden.TerminalSafe(s)), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-3]) + "..."
	}
	return dash(s)
}

// findCached finds the entry whose key starts with prefix ("sha256:"
// optional).
func findCached(ctx context.Context, st warden.Store, prefix string) (warden.CachedReport, error) {
	want := "sha256:" + strings.TrimPrefix(strings.TrimSpace(prefix), "sha256:")
	if len(want) <= len("sha256:") {
		return warden.CachedReport{}, fmt.Errorf("give a key")
	}
	if e, err := st.CachedReport(ctx, want); err == nil {
		return e, nil
	}
	es, err := st.CachedReports(ctx, 0)
	if err != nil {
		return warden.CachedReport{}, err
	}
	var found []warden.CachedReport
	for _, e := range es {
		if strings.HasPrefix(e.Key, want) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return warden.CachedReport{}, fmt.Errorf("no cached report has a key starting with %s: %w", prefix, warden.ErrNotFound)
	case 1:
		return found[0], nil
	}
	return warden.CachedReport{}, fmt.Errorf("%d cached reports have a key starting with %s: give more of it", len(found), prefix)
}

func runReportCacheShow(ctx context.Context, env *Env, args []string) int {
	key, st, asJSON, code := openOne(ctx, env, args, "cache show", "KEY", "key")
	if code >= 0 {
		return code
	}
	defer st.Close()
	e, err := findCached(ctx, st, key)
	if err != nil {
		return cmdError(env, "report cache show", err)
	}
	if *asJSON {
		return printJSON(env, e)
	}
	fmt.Fprintf(env.Stdout, "key:      %s\ncreated:  %s\nhits:     %d\nhost:     %s\nrole:     %s\nsession:  %s\nplugins:  %s\n",
		e.Key, e.CreatedAt.Local().Format(time.DateTime), e.Hits, dash(e.Host), dash(e.Role), dash(e.Session), dash(e.Plugins))
	fmt.Fprintln(env.Stdout, "\nrequest:")
	printContent(env.Stdout, warden.TerminalSafe(e.Request))
	fmt.Fprintln(env.Stdout, "\nfinal report:")
	printContent(env.Stdout, warden.TerminalSafe(e.FinalReport))
	for _, n := range slices.Sorted(maps.Keys(e.Metas)) {
		fmt.Fprintf(env.Stdout, "\nmetadata %q:\n  %s\n", n, e.Metas[n])
	}
	return ExitOK
}

func runReportCacheClear(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "cache clear", "KEY | --expired | --all [--policy FILE] [--store URL]")
	sf := addStoreFlags(fs)
	expired := fs.Bool("expired", false, "delete the entries older than report.cache.ttl")
	all := fs.Bool("all", false, "delete every entry")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	n := len(pos)
	if *expired {
		n++
	}
	if *all {
		n++
	}
	if n != 1 || len(pos) > 1 {
		return cmdError(env, "report cache clear", fmt.Errorf("give one of: a key, --expired, --all"))
	}
	pol, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "report cache clear", err)
	}
	defer st.Close()
	var deleted int
	switch {
	case len(pos) == 1:
		e, err := findCached(ctx, st, pos[0])
		if err != nil {
			return cmdError(env, "report cache clear", err)
		}
		deleted, err = st.DeleteCachedReports(ctx, e.Key, time.Time{})
		if err != nil {
			return cmdError(env, "report cache clear", err)
		}
	case *expired:
		if pol.Report == nil {
			return cmdError(env, "report cache clear", fmt.Errorf("%s has no report section: no ttl to judge by (use --all)", pol.File))
		}
		deleted, err = st.DeleteCachedReports(ctx, "", st.Now().Add(-pol.Report.Cache.TTL))
	default:
		deleted, err = st.DeleteCachedReports(ctx, "", time.Time{})
	}
	if err != nil {
		return cmdError(env, "report cache clear", err)
	}
	fmt.Fprintf(env.Stdout, "deleted %d cached report(s)\n", deleted)
	return ExitOK
}

func runReportCacheKey(ctx context.Context, env *Env, args []string) int {
	fs := reportFlags(env, "cache key", "[--host H] [--role R] REQUEST... [--policy FILE]")
	sf := addStoreFlags(fs) // --store is accepted and not used
	host := fs.String("host", "claude", "the host: claude, codex, gemini or opencode")
	role := fs.String("role", "", "the session's role")
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) == 0 {
		return cmdError(env, "report cache key", fmt.Errorf("give the request"))
	}
	path := *sf.policy
	if path == "" {
		var err error
		if path, err = findPolicyHere(); err != nil {
			return cmdError(env, "report cache key", err)
		}
	}
	pol, err := policy.LoadStable(path)
	if err != nil {
		return cmdError(env, "report cache key", err)
	}
	req := strings.Join(pos, " ")
	fmt.Fprintf(env.Stdout, "%s\n", reportgate.CacheKey(pol, *host, *role, reportgate.RequestSum(req)))
	return ExitOK
}
