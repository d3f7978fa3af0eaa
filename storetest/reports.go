package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/warden-run/warden"
)

// testReports: a session's report is created by its first update, keeps
// what each update leaves (metadata JSON included), stores nothing when fn
// fails, takes concurrent updates one after the other (a retry counter
// loses no increment), and is listed newest first, by status.
func testReports(t *testing.T, s warden.Store) {
	if _, err := s.Report(ctx, "a"); !errors.Is(err, warden.ErrNotFound) {
		t.Fatalf("report before any: %v", err)
	}
	r, err := s.UpdateReport(ctx, "a", func(r *warden.Report, created bool) error {
		if !created || r.Session != "a" || r.Nonce != "" {
			return fmt.Errorf("new report: created=%v %+v", created, r)
		}
		r.Nonce, r.Status = "1f2e3d4c", warden.ReportPending
		return nil
	})
	if err != nil || r.Nonce != "1f2e3d4c" || r.CreatedAt.IsZero() || r.UpdatedAt.IsZero() {
		t.Fatalf("create: %+v %v", r, err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateReport(ctx, "b", func(r *warden.Report, _ bool) error { r.Nonce = "x"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("failing fn: %v", err)
	}
	if _, err := s.Report(ctx, "b"); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("a failing fn created report b: %v", err)
	}
	if _, err := s.UpdateReport(ctx, "a", func(r *warden.Report, _ bool) error { r.Nonce = "changed"; return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	meta := json.RawMessage(`{"language":"en","tags":["a","b"]}`)
	_, err = s.UpdateReport(ctx, "a", func(r *warden.Report, created bool) error {
		if created || r.Nonce != "1f2e3d4c" {
			return fmt.Errorf("second update: created=%v %+v", created, r)
		}
		r.Status, r.Turns, r.Retries = warden.ReportFinal, 2, 1
		r.FinalReport = "All done.\nSee the list."
		r.Metas = map[string]json.RawMessage{"support": meta}
		r.Problem = "metadata for plugin \"support\" is missing"
		r.Completed = true
		return nil
	})
	check(t, err)
	got, err := s.Report(ctx, "a")
	check(t, err)
	if got.Status != warden.ReportFinal || got.Turns != 2 || got.Retries != 1 || got.FinalReport != "All done.\nSee the list." ||
		string(got.Metas["support"]) != string(meta) || !got.Completed || got.Problem == "" || got.Nonce != "1f2e3d4c" {
		t.Errorf("stored report: %+v", got)
	}
	if !got.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("created_at changed: %v, then %v", r.CreatedAt, got.CreatedAt)
	}

	// Concurrent retries: every increment counts.
	const n = 8
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.UpdateReport(ctx, "c", func(r *warden.Report, _ bool) error { r.Retries++; return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if c, err := s.Report(ctx, "c"); err != nil || c.Retries != n {
		t.Errorf("after %d concurrent increments: %+v %v", n, c, err)
	}
	if _, err := s.UpdateReport(ctx, "c", func(r *warden.Report, _ bool) error { r.Status = warden.ReportFailed; return nil }); err != nil {
		t.Fatal(err)
	}

	all, err := s.Reports(ctx, warden.ReportFilter{})
	if err != nil || len(all) != 2 || all[0].Session != "c" || all[1].Session != "a" {
		t.Fatalf("reports: %+v %v", all, err)
	}
	final, err := s.Reports(ctx, warden.ReportFilter{Status: warden.ReportFinal})
	if err != nil || len(final) != 1 || final[0].Session != "a" || string(final[0].Metas["support"]) != string(meta) {
		t.Errorf("final reports: %+v %v", final, err)
	}
	if one, err := s.Reports(ctx, warden.ReportFilter{Limit: 1}); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %+v %v", one, err)
	}
}
