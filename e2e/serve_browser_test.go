package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warden-run/warden"
)

// browser starts a headless Chromium (Debian's chromium) for a test and
// collects the page's console errors, uncaught exceptions and failed
// loads. A missing chromium skips the test, or fails it when CI is set.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	// The first action starts the browser, with no timeout (see chromedp.Run).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()
	tctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelT)
	return tctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// artifacts is where the browser tests keep their screenshots
// (e2e/artifacts, ignored by git).
func artifacts(t *testing.T) string {
	dir := filepath.Join(repoRoot, "e2e", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, name string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg) // quality 100: PNG
		if err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, os.WriteFile(filepath.Join(artifacts(t), name+".png"), buf, 0o644)
	}
}

// doFresh is chromedp.Do of steps that only look (navigate, wait, open a
// row), run again, up to three times, when the page replaced a node
// between the steps that found and used it: the page renders its lists
// again as they change, and a loaded machine widens that window.
func doFresh(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	var err error
	for range 3 {
		err = chromedp.Do(ctx, steps...)
		if err == nil || !strings.Contains(err.Error(), "Could not find node with given id") {
			return err
		}
	}
	return err
}

// count is the number of elements a CSS selector matches.
func count(ctx context.Context, t *testing.T, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		t.Fatalf("count %s: %v", sel, err)
	}
	return n
}

// TestServePageApproves drives the approvals page in a real headless
// Chromium: a person logs in, a call waiting on warden serve appears on
// the page without a reload, the person approves it for the session with
// the narrow grant the editor proposes, and the waiting call goes through.
// Every page renders without console errors; each one's screenshot is
// kept in e2e/artifacts.
func TestServePageApproves(t *testing.T) {
	ctx, problems := browser(t)
	dir := serveProject(t, servePolicy)
	agent := serveToken(t, dir, "agent", "ci-bot")
	person := serveToken(t, dir, "person", "alice")
	s := startServe(t, dir)

	// A call that allows, for the audit and sessions pages.
	if d := s.decide(agent, map[string]any{"tool": "Bash", "args": map[string]any{"command": "echo hello"}, "session": "s-page"}, ""); d.Decision.Decision != warden.Allow {
		t.Fatalf("echo: %+v", d)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(chromedp.CSS("#login form")),
		screenshot(t, "serve-login"),
	)
	if err != nil {
		t.Fatalf("the login page: %v\n%s", err, s.logs.String())
	}
	// Before login the page's links lead nowhere: they are not shown.
	navShown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`getComputedStyle(document.getElementById("nav")).display !== "none"`))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("token"), person),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("nav")),
		chromedp.WaitVisible(chromedp.ID("approvals-empty")),
		chromedp.WaitVisible(chromedp.CSS(`#live.on`)),
		screenshot(t, "serve-approvals-empty"),
	)
	if err != nil {
		t.Fatalf("log in: %v\n%s", err, s.logs.String())
	}
	if navShown {
		t.Error("the page's links are shown before login")
	}

	// The agent's call waits; the page shows it without a reload.
	waited := make(chan decideAnswer, 1)
	go func() { waited <- s.decide(agent, touchCall("page.txt", "s-page"), "90s") }()
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#approvals-list li.card`)),
		screenshot(t, "serve-approvals-pending"),
	)
	if err != nil {
		t.Fatalf("the waiting call on the page: %v\n%s", err, s.logs.String())
	}
	// Who asked: the agent token's name, and the host.
	meta, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#approvals-list li.card p.meta").textContent`))
	if err != nil || !strings.Contains(meta, "asked by ci-bot (http) in session s-page") {
		t.Errorf("the card says %q (%v), want who asked", meta, err)
	}
	err = chromedp.Do(ctx,
		// Keyboard: the card takes the focus, Enter opens the answer.
		chromedp.Focus(chromedp.CSS(`#approvals-list li.card`)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.ID("answer")),
		chromedp.Click(chromedp.CSS(`input[name=scope][value=session]`)),
		screenshot(t, "serve-approve-dialog"),
	)
	if err != nil {
		t.Fatalf("open the answer: %v\n%s", err, s.logs.String())
	}
	parts, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("answer-parts")))
	if err != nil || !strings.Contains(parts, "touch page.txt") {
		t.Errorf("the grant editor proposes %q (%v), want the exact command", parts, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("approve-btn")),
		chromedp.WaitNotVisible(chromedp.ID("answer")),
		chromedp.WaitVisible(chromedp.ID("approvals-empty")),
	)
	if err != nil {
		t.Fatalf("answer on the page: %v\n%s", err, s.logs.String())
	}
	if d := awaitDecision(t, waited); d.Decision.Decision != warden.Allow {
		t.Fatalf("the waiting call after the approval: %+v", d)
	}
	// The grant is the exact command, for this session, by alice.
	var grants []warden.Grant
	if s.call("GET", "/v1/grants", person, nil, &grants); len(grants) != 1 || grants[0].Value != "touch page.txt" || grants[0].Session != "s-page" || grants[0].CreatedBy != "alice" {
		t.Fatalf("grants after the page's answer: %+v", grants)
	}

	// Every other page renders.
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#audit"),
		chromedp.WaitVisible(chromedp.CSS(`#audit-rows tr`)),
		screenshot(t, "serve-audit"),
	)
	if err != nil {
		t.Fatalf("audit page: %v", err)
	}
	auditRows := count(ctx, t, "#audit-rows tr")
	err = doFresh(ctx,
		chromedp.Navigate(s.url+"/#sessions"),
		chromedp.WaitVisible(chromedp.CSS(`#sessions-rows tr`)),
		chromedp.Click(chromedp.CSS(`#sessions-rows a`)),
		chromedp.WaitVisible(chromedp.CSS(`#session-detail li`)),
		screenshot(t, "serve-sessions"),
	)
	if err != nil {
		t.Fatalf("sessions page: %v", err)
	}
	sessionRows := count(ctx, t, "#sessions-rows tr")
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#grants"),
		chromedp.WaitVisible(chromedp.CSS(`#grants-rows tr`)),
		screenshot(t, "serve-grants"),
	)
	if err != nil {
		t.Fatalf("grants page: %v", err)
	}
	grantRows := count(ctx, t, "#grants-rows tr")
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#whatif"),
		chromedp.WaitVisible(chromedp.ID("whatif-form")),
		chromedp.Click(chromedp.CSS(`#whatif-form button[type=submit]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("whatif-out").textContent.length > 0`, chromedp.WithPollingTimeout(30*time.Second)),
		screenshot(t, "serve-whatif"),
	)
	if err != nil {
		t.Fatalf("what-if page: %v", err)
	}
	whatIf, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("whatif-out")))
	if auditRows != 2 || sessionRows != 1 || grantRows != 1 {
		t.Errorf("rows: audit %d (want 2), sessions %d (want 1), grants %d (want 1)", auditRows, sessionRows, grantRows)
	}
	if !strings.Contains(whatIf, "DENY") {
		t.Errorf("what if git push: %q, want a deny by the live policy", whatIf)
	}
	// Revoke the grant from the page.
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#grants"),
		chromedp.WaitVisible(chromedp.CSS(`#grants-rows tr button`)),
		chromedp.Click(chromedp.CSS(`#grants-rows tr button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#grants-rows tr`)),
	)
	if err != nil {
		t.Fatalf("revoke on the page: %v", err)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(p, "\n"))
	}
}
