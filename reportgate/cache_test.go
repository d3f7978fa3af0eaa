package reportgate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/reportgate"
	"github.com/warden-run/warden/sqlite"
)

const cacheSection = section + "  cache: {enabled: true, ttl: 1h}\n"

// session stores a session of the host and returns it.
func session(t *testing.T, st warden.Store, id, host string) warden.Session {
	t.Helper()
	s, err := st.UpdateSession(ctx, id, func(s *warden.Session, _ bool) error {
		s.Host, s.Status = host, warden.SessionActive
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// finish ends session sid's turn with a valid report and returns the
// stored report.
func finish(t *testing.T, g *reportgate.Gate, st warden.Store, s warden.Session, nonce, answer string) warden.Report {
	t.Helper()
	v, err := g.Stop(ctx, reportgate.Turn{Session: s, Host: s.Host, Message: final(nonce, answer) + meta(nonce, `{"language":"en","solved":true}`)})
	if err != nil || v.Block || v.Report.Status != warden.ReportFinal {
		t.Fatalf("stop of %s: %+v %v, want the report final", s.ID, v, err)
	}
	return v.Report
}

// TestResponseCache: a report that answers a session's one request is
// kept under the request's key; a later session whose first request is
// identical (white space aside) is served from it: its report is final
// with the cached report and metadata, the hit is counted and audited,
// and the plugin's on-complete command receives the completion with
// from_cache true and the request. Another host, a second request in a
// session, a host that cannot serve, an expired entry and changed plugin
// files are misses; a session with two requests leaves no entry.
func TestResponseCache(t *testing.T) {
	pol, st, dir := project(t, cacheSection)
	g := &reportgate.Gate{Policy: pol, Store: st} // on-complete runs here, waited for
	const ask = "Why does the printer jam?"

	a := session(t, st, "a", "claude")
	na := start(t, pol, st, "a")
	if sv, err := g.Prompt(ctx, reportgate.Request{Session: a, Host: "claude", Prompt: ask, Serve: true}); sv != nil || err != nil {
		t.Fatalf("first request: served %+v %v from an empty cache", sv, err)
	}
	finish(t, g, st, a, na, "The paper tray is bent.")
	es, err := st.CachedReports(ctx, 0)
	if err != nil || len(es) != 1 || es[0].Request != ask || es[0].Session != "a" || es[0].Host != "claude" ||
		!strings.Contains(es[0].FinalReport, "paper tray") || len(es[0].Metas["support"]) == 0 || es[0].Plugins != pol.Report.Files.Hash() {
		t.Fatalf("cache after a's report: %+v %v", es, err)
	}
	if es[0].Key != reportgate.CacheKey(pol, "claude", "", reportgate.RequestSum(ask)) {
		t.Errorf("entry key %s is not the request's key", es[0].Key)
	}

	b := session(t, st, "b", "claude")
	start(t, pol, st, "b")
	sv, err := g.Prompt(ctx, reportgate.Request{Session: b, Host: "claude", Prompt: "  Why does the\tprinter   jam?\n", Serve: true})
	if err != nil || sv == nil || !strings.Contains(sv.Text, "The paper tray is bent.") || !strings.Contains(sv.Text, "session a") {
		t.Fatalf("identical request: served %+v %v, want the cached report", sv, err)
	}
	r, err := st.Report(ctx, "b")
	if err != nil || r.Status != warden.ReportFinal || !strings.Contains(r.FinalReport, "paper tray") || string(r.Metas["support"]) != `{"language":"en","solved":true}` || !r.Completed {
		t.Fatalf("b's report: %+v %v, want it final from the cache and completed", r, err)
	}
	done := completed(t, dir)
	if len(done) != 2 || done[0]["from_cache"] != false || done[1]["from_cache"] != true || done[1]["session_id"] != "b" ||
		done[1]["request"] != "Why does the\tprinter   jam?" || done[1]["plugin"] != "support" {
		t.Fatalf("on-complete inputs: %v, want a's generated and b's from the cache with the request", done)
	}
	if ag, _ := done[1]["agent"].(map[string]any); ag["host"] != "claude" || ag["session"] != "b" {
		t.Errorf("b's completion agent: %v", done[1]["agent"])
	}
	if e, _ := st.CachedReport(ctx, es[0].Key); e.Hits != 1 {
		t.Errorf("hits %d, want 1", e.Hits)
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{Session: "b", Tool: reportgate.Tool})
	if err != nil || len(recs) != 1 || recs[0].Decision != warden.Allow || recs[0].Args["from_cache"] != true || !strings.Contains(recs[0].Reason, "response cache") {
		t.Fatalf("b's audit: %+v %v", recs, err)
	}
	if v, err := g.Stop(ctx, reportgate.Turn{Session: b, Host: "claude", Message: "anything"}); err != nil || v.Changed || v.Block {
		t.Errorf("stop after serving: %+v %v, want nothing checked", v, err)
	}

	miss := func(name string, s warden.Session, host, prompt string, serve bool) {
		t.Helper()
		if sv, err := g.Prompt(ctx, reportgate.Request{Session: s, Host: host, Prompt: prompt, Serve: serve}); sv != nil || err != nil {
			t.Errorf("%s: served %+v (%v), want a miss", name, sv, err)
		}
	}
	miss("another host", session(t, st, "c", "gemini"), "gemini", ask, true)
	miss("a host that cannot serve", session(t, st, "d", "opencode"), "claude", ask, false)
	if rr, err := st.ReportRequest(ctx, "d"); err != nil || rr.Prompts != 1 {
		t.Errorf("the request of a session not served is not recorded: %+v %v", rr, err)
	}
	e := session(t, st, "e", "claude")
	ne := start(t, pol, st, "e")
	miss("other request", e, "claude", "Something else", true)
	miss("second request of a session", e, "claude", ask, true)
	finish(t, g, st, e, ne, "An answer to two requests.")
	if es, _ := st.CachedReports(ctx, 0); len(es) != 1 {
		t.Errorf("a session with two requests left an entry: %d entries", len(es))
	}

	st.(*sqlite.Store).Clock = func() time.Time { return time.Now().Add(time.Hour + time.Minute) }
	miss("expired", session(t, st, "f", "claude"), "claude", ask, true)
	st.(*sqlite.Store).Clock = nil

	// A plugin file changed: another key, and an entry made with the
	// old files is not used under the new key either.
	plugin := filepath.Join(dir, "report", "support.yaml")
	data, _ := os.ReadFile(plugin)
	if err := os.WriteFile(plugin, append(data, "# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	pol2, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	g2 := &reportgate.Gate{Policy: pol2, Store: st}
	old := es[0]
	old.Key = reportgate.CacheKey(pol2, "claude", "", reportgate.RequestSum(ask))
	if _, err := st.PutCachedReport(ctx, old); err != nil {
		t.Fatal(err)
	}
	h := session(t, st, "h", "claude")
	if sv, err := g2.Prompt(ctx, reportgate.Request{Session: h, Host: "claude", Prompt: ask, Serve: true}); sv != nil || err != nil {
		t.Errorf("entry of other plugin files: served %+v %v", sv, err)
	}
	if r, err := st.Report(ctx, "h"); err == nil && r.Status == warden.ReportFinal {
		t.Errorf("h's report final after a miss: %+v", r)
	}
}

// TestCacheKey: identical means the same normalised request, project,
// policy, plugin files, host and role; each part changes the key.
func TestCacheKey(t *testing.T) {
	t.Parallel()
	pol, _, _ := project(t, cacheSection)
	sum := reportgate.RequestSum("Fix the build")
	base := reportgate.CacheKey(pol, "claude", "coder", sum)
	if reportgate.RequestSum(" Fix\r\nthe  build ") != sum || reportgate.RequestSum("fix the build") == sum {
		t.Error("white space must not count, letter case must")
	}
	if reportgate.RequestSum("e\u0301") != reportgate.RequestSum("\u00e9") {
		t.Error("Unicode forms of one text are one request")
	}
	other := *pol
	other.Digest[0] ^= 1
	otherDir := *pol
	otherDir.Dir += "2"
	for name, k := range map[string]string{
		"request": reportgate.CacheKey(pol, "claude", "coder", reportgate.RequestSum("Fix the tests")),
		"host":    reportgate.CacheKey(pol, "codex", "coder", sum),
		"role":    reportgate.CacheKey(pol, "claude", "", sum),
		"policy":  reportgate.CacheKey(&other, "claude", "coder", sum),
		"project": reportgate.CacheKey(&otherDir, "claude", "coder", sum),
	} {
		if k == base {
			t.Errorf("another %s gives the same key", name)
		}
	}
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Errorf("key %q", base)
	}
}

// TestRequestRecordedWithoutCache: without the cache, the prompt hook
// still records a session's first request, and the completion carries it
// where the host gives no transcript (OpenCode), not the latest prompt.
func TestRequestRecordedWithoutCache(t *testing.T) {
	pol, st, dir := project(t, section)
	g := &reportgate.Gate{Policy: pol, Store: st}
	s := session(t, st, "o1", "opencode")
	n := start(t, pol, st, "o1")
	for _, p := range []string{"Fix the login page", "also the footer"} {
		if sv, err := g.Prompt(ctx, reportgate.Request{Session: s, Host: "opencode", Prompt: p, Serve: true}); sv != nil || err != nil {
			t.Fatalf("prompt %q: %+v %v, want no cache without report.cache", p, sv, err)
		}
	}
	s.Intent = "also the footer"
	finish(t, g, st, s, n, "Both fixed.")
	done := completed(t, dir)
	if len(done) != 1 || done[0]["request"] != "Fix the login page" || done[0]["from_cache"] != false {
		t.Fatalf("completion %v, want the first request", done)
	}
	if es, _ := st.CachedReports(ctx, 0); len(es) != 0 {
		t.Errorf("entries kept without report.cache: %+v", es)
	}
}

// TestRetryPromptNotARequest: the gate's retry text coming back as a
// prompt (Gemini CLI sends a held turn's reason as the next prompt, with
// < and > escaped) is not counted as a user request, so the report still
// answers one request and is kept.
func TestRetryPromptNotARequest(t *testing.T) {
	pol, st, _ := project(t, cacheSection)
	g := &reportgate.Gate{Policy: pol, Store: st}
	s := session(t, st, "g1", "gemini")
	n := start(t, pol, st, "g1")
	if _, err := g.Prompt(ctx, reportgate.Request{Session: s, Host: "gemini", Prompt: "Why does the printer jam?", Serve: true}); err != nil {
		t.Fatal(err)
	}
	v, err := g.Stop(ctx, reportgate.Turn{Session: s, Host: "gemini", Message: final(n, "The tray.")})
	if err != nil || !v.Block {
		t.Fatalf("stop without metadata: %+v %v, want a retry", v, err)
	}
	echoed := strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(v.Reason)
	if _, err := g.Prompt(ctx, reportgate.Request{Session: s, Host: "gemini", Prompt: echoed, Serve: true}); err != nil {
		t.Fatal(err)
	}
	if rr, err := st.ReportRequest(ctx, "g1"); err != nil || rr.Prompts != 1 {
		t.Fatalf("request record %+v %v, want the retry prompt not counted", rr, err)
	}
	if v, err := g.Stop(ctx, reportgate.Turn{Session: s, Host: "gemini", Message: meta(n, `{"language":"en","solved":true}`)}); err != nil || v.Report.Status != warden.ReportFinal {
		t.Fatalf("metadata after the retry: %+v %v", v, err)
	}
	if es, _ := st.CachedReports(ctx, 0); len(es) != 1 {
		t.Errorf("%d entries, want the report kept", len(es))
	}
}
