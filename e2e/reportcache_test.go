package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
)

// TestReportCacheHosts runs Claude Code, then Gemini CLI, twice each with
// the same request and a policy whose report cache is on. In the first
// run the model sends the final report, is held for the metadata and
// sends it (Gemini CLI sends the retry text as a prompt, which is not a
// user request): the report is stored final and kept in the cache, and
// its on-complete input carries the request, the transcript's messages
// and the agent. The second run's prompt is answered from the cache at
// the prompt hook (UserPromptSubmit, BeforeAgent): the model is not asked
// again, the second session's report is final with the cached report,
// and its on-complete input says from_cache.
func TestReportCacheHosts(t *testing.T) {
	t.Parallel()
	t.Run("claude", func(t *testing.T) { testReportCache(t, reportHosts[0]) })
	// Gemini CLI refuses the prompt at BeforeAgent the same way.
	t.Run("gemini", func(t *testing.T) { testReportCache(t, reportHosts[2]) })
}

func testReportCache(t *testing.T, h reportHost) {
	bin := requireHost(t, h.spec)
	e := newEnv(t,
		scripted.Turn{Name: "final without metadata", Match: scripted.All(h.main, scripted.Not(scripted.Contains(retryMarker))),
			Reply: func(q *scripted.Request) string {
				n := nonceOf(q)
				return "I checked the invoice.\n<warden-" + n + "-FINAL>\nYou were charged twice; the duplicate is refunded.\n</warden-" + n + "-FINAL>"
			}},
		scripted.Turn{Name: "metadata", Match: scripted.All(h.main, scripted.Contains(retryMarker)),
			Reply: func(q *scripted.Request) string {
				n := nonceOf(q)
				return "<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>"
			}},
	)
	e.write("warden.yaml", reportPolicy+"  cache: {enabled: true, ttl: 1h}\n")
	e.reportPlugin()
	h.setup(e, bin)
	if out, err := e.warden("init", h.name, "--bin", wardenBin); err != nil {
		t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
	}
	const ask = "Why was I charged twice?"
	first := h.run(e, bin, ask)
	second := h.run(e, bin, ask)
	failed := false
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			failed = true
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if failed || testing.Verbose() {
			e.dump(first)
			e.dump(second)
			log, _ := os.ReadFile(filepath.Join(e.project, ".warden", "report.log"))
			t.Logf("report.log:\n%s", log)
		}
	}()
	check(first.err == nil, "%s did not finish: %v", h.name, first.err)
	main := 0
	for _, q := range e.model.Requests() {
		if h.main(q) {
			main++
		}
	}
	check(main == 2, "%d model requests in the main conversations, want 2 (the answer and the retry; the second run is answered from the cache)", main)
	check(strings.Contains(second.stdout+second.stderr, "charged twice; the duplicate is refunded"),
		"the second run does not show the cached report:\n%s\n%s", tail(second.stdout, 2000), tail(second.stderr, 2000))

	st := e.store()
	ctx := context.Background()
	es, err := st.CachedReports(ctx, 0)
	check(err == nil && len(es) == 1 && es[0].Request == ask && es[0].Hits == 1 && es[0].Host == h.name, "cache entries: %+v %v", es, err)
	rs, err := st.Reports(ctx, warden.ReportFilter{Status: warden.ReportFinal})
	check(err == nil && len(rs) == 2, "final reports: %+v %v, want both sessions'", rs, err)

	var runs []map[string]any
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(filepath.Join(e.project, "completed.jsonl"))
		runs = nil
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				runs = append(runs, m)
			}
		}
		if len(runs) >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	check(len(runs) == 2, "on-complete ran %d times, want twice: %v", len(runs), runs)
	var gen, cached map[string]any
	for _, m := range runs {
		if m["from_cache"] == true {
			cached = m
		} else {
			gen = m
		}
	}
	check(gen != nil && cached != nil, "on-complete inputs: %v, want one generated and one from the cache", runs)
	if gen != nil {
		msgs, _ := gen["messages"].([]any)
		agent, _ := gen["agent"].(map[string]any)
		tr, _ := gen["transcript"].(string)
		check(gen["request"] == ask && len(msgs) >= 2 && agent["host"] == h.name && strings.HasSuffix(tr, ".jsonl"),
			"the generated completion lacks the request, the messages, the agent or the transcript: %v", gen)
		if len(msgs) >= 1 {
			m0, _ := msgs[0].(map[string]any)
			check(m0["role"] == "user" && m0["text"] == ask, "first message %v, want the user's request", m0)
		}
	}
	if cached != nil {
		fr, _ := cached["final_report"].(string)
		check(cached["request"] == ask && strings.Contains(fr, "charged twice"), "the cached completion: %v", cached)
	}
}
