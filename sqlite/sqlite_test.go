package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) warden.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), ".warden", "warden.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// haltedStore is a store for the halt benchmarks, with a halt of another
// session in it; it is closed when b ends.
func haltedStore(b *testing.B) *sqlite.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	st.SetHalt(context.Background(), warden.Halt{Session: "other", Message: "x"})
	return st
}

// BenchmarkHalted is the cost the emergency-halt check adds to every
// decision (one indexed query), to set beside BenchmarkHookdCall (a whole
// decision through hookd, store transaction included).
func BenchmarkHalted(b *testing.B) {
	st := haltedStore(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := st.Halted(ctx, "parent/agent-1"); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestEmptyFileIsAnError: a store file that turned empty, or was cut
// inside a page, is reported, not taken for a new store. warden never
// leaves an empty store file (it creates a store under another name), so
// even one just made is refused.
func TestEmptyFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "warden.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "empty (0 bytes)") {
		t.Errorf("open of a store that turned empty: %v, want an error saying it is empty", err)
	}
	fresh := filepath.Join(dir, "fresh.db")
	os.WriteFile(fresh, nil, 0o600)
	if _, err := sqlite.Open(context.Background(), fresh); err == nil || !strings.Contains(err.Error(), "empty (0 bytes)") {
		t.Errorf("open of an empty file created a moment ago: %v, want an error saying it is empty", err)
	}
	// Cut inside a page.
	cut := filepath.Join(dir, "cut.db")
	if st, err := sqlite.Open(context.Background(), cut); err != nil {
		t.Fatal(err)
	} else {
		st.Close()
	}
	if err := os.Truncate(cut, 5000); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(context.Background(), cut); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("open of a store cut inside a page: %v, want an error saying it was cut short", err)
	}
	// Garbage is not recreated either.
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o600)
	if _, err := sqlite.Open(context.Background(), junk); err == nil {
		t.Error("open of a file that is not a database: no error")
	}
	if data, _ := os.ReadFile(junk); !strings.HasPrefix(string(data), "not a database") {
		t.Error("the file that is not a database was overwritten")
	}
	// A folder where the store should be.
	os.Mkdir(filepath.Join(dir, "folder.db"), 0o700)
	if _, err := sqlite.Open(context.Background(), filepath.Join(dir, "folder.db")); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("open of a folder: %v", err)
	}
}

// TestDiskFullSaidAsSuch fills a small file system (a tmpfs; it needs
// root to mount one) and checks that the error says the disk is full.
func TestDiskFullSaidAsSuch(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount a tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	big := strings.Repeat("x", 32<<10)
	for i := range 200 {
		_, err = st.AppendAudit(ctx, warden.AuditRecord{Tool: "Write", Decision: warden.Allow, Code: warden.CodeAllowed,
			Args: map[string]any{"content": big + fmt.Sprint(i)}})
		if err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("200 records of 32 KiB fit on a 512 KiB file system")
	}
	if !strings.Contains(err.Error(), "is full") {
		t.Errorf("error on a full disk: %v, want one saying the disk is full", err)
	}
}

// TestGroupCommit: concurrent decisions, some of which fail, some of which
// conflict on a call id: every other write is stored, and a failed one
// leaves nothing, though they shared transactions.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	boom := errors.New("boom")
	const n = 120
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprint("s", i%7)
			_, _, errs[i] = st.WriteDecision(ctx, sid, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
				x.Calls++
				if i%10 == 3 {
					return nil, boom
				}
				call := fmt.Sprint("c", i)
				if i%10 == 7 {
					call = "c-shared" // all but one conflict
				}
				return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Allow, CallID: call}}, nil
			})
		}()
	}
	wg.Wait()
	failed, conflicts := 0, 0
	for i, err := range errs {
		switch {
		case i%10 == 3:
			if !errors.Is(err, boom) {
				t.Errorf("write %d: %v, want boom", i, err)
			}
			failed++
		case errors.Is(err, warden.ErrConflict):
			conflicts++
		case err != nil:
			t.Errorf("write %d: %v", i, err)
		}
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := n - failed - conflicts; len(recs) != want || conflicts != n/10-1 {
		t.Errorf("%d records, %d conflicts; want %d records and %d conflicts", len(recs), conflicts, want, n/10-1)
	}
	calls := 0
	for s := range 7 {
		x, err := st.Session(ctx, fmt.Sprint("s", s))
		if err != nil {
			t.Fatal(err)
		}
		calls += x.Calls
	}
	if calls != len(recs) {
		t.Errorf("sessions count %d calls, the audit trail %d: a failed write left its session change", calls, len(recs))
	}
}

