package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/internal/sqlstore"
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/storetest"
)

// freshStore opens a store in a new schema that is dropped after the test.
func freshStore(t *testing.T, db *sql.DB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), pgtest.SchemaOn(t, db))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	db := pgtest.Admin(t)
	storetest.Run(t, func(t *testing.T) warden.Store { return freshStore(t, db) })
}

// TestConcurrentOpen opens one new schema from many connections at once:
// the migration runs exactly once.
func TestConcurrentOpen(t *testing.T) {
	db := pgtest.Admin(t)
	url := pgtest.SchemaOn(t, db)
	stores := make(chan *postgres.Store, 8)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Error(err)
				return
			}
			stores <- s
		}()
	}
	wg.Wait()
	close(stores)
	var s *postgres.Store
	for x := range stores {
		s = x
		t.Cleanup(func() { x.Close() })
	}
	if s == nil {
		t.FailNow()
	}
	var v int
	if err := s.DB().QueryRow(`SELECT COUNT(*) FROM warden_schema`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != sqlstore.SchemaVersion {
		t.Errorf("%d schema rows, want %d", v, sqlstore.SchemaVersion)
	}
}

func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, "postgres://u:hunter2secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if err == nil {
		t.Fatal("open of an unreachable server: no error")
	}
	if strings.Contains(err.Error(), "hunter2secret") {
		t.Errorf("password in error: %v", err)
	}
}

// TestConcurrentViolations writes many denied decisions at once, each with
// its history entry and the trim of the live history in its transaction,
// from separate sessions: none fails (two trims once deadlocked, and the
// call was denied with the store's error), and every entry is kept.
func TestConcurrentViolations(t *testing.T) {
	s := freshStore(t, pgtest.Admin(t))
	defer s.Close()
	ctx := context.Background()
	const workers, each, keep = 16, 15, 5
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprintf("s%d", w)
			for range each {
				_, _, err := s.WriteDecision(ctx, sid, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
					x.Calls++
					h := warden.HistoryEntry{Session: sid, Action: "violation:deny:Bash", Result: "fail", Time: s.Now()}
					return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Deny, Mode: "enforce"},
						History: &h, HistoryKeep: keep}, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var all, live int
	if err := s.DB().QueryRow(`SELECT COUNT(*), COUNT(*) FILTER (WHERE archived = 0) FROM history`).Scan(&all, &live); err != nil {
		t.Fatal(err)
	}
	if all != workers*each || live < keep {
		t.Errorf("history: %d entries, %d live; want %d, at least %d live", all, live, workers*each, keep)
	}
}

// TestOutcomesLeaveSync: a connection that wrote an outcome with
// synchronous_commit off has it on again before a decision uses it.
func TestOutcomesLeaveSync(t *testing.T) {
	s := freshStore(t, pgtest.Admin(t))
	defer s.Close()
	storetest.OutcomesLeaveSync(t, s, s.DB(), "SHOW synchronous_commit", "on")
}

