package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/pgtest"
)

// TestServeReplicas runs two `warden serve` processes on one PostgreSQL
// database: a call waiting on replica A is released by a person who
// answers it in the page served by replica B; a halt set on B stops calls
// on A; calls sent to both at once, and retried on the other replica with
// the same call id, leave exactly one audit record each.
func TestServeReplicas(t *testing.T) {
	store := pgtest.Schema(t)
	dir := serveProject(t, servePolicy)
	agent := serveToken(t, dir, "agent", "ci-bot")
	person := serveToken(t, dir, "person", "alice")
	a := startServe(t, dir, "--store", store)
	b := startServe(t, dir, "--store", store)

	// The page on B shows A's waiting call, live, and answers it.
	ctx, problems := browser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.url+"/"),
		chromedp.WaitVisible(chromedp.CSS("#login form")),
		chromedp.SendKeys(chromedp.ID("token"), person),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("approvals-empty")),
		chromedp.WaitVisible(chromedp.CSS(`#live.on`)),
	)
	if err != nil {
		t.Fatalf("log in on B: %v", err)
	}
	waited := make(chan decideAnswer, 1)
	go func() { waited <- a.decide(agent, touchCall("replica.txt", "s-rep"), "90s") }()
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#approvals-list li.card`)),
		screenshot(t, "serve-replica-b-pending"),
		chromedp.Click(chromedp.CSS(`#approvals-list li.card button.answer`)),
		chromedp.WaitVisible(chromedp.ID("answer")),
		chromedp.Click(chromedp.ID("approve-btn")),
		chromedp.WaitVisible(chromedp.ID("approvals-empty")),
	)
	if err != nil {
		t.Fatalf("answer on B's page: %v\nA: %s\nB: %s", err, a.logs.String(), b.logs.String())
	}
	if d := awaitDecision(t, waited); d.Decision.Decision != warden.Allow {
		t.Fatalf("the call waiting on A after the answer on B: %+v", d)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("B's page logged problems:\n%s", strings.Join(p, "\n"))
	}

	// A halt set on B applies on A, and lifting it there too.
	echo := map[string]any{"tool": "Bash", "args": map[string]any{"command": "echo hi"}, "session": "s-rep"}
	if code := b.call("POST", "/v1/halts", person, map[string]any{"message": "stop everything"}, nil); code != 200 {
		t.Fatalf("halt on B: %d", code)
	}
	if d := a.decide(agent, echo, ""); d.Decision.Code != warden.CodeHalted {
		t.Fatalf("a call on A after the halt on B: %+v", d)
	}
	if code := b.call("POST", "/v1/halts/resume", person, map[string]any{}, nil); code != 200 {
		t.Fatalf("resume on B: %d", code)
	}
	if d := a.decide(agent, echo, ""); d.Decision.Decision != warden.Allow {
		t.Fatalf("a call on A after the resume on B: %+v", d)
	}

	// Calls to both replicas at once; each one also retried on the other
	// replica with its call id (a client that timed out and tried again).
	var before []warden.AuditRecord
	a.call("GET", "/v1/audit", person, nil, &before)
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		for _, r := range []*served{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				call := map[string]any{"tool": "Bash", "args": map[string]any{"command": fmt.Sprintf("echo %d", i)}, "session": fmt.Sprintf("s-load-%d", i%4)}
				var d decideAnswer
				code := r.call("POST", "/v1/decide", agent, map[string]any{"call": call, "call_id": fmt.Sprintf("c-%d", i)}, &d)
				if code != 200 || d.Decision.Decision != warden.Allow {
					t.Errorf("call %d: %d %+v", i, code, d)
				}
			}()
		}
	}
	wg.Wait()
	var after []warden.AuditRecord
	b.call("GET", "/v1/audit?limit=0", person, nil, &after)
	seen := map[string]int{}
	for _, r := range after {
		if strings.HasPrefix(r.CallID, "c-") {
			seen[r.CallID]++
		}
	}
	if len(after)-len(before) != n || len(seen) != n {
		t.Fatalf("audit: %d new records for %d calls (%d call ids)", len(after)-len(before), n, len(seen))
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("call %s has %d audit records", id, k)
		}
	}
}
