package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/doctor"
	"github.com/warden-run/warden/policy"
)

func runAudit(ctx context.Context, env *Env) int {
	fs := newFlags(env, "audit", "[--session S] [--decision allow|ask|deny] [--enforced allow|ask|deny] [--tool T] [--rule R] [--since T] [--until T] [--limit N] [--jsonl]")
	sf := addStoreFlags(fs)
	sess := fs.String("session", "", "only this session")
	decision := fs.String("decision", "", "only this decision: allow, ask or deny")
	enforced := fs.String("enforced", "", "only calls enforce mode decides so: allow, ask or deny (in audit mode: what would have been decided)")
	tool := fs.String("tool", "", "only this tool")
	rule := fs.String("rule", "", "only decisions by this rule (grant:ID and approval:ID too)")
	since := fs.String("since", "", "from this time on: RFC 3339, a date (2006-01-02), or an age such as 2h or 7d")
	until := fs.String("until", "", "before this time (same forms as --since)")
	limit := fs.Int("limit", 0, "only the newest N records")
	jsonl := fs.Bool("jsonl", false, "export JSON lines, one record per line (every record)")
	all := fs.Bool("all", false, "show warden doctor's probes too (denied calls of session warden-doctor, hidden from the table by default)")
	pos, code := parseArgs(fs, env.Args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return cmdError(env, "audit", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	now := time.Now()
	f := warden.AuditFilter{Session: *sess, Tool: *tool, Rule: *rule, Limit: *limit}
	switch e := warden.Effect(*decision); e {
	case "", warden.Allow, warden.Ask, warden.Deny:
		f.Decision = e
	default:
		return cmdError(env, "audit", fmt.Errorf("--decision %q: want allow, ask or deny", *decision))
	}
	switch e := warden.Effect(*enforced); e {
	case "", warden.Allow, warden.Ask, warden.Deny:
		f.Enforced = e
	default:
		return cmdError(env, "audit", fmt.Errorf("--enforced %q: want allow, ask or deny", *enforced))
	}
	var err error
	if f.Since, err = parseWhen(*since, now); err != nil {
		return cmdError(env, "audit", fmt.Errorf("--since: %w", err))
	}
	if f.Until, err = parseWhen(*until, now); err != nil {
		return cmdError(env, "audit", fmt.Errorf("--until: %w", err))
	}
	_, st, err := sf.open(ctx)
	if err != nil {
		return cmdError(env, "audit", err)
	}
	defer st.Close()
	recs, err := st.Audit(ctx, f)
	if err != nil {
		return cmdError(env, "audit", err)
	}
	if *jsonl {
		w := bufio.NewWriter(env.Stdout)
		for _, r := range recs {
			writeJSON(w, r, false)
		}
		if err := w.Flush(); err != nil {
			return cmdError(env, "audit", err)
		}
		return ExitOK
	}
	hidden := 0
	if !*all && *sess == "" {
		recs, hidden = withoutProbes(recs)
	}
	if len(recs) == 0 {
		fmt.Fprintln(env.Stdout, "no audit records")
		if hidden > 0 {
			fmt.Fprintf(env.Stdout, "(%d records of warden doctor's probes are not shown: --all shows them)\n", hidden)
		}
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSESSION\tROLE\tTOOL\tDECISION\tCODE\tRULE\tCALL")
	for _, r := range recs {
		d := string(r.Decision)
		if r.Mode == "audit" && r.Enforced != "" {
			d += " (would " + string(r.Enforced) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Local().Format("2006-01-02 15:04:05"), dash(r.Session),
			dash(r.Role), r.Tool, d, r.Code, dash(r.Rule), oneLine(callText(r.Args), 60))
	}
	tw.Flush()
	if hidden > 0 {
		fmt.Fprintf(env.Stdout, "(%d records of warden doctor's probes are not shown: --all shows them)\n", hidden)
	}
	return ExitOK
}

// withoutProbes leaves out the records of warden doctor's synthetic call
// (a denied write to the policy file, in session warden-doctor): they
// prove the hook records, and would otherwise fill the table after every
// doctor run. Only denies are left out, so that no call that ran can be
// hidden by naming its session so; an export (--jsonl) and --all keep
// every record.
func withoutProbes(recs []warden.AuditRecord) ([]warden.AuditRecord, int) {
	out := recs[:0:0]
	for _, r := range recs {
		if r.Session == doctor.ProbeSession && r.Decision == warden.Deny {
			continue
		}
		out = append(out, r)
	}
	return out, len(recs) - len(out)
}

// callText is a short text of redacted arguments for the table.
func callText(args map[string]any) string {
	for _, k := range []string{"command", "cmd", "file_path", "path", "filePath", "url", "pattern"} {
		if v, ok := args[k]; ok {
			return fmt.Sprint(v)
		}
	}
	var b strings.Builder
	for k, v := range args {
		fmt.Fprintf(&b, "%s=%v ", k, v)
	}
	return b.String()
}

// parseWhen reads a point in time: RFC 3339, a date, a date and time, or an
// age before now (90m, 2h, 7d).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if d, err := policy.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-01-02T15:04:05Z), a date (2026-01-02) or an age (2h, 7d)", s)
}
