package handler_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

// TestPostgresOutageEveryAnswerRecorded: calls answered while PostgreSQL
// is down (a TCP proxy in front of it stopped) are denied with
// STORE_UNAVAILABLE, by hook processes that cannot open the store and by
// a long-lived store (hookd's, serve's) whose queries fail; once the
// server is back, the audit trail holds one record per answer.
func TestPostgresOutageEveryAnswerRecorded(t *testing.T) {
	o := newOutage(t)
	proxy, viaProxy, cwd, file, resident, tr := o.proxy, o.proxy.URL, o.cwd, o.file, o.store, o.tr
	ctx := context.Background()

	answers := 0
	hookCall := func(cmd string) (string, string) {
		_, m, _ := runHook(t, nil, claudePre(cwd, cmd), "claude", "--store", viaProxy)
		answers++
		return permission(m)
	}
	residentCall := func(cmd string) warden.Decision {
		res, _ := tr.Decide(ctx, warden.ToolCall{Tool: "Bash", Session: "s1", Host: "claude", Args: map[string]any{"command": cmd}}, session.Options{CallID: fmt.Sprintf("resident-%d", answers)})
		answers++
		return res.Decision
	}
	for range 3 {
		if d, r := hookCall("ls"); d != "allow" {
			t.Fatalf("before the outage: %s %q", d, r)
		}
		if d := residentCall("ls -l"); d.Decision != warden.Allow {
			t.Fatalf("before the outage: %+v", d)
		}
	}

	proxy.Stop()
	const down = 10
	for i := range down {
		d, r := hookCall("ls")
		if d != "deny" || !strings.Contains(r, string(warden.CodeStoreUnavailable)) {
			t.Errorf("hook call %d with the store down: %s %q, want a STORE_UNAVAILABLE deny", i, d, r)
		}
		rd := residentCall("ls -l")
		if rd.Decision != warden.Deny || rd.Code != warden.CodeStoreUnavailable || !rd.Recoverable {
			t.Errorf("resident call %d with the store down: %s %s %q, want a recoverable STORE_UNAVAILABLE deny", i, rd.Decision, rd.Code, rd.Reason)
		}
	}
	spool := client.SpoolFile(file, viaProxy)
	if _, err := os.Stat(spool); err != nil {
		t.Fatalf("no spool file while the store is down: %v", err)
	}

	proxy.Start()
	// The next call of a hook opens the store, which takes the spool in.
	if d, r := hookCall("ls"); d != "allow" {
		t.Fatalf("after the outage: %s %q", d, r)
	}
	if _, err := os.Stat(spool); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the spool is still there after the store came back: %v", err)
	}
	// The resident store answers again too.
	if d := residentCall("ls -l"); d.Decision != warden.Allow {
		t.Errorf("resident after the outage: %+v", d)
	}
	recs, err := resident.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	unavailable := 0
	for _, r := range recs {
		if r.Code == warden.CodeStoreUnavailable {
			unavailable++
		}
	}
	t.Logf("answers %d, records %d (%d STORE_UNAVAILABLE)", answers, len(recs), unavailable)
	if len(recs) != answers || unavailable != 2*down {
		t.Errorf("%d answers, %d records (%d STORE_UNAVAILABLE, want %d): records must equal answers", answers, len(recs), unavailable, 2*down)
	}
}

// TestPostgresOutageMidBurst: PostgreSQL goes away in the middle of a
// burst of calls from many goroutines on one long-lived store (as warden
// serve holds it) and comes back before the burst ends: every call is
// answered (never an allow without a record), and once the store has
// taken the spool in, the audit trail holds exactly one record per call.
func TestPostgresOutageMidBurst(t *testing.T) {
	o := newOutage(t)
	proxy, st, tr := o.proxy, o.store, o.tr
	ctx := context.Background()

	const workers, perWorker = 8, 50
	const total = workers * perWorker
	var mu sync.Mutex
	answered, denied, unavailable := 0, 0, 0
	stopped, started := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				res, _ := tr.Decide(ctx, warden.ToolCall{Tool: "Bash", Session: fmt.Sprintf("burst-%d", w), Host: "claude",
					Args: map[string]any{"command": "ls -l"}}, session.Options{CallID: fmt.Sprintf("burst-%d-%d", w, i)})
				mu.Lock()
				answered++
				if res.Decision.Decision != warden.Allow {
					denied++
				}
				if res.Decision.Code == warden.CodeStoreUnavailable {
					unavailable++
				}
				n := answered
				mu.Unlock()
				switch n {
				case total / 4:
					proxy.Stop()
					close(stopped)
				case total / 2:
					<-stopped
					proxy.Start()
					close(started)
				}
			}
		}()
	}
	wg.Wait()
	<-started
	// More calls: the store answers, and with each record it takes in
	// some of what waits (a write spends little time on it), until
	// nothing waits.
	var recs []warden.AuditRecord
	for i := 0; ; i++ {
		res, err := tr.Decide(ctx, warden.ToolCall{Tool: "Bash", Session: "after", Args: map[string]any{"command": "ls"}},
			session.Options{CallID: fmt.Sprintf("after-%d", i)})
		if err != nil || res.Decision.Decision != warden.Allow {
			t.Fatalf("after the outage: %+v %v", res.Decision, err)
		}
		answered++
		if recs, err = st.Audit(ctx, warden.AuditFilter{}); err != nil {
			t.Fatal(err)
		}
		if len(recs) >= answered || i == 1000 {
			break
		}
	}
	t.Logf("%d answers (%d denied, %d STORE_UNAVAILABLE), %d records", answered, denied, unavailable, len(recs))
	if unavailable == 0 {
		t.Error("no call was answered while the store was down")
	}
	if len(recs) != answered {
		t.Errorf("%d answers, %d records: records must equal answers", answered, len(recs))
	}
	byCall := map[string]warden.AuditRecord{}
	for _, r := range recs {
		if _, dup := byCall[r.CallID]; dup || r.CallID == "" {
			t.Errorf("record %d: call id %q twice or empty", r.ID, r.CallID)
		}
		byCall[r.CallID] = r
	}
}

// outage is a project whose PostgreSQL store is reached through a proxy
// the test can stop, with a long-lived store and tracker on it (as hookd
// and warden serve hold them).
type outage struct {
	proxy *pgtest.Proxy
	cwd   string // a folder inside the project
	file  string // the policy
	store warden.Store
	tr    *session.Tracker
}

func newOutage(t *testing.T) outage {
	t.Helper()
	o := outage{proxy: pgtest.NewProxy(t, pgtest.Schema(t)), cwd: project(t, hookTestPolicy)}
	o.file = filepath.Join(filepath.Dir(filepath.Dir(o.cwd)), "warden.yaml")
	st, err := client.OpenStore(context.Background(), o.file, o.proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pol, err := policy.Load(o.file)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		t.Fatal(err)
	}
	o.store, o.tr = st, session.New(eng, st)
	return o
}
