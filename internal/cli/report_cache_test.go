package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/reportgate"
	"github.com/warden-run/warden/sqlite"
)

// TestReportCacheCommands: `report cache key` prints the key the hooks
// use for a request; ls, show (by a key's prefix) and clear (one key, the
// expired ones, all) work on the store's entries; `report complete
// --transcript` hands a session served from the cache to the plugins with
// from_cache, the request, the transcript's messages and the agent.
func TestReportCacheCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "reportgate", "testdata", "report"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the plugin: %v %s", err, out)
	}
	polFile := filepath.Join(dir, "warden.yaml")
	os.WriteFile(polFile, []byte("version: 1\nreport:\n  plugins: [report/support.yaml]\n  cache: {enabled: true, ttl: 1h}\n"), 0o644)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runReportCmd(t, "", append(args, "--policy", polFile)...)
	}
	pol, err := policy.Load(polFile)
	if err != nil {
		t.Fatal(err)
	}
	const ask = "Why does the printer jam?"
	code, out, errs := run("cache", "key", "--host", "gemini", "--role", "support", ask)
	key := reportgate.CacheKey(pol, "gemini", "support", reportgate.RequestSum(ask))
	if code != ExitOK || strings.TrimSpace(out) != key {
		t.Fatalf("cache key: exit %d %q %s, want %s", code, out, errs, key)
	}

	st, err := sqlite.Open(ctx, filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	metas := map[string]json.RawMessage{"support": json.RawMessage(`{"language":"en","solved":true}`)}
	for _, e := range []warden.CachedReport{
		{Key: key, Request: ask, Host: "gemini", Role: "support", Plugins: pol.Report.Files.Hash(), FinalReport: "The tray.", Metas: metas, Session: "s0"},
		{Key: "sha256:00aa", Request: "other", FinalReport: "Other."},
	} {
		if _, err := st.PutCachedReport(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// A session served from the entry, whose on-complete is still due.
	st.UpdateSession(ctx, "s1", func(s *warden.Session, _ bool) error { s.Host, s.Role = "gemini", "support"; return nil })
	st.NoteReportRequest(ctx, "s1", reportgate.RequestSum(ask), ask)
	st.ServeReportRequest(ctx, "s1", key)
	st.UpdateReport(ctx, "s1", func(r *warden.Report, _ bool) error {
		r.Nonce, r.Status, r.FinalReport, r.Metas = "1f2e3d4c", warden.ReportFinal, "The tray.", metas
		return nil
	})
	st.Close()

	code, out, errs = run("cache", "ls")
	short := strings.TrimPrefix(key, "sha256:")[:12]
	if code != ExitOK || !strings.Contains(out, short) || !strings.Contains(out, ask) || !strings.Contains(out, "live") || !strings.Contains(out, "00aa") {
		t.Fatalf("cache ls: exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = run("cache", "show", short, "--json")
	var e warden.CachedReport
	if code != ExitOK || json.Unmarshal([]byte(out), &e) != nil || e.Key != key || e.FinalReport != "The tray." {
		t.Fatalf("cache show --json: exit %d %s\n%s", code, errs, out)
	}
	if code, out, _ := run("cache", "show", "sha256:"+short); code != ExitOK || !strings.Contains(out, "The tray.") || !strings.Contains(out, `metadata "support"`) {
		t.Errorf("cache show: exit %d\n%s", code, out)
	}
	if code, _, errs := run("cache", "show", "ffff"); code != ExitError || !strings.Contains(errs, "no cached report") {
		t.Errorf("cache show of no entry: exit %d %s", code, errs)
	}

	tr := filepath.Join(dir, "chat.jsonl")
	os.WriteFile(tr, []byte(`{"sessionId":"s1","projectHash":"h"}`+"\n"+`{"id":"u1","type":"user","content":[{"text":"`+ask+`"}]}`+"\n"), 0o644)
	if code, _, errs := run("complete", "--session", "s1", "--transcript", tr); code != ExitOK {
		t.Fatalf("complete: exit %d %s", code, errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "completed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		FromCache  bool   `json:"from_cache"`
		Request    string `json:"request"`
		Transcript string `json:"transcript"`
		Messages   []struct{ Role, Text string }
		Agent      struct{ Host, Role, Session string }
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(data))), &c); err != nil {
		t.Fatalf("on-complete input %s: %v", data, err)
	}
	if !c.FromCache || c.Request != ask || c.Transcript != tr || len(c.Messages) != 1 || c.Messages[0].Text != ask ||
		c.Agent.Host != "gemini" || c.Agent.Role != "support" || c.Agent.Session != "s1" {
		t.Errorf("on-complete input: %+v", c)
	}

	if code, _, errs := run("cache", "clear"); code != ExitError || !strings.Contains(errs, "give one of") {
		t.Errorf("clear without what: exit %d %s", code, errs)
	}
	if code, out, _ := run("cache", "clear", "--expired"); code != ExitOK || !strings.Contains(out, "deleted 0") {
		t.Errorf("clear --expired of live entries: exit %d %s", code, out)
	}
	if code, out, _ := run("cache", "clear", short); code != ExitOK || !strings.Contains(out, "deleted 1") {
		t.Errorf("clear KEY: exit %d %s", code, out)
	}
	if code, out, _ := run("cache", "clear", "--all"); code != ExitOK || !strings.Contains(out, "deleted 1") {
		t.Errorf("clear --all: exit %d %s", code, out)
	}
	if code, out, _ := run("cache", "ls"); code != ExitOK || !strings.Contains(out, "no cached reports") {
		t.Errorf("ls after clear: exit %d %s", code, out)
	}
}