// BenchmarkWriteDecisionParallel is the store's share of concurrent
// decisions (synchronous=FULL): with group commit, many share one sync.
func BenchmarkWriteDecisionParallel(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var seq atomic.Int64
	b.SetParallelism(25) // 50 writers on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		sid := fmt.Sprint("s", seq.Add(1))
		for pb.Next() {
			_, _, err := st.WriteDecision(ctx, sid, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
				x.Calls++
				return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Allow}}, nil
			})
			if err != nil {
				b.Error(err)
			}
		}
	})
}

// TestSpool: records spooled while the store was too busy join its audit
// trail when it is next opened; one whose call is recorded already is
// dropped, and a torn line is skipped.
func TestSpool(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warden.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, CallID: "c-done"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, r := range []warden.AuditRecord{
		{Tool: "Bash", Decision: warden.Deny, Code: warden.CodeTimeout, CallID: "c-1", Args: map[string]any{"command": "ls"}},
		{Tool: "Bash", Decision: warden.Deny, Code: warden.CodeTimeout, CallID: "c-done"},
		{Tool: "Write", Decision: warden.Deny, Code: warden.CodePolicyError, CallID: "c-2"},
	} {
		if err := sqlite.Spool(path, r); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.OpenFile(path+".pending", os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"tool":"Bash","deci`)
	f.Close()
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.CallID+":"+string(r.Decision)+":"+string(r.Code))
	}
	if want := "c-done:allow:,c-1:deny:DECISION_TIMEOUT,c-2:deny:POLICY_ERROR"; strings.Join(got, ",") != want {
		t.Errorf("records after the spool was taken in: %s, want %s", strings.Join(got, ","), want)
	}
	if recs[1].Args["command"] != "ls" {
		t.Errorf("spooled record args: %v", recs[1].Args)
	}
	if left, _ := filepath.Glob(path + ".pending*"); len(left) != 0 {
		t.Errorf("spool files left: %v", left)
	}
}

// TestGroupCommitPanic: a panic in one decision's function is that
// decision's error; the others in its group are stored.
func TestGroupCommitPanic(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = st.WriteDecision(ctx, fmt.Sprint("p", i), func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
				if i == 7 {
					panic("boom")
				}
				return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: x.ID, Tool: "Bash", Decision: warden.Allow}}, nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 7) != (err != nil) || i == 7 && !strings.Contains(err.Error(), "panic: boom") {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if recs, _ := st.Audit(ctx, warden.AuditFilter{}); len(recs) != 19 {
		t.Errorf("%d records, want 19", len(recs))
	}
}

// TestRecentSeesOtherProcesses: what one store keeps for Recent does not
// hide what another process does to the same file (a hook process beside
// hookd): its appended records, its outcomes, its purge.
func TestRecentSeesOtherProcesses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warden.db")
	a, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	base := time.Now().Add(-time.Hour)
	appendVia := func(s *sqlite.Store, i int) {
		t.Helper()
		if _, err := s.AppendAudit(ctx, warden.AuditRecord{Time: base.Add(time.Duration(i) * time.Minute), Session: "s", Tool: "Bash",
			Args: map[string]any{"command": fmt.Sprint("echo ", i)}, Decision: warden.Allow, ToolUse: fmt.Sprint("t", i)}); err != nil {
			t.Fatal(err)
		}
	}
	same := func(step string) {
		t.Helper()
		got, err := a.Recent(ctx, "s", 5)
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.Audit(ctx, warden.AuditFilter{Session: "s", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", step, got, want)
		}
	}
	for i := range 4 {
		appendVia(a, i)
	}
	same("own records")
	appendVia(b, 4)
	appendVia(b, 5)
	same("records the other store appended")
	if err := b.SetOutcome(ctx, warden.Outcome{Session: "s", Tool: "Bash", ToolUse: "t3", OK: false}); err != nil {
		t.Fatal(err)
	}
	same("an outcome the other store set")
	if _, err := b.PurgeAudit(ctx, base.Add(150*time.Second)); err != nil {
		t.Fatal(err)
	}
	same("the other store's purge")
}

