package session_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

const repeatPolicy = `version: 1
default: allow
rules:
  - id: stop-loops
    effect: deny
    tool: shell
    repeat: {count: 3, within: 10m}
    message: This exact command already ran three times in ten minutes.
    suggestion: Read the last output and change the approach.
`

// TestRepeatHoldsUnderParallelCalls: identical calls of one session sent
// at once, to one store and to two stores on the same database (two
// processes, as a host's hooks and warden serve are), are decided as if
// one after the other: a rule that denies the fourth run of a command
// allows exactly three, whatever the order. Before the store checked that
// a decision's history was current, every call read the history before
// any was recorded, and all twelve were allowed.
func TestRepeatHoldsUnderParallelCalls(t *testing.T) {
	// Each opener gives a new database's name and opens a store on it.
	dbs := map[string]struct {
		name func(t testing.TB) string
		open func(name string) (warden.Store, error)
	}{
		"sqlite": {
			func(t testing.TB) string { return filepath.Join(t.TempDir(), sqlite.DefaultFile) },
			func(file string) (warden.Store, error) { return sqlite.Open(ctx, file) },
		},
		"postgres": {
			pgtest.Schema,
			func(url string) (warden.Store, error) { return postgres.Open(ctx, url) },
		},
	}
	open := func(t *testing.T, name string) (a, b warden.Store) {
		db := dbs[name]
		at := db.name(t)
		var st [2]warden.Store
		for i := range st {
			s, err := db.open(at)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			st[i] = s
		}
		return st[0], st[1]
	}
	for name := range dbs {
		for _, stores := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/stores=%d", name, stores), func(t *testing.T) {
				e := setup(t, repeatPolicy)
				eng, err := engine.Compile(e.pol, workspace.Live())
				if err != nil {
					t.Fatal(err)
				}
				a, b := open(t, name)
				trackers := []*session.Tracker{session.New(eng, a), session.New(eng, b)}[:stores]
				const calls = 12
				var wg sync.WaitGroup
				got := make([]warden.Decision, calls)
				for i := range calls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := trackers[i%stores].Decide(ctx, bash("loop", "", "make build"), session.Options{})
						if err != nil {
							t.Error(err)
						}
						got[i] = res.Decision
					}()
				}
				wg.Wait()
				allowed := 0
				for i, d := range got {
					switch {
					case d.Decision == warden.Allow:
						allowed++
					case d.Decision != warden.Deny || d.Rule != "stop-loops":
						t.Errorf("call %d: %s by %q (%s): want an allow or the rule's deny", i, d.Decision, d.Rule, d.Code)
					}
				}
				if allowed != 3 {
					t.Errorf("%d of %d identical calls sent at once were allowed; the rule allows 3", allowed, calls)
				}
				recs, err := a.Audit(ctx, warden.AuditFilter{Session: "loop"})
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) != calls {
					t.Errorf("%d audit records for %d calls", len(recs), calls)
				}
			})
		}
	}
}
