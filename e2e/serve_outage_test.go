package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/pgtest"
)

// TestServePostgresOutage: a `warden serve` on PostgreSQL loses its
// server in the middle of a burst of calls (a TCP proxy in front of it is
// stopped) and gets it back before the burst ends. Every call is answered
// (never an allow without a record); the calls answered while the server
// was down are STORE_UNAVAILABLE denies, not POLICY_ERROR; once the store
// answers again, the audit trail holds exactly one record per call.
func TestServePostgresOutage(t *testing.T) {
	proxy := pgtest.NewProxy(t, pgtest.Schema(t))
	dir := serveProject(t, servePolicy)
	agent := serveToken(t, dir, "agent", "ci-bot")
	person := serveToken(t, dir, "person", "alice")
	s := startServe(t, dir, "--store", proxy.URL)

	const workers, perWorker = 8, 100
	const total = workers * perWorker
	var mu sync.Mutex
	answered, allowed, unavailable, policyErrors := 0, 0, 0, 0
	stopped, started := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				call := map[string]any{"tool": "Bash", "args": map[string]any{"command": fmt.Sprintf("echo %d", i)}, "session": fmt.Sprintf("s-out-%d", w)}
				var d decideAnswer
				code := s.call("POST", "/v1/decide", agent, map[string]any{"call": call, "call_id": fmt.Sprintf("out-%d-%d", w, i)}, &d)
				mu.Lock()
				if code == 200 {
					answered++
					switch {
					case d.Decision.Decision == warden.Allow:
						allowed++
					case d.Decision.Code == warden.CodeStoreUnavailable:
						unavailable++
					case d.Decision.Code == warden.CodePolicyError:
						policyErrors++
					}
				} else {
					t.Errorf("call %d/%d: status %d", w, i, code)
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
	var seen map[string]int
	for i := 0; ; i++ {
		if d := s.decide(agent, map[string]any{"tool": "Bash", "args": map[string]any{"command": "echo back"}, "session": "s-back"}, ""); d.Decision.Decision != warden.Allow {
			t.Fatalf("a call after the outage: %+v", d)
		}
		var recs []warden.AuditRecord
		s.call("GET", "/v1/audit?limit=0", person, nil, &recs)
		seen = map[string]int{}
		for _, r := range recs {
			if strings.HasPrefix(r.CallID, "out-") {
				seen[r.CallID]++
			}
		}
		if len(seen) >= answered || i == 1000 {
			break
		}
	}
	t.Logf("%d calls answered (%d allowed, %d STORE_UNAVAILABLE, %d POLICY_ERROR), %d records of them", answered, allowed, unavailable, policyErrors, len(seen))
	if unavailable == 0 || policyErrors != 0 {
		t.Errorf("%d STORE_UNAVAILABLE and %d POLICY_ERROR denies while the store was down: want STORE_UNAVAILABLE only", unavailable, policyErrors)
	}
	if len(seen) != answered || answered != total {
		t.Errorf("%d calls, %d answered, %d with a record: every answered call has its record", total, answered, len(seen))
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("call %s has %d records", id, k)
		}
	}
}
