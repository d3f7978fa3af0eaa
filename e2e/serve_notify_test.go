package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/warden-run/warden"
)

// TestServeNotifiesWaitingApproval: an approval that an agent's call queues
// on warden serve reaches the humans who can answer it, with nobody
// watching a terminal. The policy's webhook (approvals.notify, a receiver on
// 127.0.0.1) gets one notice with the approval, the rule and the page's
// link; on the open page (a real headless Chromium with notifications
// allowed) the tab's title counts it and one browser notification names
// it, without a reload.
func TestServeNotifiesWaitingApproval(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var b map[string]any
		if err := json.Unmarshal(data, &b); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
	}))
	defer rcv.Close()
	t.Setenv("WARDEN_E2E_NOTIFY", rcv.URL)

	ctx, problems := browser(t)
	dir := serveProject(t, servePolicy+"approvals:\n  notify:\n    webhook: env:WARDEN_E2E_NOTIFY\n    desktop: false\n")
	agent := serveToken(t, dir, "agent", "ci-bot")
	person := serveToken(t, dir, "person", "alice")
	s := startServe(t, dir)

	// Record every notification the page raises (the real constructor
	// still runs), and allow notifications for the service's origin.
	recorder := `(() => {
	  const Real = window.Notification; window.__notices = [];
	  if (!Real) return;
	  window.Notification = class extends Real {
	    constructor(title, opts) { super(title, opts); window.__notices.push(title + " | " + ((opts && opts.body) || "")); }
	  };
	})();`
	err := chromedp.Do(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recorder}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, tg, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: s.url})
		return chromedp.Void{}, err
	})
	if err != nil {
		t.Fatalf("prepare the browser: %v", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(chromedp.CSS("#login form")),
		chromedp.SendKeys(chromedp.ID("token"), person),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("approvals-empty")),
		chromedp.WaitVisible(chromedp.CSS(`#live.on`)),
	)
	if err != nil {
		t.Fatalf("log in: %v\n%s", err, s.logs.String())
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title + " | " + Notification.permission + " | " + document.getElementById("notify").hidden`))
	if err != nil || state != "warden | granted | true" {
		t.Fatalf("before any approval: %q (%v), want title warden, notifications granted, no Notify me button", state, err)
	}

	// The agent's call asks; it does not wait.
	var d struct {
		Decision warden.Decision  `json:"decision"`
		Approval *warden.Approval `json:"approval"`
	}
	if code := s.call("POST", "/v1/decide", agent, map[string]any{"call": touchCall("notify.txt", "s-notify")}, &d); code != 200 ||
		d.Decision.Decision != warden.Ask || d.Approval == nil {
		t.Fatalf("touch: status %d, %+v, want an ask that queued an approval", code, d)
	}
	id := d.Approval.ID
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err = chromedp.Do(wctx, chromedp.Poll[chromedp.Void](`document.title === "(1) warden" && window.__notices.length > 0`))
	if err != nil {
		title, _ := chromedp.Run(ctx, chromedp.Title())
		t.Fatalf("the page did not announce the approval: title %q: %v", title, err)
	}
	notices, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__notices`))
	if err != nil || len(notices) != 1 || !strings.Contains(notices[0], id) || !strings.Contains(notices[0], "touch notify.txt") {
		t.Errorf("browser notifications %q (%v), want one naming %s and the call", notices, err, id)
	}

	// The webhook got one notice for it, linking the page.
	mu.Lock()
	got := append([]map[string]any(nil), bodies...)
	mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("the webhook got %d notices, want 1: %v", len(got), got)
	}
	text, _ := got[0]["text"].(string)
	n, _ := got[0]["warden"].(map[string]any)
	if n["approval"] != id || n["rule"] != "ask-touch" || n["url"] != s.url+"/#approvals" || !strings.Contains(text, "touch notify.txt") {
		t.Errorf("webhook notice: %v", got[0])
	}

	// warden doctor's probe (a deny in session warden-doctor) is left out
	// of the audit view unless that session is asked for.
	if d := s.decide(agent, map[string]any{"tool": "Bash", "args": map[string]any{"command": "curl https://x"}, "session": "warden-doctor"}, ""); d.Decision.Decision != warden.Deny {
		t.Fatalf("the probe: %+v", d)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#audit"),
		chromedp.Poll[chromedp.Void](`document.getElementById("audit-hidden").textContent.length > 0`),
	)
	if err != nil {
		t.Fatalf("the audit view: %v", err)
	}
	hidden, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("audit-hidden")))
	rows, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("audit-rows").textContent`))
	if !strings.Contains(hidden, "1 records of warden doctor's probes are not shown") || strings.Contains(rows, "warden-doctor") || !strings.Contains(rows, "notify.txt") {
		t.Errorf("audit view: hidden %q, rows %q", hidden, rows)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(p, "\n"))
	}
}

// TestServePageReplay drives the page's Replay view in a real headless
// Chromium: the team's recorded calls are decided again under a pasted
// policy beside the live one, the page lists the calls decided otherwise
// (the two touches, ask -> allow) and, under the live policy, the rule
// that would stop the asks. A broken posted policy is refused with its
// findings, not replayed.
func TestServePageReplay(t *testing.T) {
	ctx, problems := browser(t)
	dir := serveProject(t, servePolicy)
	agent := serveToken(t, dir, "agent", "ci-bot")
	person := serveToken(t, dir, "person", "alice")
	s := startServe(t, dir)
	for _, c := range []map[string]any{
		{"tool": "Bash", "args": map[string]any{"command": "echo hello"}, "session": "s-r"},
		touchCall("a.txt", "s-r"), touchCall("b.txt", "s-r"),
		{"tool": "Bash", "args": map[string]any{"command": "curl https://example.com"}, "session": "s-r"},
	} {
		s.decide(agent, c, "")
	}
	// A broken posted policy is refused with its findings.
	req, _ := http.NewRequest("POST", s.url+"/v1/policy/replay", strings.NewReader(`{"policy": "version: 1\nrules: [\n"}`))
	req.Header.Set("Authorization", "Bearer "+person)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		var bad struct {
			Error    string `json:"error"`
			Findings []any  `json:"findings"`
		}
		json.NewDecoder(resp.Body).Decode(&bad)
		resp.Body.Close()
		if resp.StatusCode != 422 || len(bad.Findings) == 0 {
			t.Errorf("a broken policy: status %d %+v, want 422 with findings", resp.StatusCode, bad)
		}
	}
	tuned := strings.Replace(servePolicy, "  - id: ask-touch\n    effect: ask", "  - id: ask-touch\n    effect: allow", 1)
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(chromedp.CSS("#login form")),
		chromedp.SendKeys(chromedp.ID("token"), person),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("nav")),
		chromedp.Navigate(s.url+"/#replay"),
		chromedp.WaitVisible(chromedp.ID("replay-form")),
		chromedp.SetValue(chromedp.ID("replay-policy"), tuned),
		chromedp.Click(chromedp.CSS(`#replay-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("replay-out")),
		screenshot(t, "serve-replay"),
	)
	if err != nil {
		t.Fatalf("replay on the page: %v\n%s", err, s.logs.String())
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#replay-changed tr")].map(r => r.textContent)`))
	if err != nil || len(rows) != 2 {
		t.Fatalf("changed rows %q (%v), want the two touches", rows, err)
	}
	for _, r := range rows {
		if !strings.HasPrefix(r, "askallow") || !strings.Contains(r, "touch") {
			t.Errorf("changed row %q, want ask -> allow of a touch", r)
		}
	}
	msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("replay-msg")))
	if !strings.Contains(msg, "4 recorded calls") {
		t.Errorf("replay message %q, want 4 recorded calls", msg)
	}
	// Under the live policy the touches ask by the rule ask-touch: the
	// page says to change that rule (no allow rule outranks it).
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("replay-policy").value = ""`),
		chromedp.Click(chromedp.CSS(`#replay-form button[type=submit]`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#replay-asks li").length > 0 && document.getElementById("replay-changed-count").textContent === "0"`),
	)
	if err != nil {
		t.Fatalf("replay under the live policy: %v", err)
	}
	ask, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#replay-asks li")))
	if !strings.Contains(ask, "touch *") || !strings.Contains(ask, "asked by the rule ask-touch") {
		t.Errorf("the ask group on the page: %q", ask)
	}
	// A policy that asks by default: the page proposes the allow rule.
	askDefault := "version: 1\ndefault: ask\nrules:\n  - id: echo\n    effect: allow\n    tool: shell\n    command: [\"echo *\"]\n"
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("replay-policy"), askDefault),
		chromedp.Click(chromedp.CSS(`#replay-form button[type=submit]`)),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll("#replay-asks li")].some(li => li.textContent.includes("touch *: 2 calls"))`),
	)
	if err != nil {
		asks, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("page-replay")))
		t.Fatalf("replay under a policy that asks by default: %v\n%s", err, asks)
	}
	asks, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#replay-asks li")].map(li => li.textContent)`))
	found := false
	for _, a := range asks {
		if strings.Contains(a, "touch *: 2 calls") {
			found = true
			if !strings.Contains(a, `command: ["touch *"]`) || !strings.Contains(a, "Allows 2 of them") {
				t.Errorf("the touch group: %q, want the rule touch * that allows both", a)
			}
		}
	}
	if !found {
		t.Errorf("no touch group among %q", asks)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(p, "\n"))
	}
}
