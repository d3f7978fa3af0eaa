package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// testReportCache: an entry is stored under its key with its metadata,
// replaced (hits reset) by a put with the same key, counted by hits,
// listed newest first and deleted by key, by age or all at once; a
// session's requests keep the first one's digest and text and count the
// others, concurrent notes included, and a served session keeps the key.
func testReportCache(t *testing.T, s warden.Store) {
	if _, err := s.CachedReport(ctx, "k1"); !errors.Is(err, warden.ErrNotFound) {
		t.Fatalf("entry before any: %v", err)
	}
	if err := s.HitCachedReport(ctx, "k1"); !errors.Is(err, warden.ErrNotFound) {
		t.Fatalf("hit of no entry: %v", err)
	}
	meta := json.RawMessage(`{"language":"en","tags":["a","b"]}`)
	e := warden.CachedReport{Key: "k1", Request: "fix the printer", Host: "claude", Role: "support", Plugins: "sha256:ab",
		FinalReport: "The printer works.\nIt was the cable.", Metas: map[string]json.RawMessage{"support": meta}, Session: "s1"}
	put := must(s.PutCachedReport(ctx, e))(t)
	if put.CreatedAt.IsZero() || put.Hits != 0 {
		t.Fatalf("put: %+v", put)
	}
	got := must(s.CachedReport(ctx, "k1"))(t)
	if got.Request != e.Request || got.Host != "claude" || got.Role != "support" || got.Plugins != "sha256:ab" ||
		got.FinalReport != e.FinalReport || string(got.Metas["support"]) != string(meta) || got.Session != "s1" ||
		!got.CreatedAt.Equal(put.CreatedAt) || got.Hits != 0 || !got.LastHit.IsZero() {
		t.Fatalf("stored entry: %+v", got)
	}
	check(t, s.HitCachedReport(ctx, "k1"))
	check(t, s.HitCachedReport(ctx, "k1"))
	got = must(s.CachedReport(ctx, "k1"))(t)
	if got.Hits != 2 || got.LastHit.IsZero() {
		t.Fatalf("after two hits: hits %d last %v", got.Hits, got.LastHit)
	}
	e.FinalReport, e.Session = "Replaced.", "s2"
	must(s.PutCachedReport(ctx, e))(t)
	got = must(s.CachedReport(ctx, "k1"))(t)
	if got.FinalReport != "Replaced." || got.Session != "s2" || got.Hits != 0 {
		t.Fatalf("replaced entry: %+v", got)
	}
	must(s.PutCachedReport(ctx, warden.CachedReport{Key: "k2", FinalReport: "Two."}))(t)
	if _, err := s.PutCachedReport(ctx, warden.CachedReport{FinalReport: "no key"}); err == nil {
		t.Error("put without a key: no error")
	}
	list := must(s.CachedReports(ctx, 0))(t)
	if len(list) != 2 || list[0].Key != "k2" || list[1].Key != "k1" {
		t.Fatalf("list: %+v, want k2 then k1", list)
	}
	if l := must(s.CachedReports(ctx, 1))(t); len(l) != 1 {
		t.Errorf("list limit 1: %d entries", len(l))
	}
	if n := must(s.DeleteCachedReports(ctx, "", list[1].CreatedAt.Add(-time.Microsecond)))(t); n != 0 {
		t.Errorf("delete before the oldest: %d deleted", n)
	}
	if n := must(s.DeleteCachedReports(ctx, "k1", time.Time{}))(t); n != 1 {
		t.Errorf("delete k1: %d deleted", n)
	}
	if _, err := s.CachedReport(ctx, "k1"); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("k1 after delete: %v", err)
	}
	if n := must(s.DeleteCachedReports(ctx, "", s.Now().Add(time.Second)))(t); n != 1 {
		t.Errorf("delete older than now: %d deleted, want 1", n)
	}
	must(s.PutCachedReport(ctx, warden.CachedReport{Key: "k3"}))(t)
	if n := must(s.DeleteCachedReports(ctx, "", time.Time{}))(t); n != 1 {
		t.Errorf("delete all: %d deleted, want 1", n)
	}

	if _, err := s.ReportRequest(ctx, "s1"); !errors.Is(err, warden.ErrNotFound) {
		t.Fatalf("request before any: %v", err)
	}
	if err := s.ServeReportRequest(ctx, "s1", "k1"); !errors.Is(err, warden.ErrNotFound) {
		t.Fatalf("serve a session without a request: %v", err)
	}
	r := must(s.NoteReportRequest(ctx, "s1", "sha256:first", "fix the printer"))(t)
	if r.Prompts != 1 || r.Sum != "sha256:first" || r.Request != "fix the printer" || r.CreatedAt.IsZero() || r.Served != "" {
		t.Fatalf("first request: %+v", r)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := s.NoteReportRequest(ctx, "s1", fmt.Sprintf("sha256:%d", i), "later"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	check(t, s.ServeReportRequest(ctx, "s1", "k9"))
	r = must(s.ReportRequest(ctx, "s1"))(t)
	if r.Prompts != 9 || r.Sum != "sha256:first" || r.Request != "fix the printer" || r.Served != "k9" {
		t.Fatalf("after nine requests: %+v, want 9 prompts and the first request kept", r)
	}
}