// TestPoolSize: a store holds at most MaxConns connections, or the URL's
// pool_max_conns; many decisions at once wait for one rather than fail
// for want of server connections. A bad number is an error that names it.
func TestPoolSize(t *testing.T) {
	db := pgtest.Admin(t)
	url := pgtest.SchemaOn(t, db)
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.DB().Stats().MaxOpenConnections; got != postgres.MaxConns {
		t.Errorf("max open connections %d, want %d", got, postgres.MaxConns)
	}
	s.Close()
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	s, err = postgres.Open(context.Background(), url+sep+"pool_max_conns=3")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.DB().Stats().MaxOpenConnections; got != 3 {
		t.Errorf("max open connections %d with pool_max_conns=3", got)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := s.WriteDecision(context.Background(), fmt.Sprint("p", i%5), func(x *warden.Session, _ bool) (*warden.DecisionRecord, error) {
				x.Calls++
				return &warden.DecisionRecord{Audit: warden.AuditRecord{Tool: "Bash", Decision: warden.Allow}}, nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if st := s.DB().Stats(); st.OpenConnections > 3 {
		t.Errorf("%d connections open, pool_max_conns=3", st.OpenConnections)
	}
	for _, bad := range []string{"pool_max_conns=0", "pool_max_conns=many"} {
		if _, err := postgres.Open(context.Background(), url+sep+bad); err == nil || !strings.Contains(err.Error(), "pool_max_conns") {
			t.Errorf("%s: %v, want an error that names it", bad, err)
		}
	}
	if _, err := postgres.Open(context.Background(), "host=127.0.0.1 pool_max_conns=x dbname=test"); err == nil || !strings.Contains(err.Error(), "pool_max_conns=x") {
		t.Errorf("key=value form with a bad pool_max_conns: %v", err)
	}
}

// TestReplicasWriteTogether: two stores on one database (two warden serve
// replicas) write decisions on the same sessions at once, with a grant of
// a few uses and calls both send: each session counts every write that
// succeeded, the grant is used as often as it may be, each call is
// recorded once, and no write fails but for those reasons (a group that
// meets the other replica's writes writes its calls alone).
func TestReplicasWriteTogether(t *testing.T) {
	db := pgtest.Admin(t)
	url := pgtest.SchemaOn(t, db)
	var stores [2]*postgres.Store
	for i := range stores {
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	const uses = 7
	g, err := stores[0].AddGrant(context.Background(), warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "x", UsesLeft: uses})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := map[string]int{}
	callIDs := map[string]int{}
	used := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 96 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			sid := fmt.Sprint("r-", i%3)
			callID := ""
			if i%4 == 0 {
				callID = fmt.Sprint("call-", i/8) // sent to both replicas
			}
			_, rec, err := stores[i%2].WriteDecision(context.Background(), sid, func(x *warden.Session, _ bool) (*warden.DecisionRecord, error) {
				x.Calls++
				dr := &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Allow, CallID: callID}}
				if i%5 == 0 {
					dr.UseGrants = []string{g.ID}
				}
				return dr, nil
			})
			var gu *warden.GrantUnusableError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				calls[sid]++
				if callID != "" {
					callIDs[callID]++
				}
				if i%5 == 0 {
					used++
				}
				if rec.ID == 0 {
					t.Errorf("write %d: no record id", i)
				}
			case errors.Is(err, warden.ErrConflict) && callID != "":
			case errors.As(err, &gu) && i%5 == 0:
			default:
				t.Errorf("write %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	for sid, n := range calls {
		x, err := stores[1].Session(context.Background(), sid)
		if err != nil || x.Calls != n {
			t.Errorf("session %s: %d calls (%v), %d writes succeeded", sid, x.Calls, err, n)
		}
	}
	for id, n := range callIDs {
		if n != 1 {
			t.Errorf("call %s recorded %d times", id, n)
		}
	}
	if used != uses {
		t.Errorf("the grant of %d uses was used %d times", uses, used)
	}
	recs, err := stores[0].Audit(context.Background(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range calls {
		total += n
	}
	if len(recs) != total {
		t.Errorf("%d records, %d writes succeeded", len(recs), total)
	}
}

// TestNoSecretAtRest: no table of the store's schema keeps a secret of a
// call in clear (storetest.NoSecretAtRest).
func TestNoSecretAtRest(t *testing.T) {
	s := freshStore(t, pgtest.Admin(t))
	defer s.Close()
	dir := filepath.Join(t.TempDir(), ".warden")
	s.SetSpool(filepath.Join(dir, "postgres-test.pending"))
	storetest.NoSecretAtRest(t, s, s.DB(), dir)
}

// TestSpoolTakenIn: storetest.SpoolTakenIn on a PostgreSQL store.
func TestSpoolTakenIn(t *testing.T) {
	s := freshStore(t, pgtest.Admin(t))
	defer s.Close()
	storetest.SpoolTakenIn(t, s, filepath.Join(t.TempDir(), ".warden", "postgres-test.pending"))
}

// TestSecretsRedactedOnUpgrade: storetest.SecretsRedactedOnUpgrade on a
// PostgreSQL store.
func TestSecretsRedactedOnUpgrade(t *testing.T) {
	url := pgtest.SchemaOn(t, pgtest.Admin(t))
	storetest.SecretsRedactedOnUpgrade(t, func() (warden.Store, *sql.DB) {
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		return s, s.DB()
	})
}
