package reportgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/report"
)

// The response cache (docs/reports.md, "Response cache"): with
// report.cache enabled, a session whose report became final in answer to
// one user request leaves its report in the cache under the request's
// key; a later session whose first request has the same key is answered
// from it.

// NormalizeRequest is a request as the cache compares it: Unicode NFC,
// line ends as LF, each run of white space one space, no white space at
// either end. Letter case and punctuation are kept: "Delete build/" and
// "delete build" may ask different things.
func NormalizeRequest(s string) string {
	s = norm.NFC.String(s)
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// RequestSum is the digest of a request, normalised: "sha256:<hex>".
func RequestSum(request string) string {
	sum := sha256.Sum256([]byte(NormalizeRequest(request)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CacheKey is the key of the cache entry for a request (its RequestSum)
// under a policy, on a host, in a role: a SHA-256 over the request's
// digest, the project folder, the policy file's digest, the plugin files'
// digest (report.PluginFiles.Hash), the host and the role, each written
// with its length. Two requests are identical when their keys are equal.
func CacheKey(pol *policy.Policy, host, role, sum string) string {
	h := sha256.New()
	plugins := ""
	if pol.Report != nil {
		plugins = pol.Report.Files.Hash()
	}
	for _, part := range []string{"warden report cache 1", sum, pol.Dir, hex.EncodeToString(pol.Digest[:]), plugins, host, role} {
		fmt.Fprintf(h, "%d:%s\x00", len(part), part)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Served is a session answered from the response cache.
type Served struct {
	Entry warden.CachedReport
	// Text is what the host shows for the answer: a line that says where
	// it comes from, and the cached final report.
	Text string
}

// Request is a user's request, as a host's prompt hook reports it.
type Request struct {
	// Session is the session (its ID, Role and Depth decide whether the
	// contract and its cache apply); Host names the host.
	Session warden.Session
	Host    string
	Prompt  string
	// Transcript is the host's transcript file, "" when it gives none.
	Transcript string
	// Serve: the host can answer a prompt in the model's place (Claude
	// Code, Codex and Gemini CLI refuse a prompt with a reason the user
	// reads); without it a request is only recorded.
	Serve bool
}

// Prompt records a user request of a session held to the report
// contract (the first request is the completions' request, and the
// response cache counts them) and, when the policy enables the cache, it
// is the session's first request,
// the host can serve (Request.Serve) and an
// identical request left a usable entry, answers the session from the
// entry: the session's report becomes final with the cached final report
// and metadata, the hit is counted and recorded in the audit trail, and
// the plugins' on-complete commands are started with from_cache (through
// g.Complete). It returns nil when the session is not served. An entry
// that has expired, was checked against other plugin files, or whose
// metadata the plugins' current schemas reject is a miss.
func (g *Gate) Prompt(ctx context.Context, in Request) (*Served, error) {
	rp := g.Policy.Report
	s, host := in.Session, in.Host
	if rp == nil || !rp.Applies(s.Role, s.Depth) || s.ID == "" || strings.TrimSpace(in.Prompt) == "" {
		return nil, nil
	}
	cs := g.Store
	if r, err := cs.Report(ctx, s.ID); err == nil && retryPrompt(in.Prompt, r.Problem) {
		// Gemini CLI sends the gate's retry text as the next prompt: it
		// is not the user's.
		return nil, nil
	}
	sum := RequestSum(in.Prompt)
	rr, err := cs.NoteReportRequest(ctx, s.ID, sum, redactCut(in.Prompt, MaxRequestBytes))
	if err != nil || rr.Prompts != 1 || !in.Serve || !rp.Cache.Enabled {
		return nil, err
	}
	key := CacheKey(g.Policy, host, s.Role, sum)
	e, err := cs.CachedReport(ctx, key)
	if errors.Is(err, warden.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if reason := g.unusable(cs, e); reason != "" {
		g.logger().Info("report cache: entry not used", "session", s.ID, "key", key, "reason", reason)
		return nil, nil
	}
	var final string
	r, err := cs.UpdateReport(ctx, s.ID, func(r *warden.Report, created bool) error {
		if r.Status == warden.ReportFinal || r.Status == warden.ReportFailed || r.FinalReport != "" {
			return errUnchanged
		}
		if r.Nonce == "" {
			t, err := report.NewTags("", nil)
			if err != nil {
				return err
			}
			r.Nonce = t.Nonce
		}
		rs, err := newSession(rp, r.Nonce, s.ID, g.logger())
		if err != nil {
			return err
		}
		if err := rs.Restore(report.Result{FinalReport: e.FinalReport, Metas: e.Metas}); err != nil {
			return err
		}
		final, _ = rs.Final()
		r.Status, r.FinalReport, r.Metas, r.Problem = warden.ReportFinal, final, rs.Accepted(), ""
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("serve session %s from the report cache: %w", s.ID, err)
	}
	if err := cs.ServeReportRequest(ctx, s.ID, key); err != nil {
		return nil, err
	}
	if err := cs.HitCachedReport(ctx, key); err != nil && !errors.Is(err, warden.ErrNotFound) {
		g.logger().Warn("report cache: count the hit", "key", key, "error", err)
	}
	g.auditServed(ctx, cs, s, host, r, e)
	g.complete(ctx, s.ID, in.Transcript)
	text := fmt.Sprintf("warden answered this request from its response cache: the same request was answered in session %s on %s, and this is its final report (the model was not asked again).\n\n%s",
		e.Session, e.CreatedAt.UTC().Format("2006-01-02 15:04 MST"), strings.TrimSpace(final))
	return &Served{Entry: e, Text: strings.TrimRight(warden.TerminalSafe(text), "\n") + "\n"}, nil
}

// retryPrompt reports whether a prompt is the gate's retry text (the
// report's last problem), as a host that sends it as a prompt passes it
// on: white space and HTML escapes aside, within what the host sent.
func retryPrompt(prompt, problem string) bool {
	p := NormalizeRequest(html.UnescapeString(problem))
	return p != "" && strings.Contains(NormalizeRequest(html.UnescapeString(prompt)), p)
}

// unusable says why an entry cannot serve now, "" when it can.
func (g *Gate) unusable(cs Store, e warden.CachedReport) string {
	rp := g.Policy.Report
	if age := cs.Now().Sub(e.CreatedAt); age >= rp.Cache.TTL {
		return fmt.Sprintf("expired (%s old, ttl %s)", age.Round(time.Second), rp.Cache.TTL)
	}
	if e.Plugins != rp.Files.Hash() {
		return "made with other plugin files"
	}
	rs, err := report.NewSession(&report.Config{Nonce: "00000000", Plugins: rp.Files.Factories()})
	if err != nil {
		return err.Error()
	}
	if err := rs.Restore(report.Result{FinalReport: e.FinalReport, Metas: e.Metas}); err != nil {
		return err.Error()
	}
	return ""
}

// auditServed records a session answered from the cache: an allow of
// the final report, with the entry it came from.
func (g *Gate) auditServed(ctx context.Context, cs Store, s warden.Session, host string, r warden.Report, e warden.CachedReport) {
	metas := map[string]any{}
	for name, raw := range r.Metas {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			metas[name] = x
		}
	}
	rec := warden.AuditRecord{Session: s.ID, Role: s.Role, Host: host, Depth: s.Depth, Tool: Tool, Mode: "enforce",
		Decision: warden.Allow, Code: warden.CodeAllowed,
		Reason: fmt.Sprintf("served from the response cache (the report of session %s)", e.Session),
		Args: warden.RedactArgsCut(map[string]any{"status": r.Status, "from_cache": true, "cache_key": e.Key,
			"final_report": r.FinalReport, "metas": metas}, 4000)}
	if _, err := cs.AppendAudit(ctx, rec); err != nil {
		g.logger().Warn("report: audit record failed", "session", s.ID, "error", err)
	}
}

// keep puts a session's report, final now, into the cache when the
// policy enables it and the report answers exactly one user request that
// was not itself served from the cache.
func (g *Gate) keep(ctx context.Context, s warden.Session, host string, r warden.Report) error {
	rp := g.Policy.Report
	if !rp.Cache.Enabled || r.Status != warden.ReportFinal {
		return nil
	}
	cs := g.Store
	rr, err := cs.ReportRequest(ctx, s.ID)
	if errors.Is(err, warden.ErrNotFound) {
		return nil // no request came through the prompt hook
	}
	if err != nil || rr.Prompts != 1 || rr.Served != "" {
		return err
	}
	_, err = cs.PutCachedReport(ctx, warden.CachedReport{Key: CacheKey(g.Policy, host, s.Role, rr.Sum), Request: rr.Request,
		Host: host, Role: s.Role, Plugins: rp.Files.Hash(), FinalReport: r.FinalReport, Metas: r.Metas, Session: s.ID})
	return err
}