// TestRecentConcurrent: decisions of one session and of others read Recent
// while records are appended and outcomes set; every read is a window of
// the session's records in id order, and at the end Recent is what Audit
// reads, outcomes included (run under -race in ./test.sh).
func TestRecentConcurrent(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprint("s", w%2)
			for i := range 30 {
				tu := fmt.Sprint("w", w, "-", i)
				if _, err := s.AppendAudit(ctx, warden.AuditRecord{Session: session, Tool: "Bash", Decision: warden.Allow,
					Args: map[string]any{"command": tu}, ToolUse: tu}); err != nil {
					errs <- err
					return
				}
				if err := s.SetOutcome(ctx, warden.Outcome{Session: session, Tool: "Bash", ToolUse: tu, OK: i%2 == 0}); err != nil {
					errs <- err
					return
				}
				recs, err := s.Recent(ctx, session, 10)
				if err != nil {
					errs <- err
					return
				}
				for j := range recs {
					if recs[j].Session != session || j > 0 && recs[j].ID <= recs[j-1].ID {
						errs <- fmt.Errorf("read %d of worker %d: record %d of %d out of place: %+v", i, w, j, len(recs), recs[j])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, session := range []string{"s0", "s1"} {
		got, _ := s.Recent(ctx, session, 500)
		want, _ := s.Audit(ctx, warden.AuditFilter{Session: session, Limit: 500})
		if len(got) != 60 || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("%s: Recent has %d records, Audit %d, or they differ", session, len(got), len(want))
		}
	}
}

// TestOutcomesLeaveSync: a connection that wrote an outcome without a sync
// goes back to synchronous=FULL (2) before the pool hands it to a decision.
func TestOutcomesLeaveSync(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.OutcomesLeaveSync(t, s, s.DB(), "PRAGMA synchronous", "2")
}

// BenchmarkSetOutcome is the outcome a host reports after each call it
// ran: one update of the call's record, committed without a sync.
func BenchmarkSetOutcome(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for b.Loop() {
		b.StopTimer()
		if _, err := st.AppendAudit(ctx, warden.AuditRecord{Time: time.Now(), Session: "s", Tool: "Bash", Decision: warden.Allow}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := st.SetOutcome(ctx, warden.Outcome{Session: "s", Tool: "Bash", OK: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecisionRead is what a decision reads before it is made, the
// halt in force and the grants: with two queries (Halted, Grants), and
// with one (HaltAndGrants).
func BenchmarkDecisionRead(b *testing.B) {
	st := haltedStore(b)
	ctx := context.Background()
	st.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "make"})
	b.Run("two-queries", func(b *testing.B) {
		for b.Loop() {
			if _, ok, err := st.Halted(ctx, "parent/agent-1"); ok || err != nil {
				b.Fatal(ok, err)
			}
			if g, err := st.Grants(ctx, warden.GrantFilter{Session: "parent/agent-1"}); len(g) != 1 || err != nil {
				b.Fatal(g, err)
			}
		}
	})
	b.Run("one-query", func(b *testing.B) {
		for b.Loop() {
			if _, ok, g, err := st.HaltAndGrants(ctx, "parent/agent-1", ""); ok || len(g) != 1 || err != nil {
				b.Fatal(ok, g, err)
			}
		}
	})
}

// TestNoSecretAtRest: no table of the store and no file in its folder
// keeps a secret of a call in clear (storetest.NoSecretAtRest).
func TestNoSecretAtRest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".warden")
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.NoSecretAtRest(t, s, s.DB(), dir)
}

// TestSpoolTakenIn: storetest.SpoolTakenIn on a SQLite store.
func TestSpoolTakenIn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".warden")
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.SpoolTakenIn(t, s, sqlite.SpoolFile(filepath.Join(dir, "warden.db")))
}

// TestSecretsRedactedOnUpgrade: storetest.SecretsRedactedOnUpgrade on a
// SQLite store.
func TestSecretsRedactedOnUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".warden", "warden.db")
	storetest.SecretsRedactedOnUpgrade(t, func() (warden.Store, *sql.DB) {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return s, s.DB()
	})
}
