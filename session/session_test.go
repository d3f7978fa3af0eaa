package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

const testPolicy = `version: 1
default:
  safe: allow
  destructive: ask
roles:
  coordinator:
    description: Plans and delegates.
    tools: [read, list, todo, delegate]
    first: [todo]
    max_depth: 2
  builder:
    description: Edits code and runs commands.
    tools: [read, list, write, edit, shell, todo]
    first: [read]
  strict:
    tools: [read, shell]
    first: [read]
    first_enforce: deny
rules:
  - id: allow-git-read
    effect: allow
    tool: shell
    command: ["git status *", "git log *"]
  - id: ask-push
    effect: ask
    tool: shell
    command: "git push *"
    message: Pushing publishes commits.
    suggestion: Ask the user first.
  - id: no-force-push
    effect: deny
    tool: shell
    command: "git push --force *"
    message: Force-pushing rewrites shared history.
    suggestion: Push without --force.
  - id: spam
    effect: allow
    tool: gmail.delete
    intent: "(?i)spam"
`

var ctx = context.Background()

type env struct {
	dir   string
	pol   *policy.Policy
	eng   *engine.Engine
	store *sqlite.Store
	tr    *session.Tracker
}

func setup(t *testing.T, policyText string) *env {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(file, []byte(policyText), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	tr := session.New(eng, store)
	tr.Poll = 20 * time.Millisecond
	return &env{dir: dir, pol: pol, eng: eng, store: store, tr: tr}
}

func (e *env) decide(t *testing.T, call warden.ToolCall, opt session.Options) session.Result {
	t.Helper()
	if call.Args == nil {
		call.Args = map[string]any{}
	}
	res, err := e.tr.Decide(ctx, call, opt)
	if err != nil {
		t.Fatalf("Decide(%+v): %v", call, err)
	}
	return res
}

func bash(sess, role, cmd string) warden.ToolCall {
	return warden.ToolCall{Tool: "Bash", Session: sess, Role: role, Args: map[string]any{"command": cmd}}
}

func TestFirstToolWarn(t *testing.T) {
	e := setup(t, testPolicy)
	r := e.decide(t, bash("s1", "builder", "git status"), session.Options{})
	if r.Decision.Decision != warden.Allow || len(r.Decision.Warnings) == 0 ||
		!strings.Contains(strings.Join(r.Decision.Warnings, " "), "first") {
		t.Fatalf("first call, wrong first tool: %+v", r.Decision)
	}
	if r.Session.FirstTool != "Bash" || r.Session.Violations != 1 || r.Session.Calls != 1 || r.Session.Role != "builder" {
		t.Errorf("session after first call: %+v", r.Session)
	}
	// The role is remembered: a call without one is decided as builder,
	// and it is not the first call any more.
	r = e.decide(t, bash("s1", "", "git status"), session.Options{})
	if r.Decision.Decision != warden.Allow || len(r.Decision.Warnings) != 0 {
		t.Errorf("second call: %+v", r.Decision)
	}
	if r.Audit.Role != "builder" || r.Session.Calls != 2 || r.Session.Violations != 1 {
		t.Errorf("second call: audit role %q, session %+v", r.Audit.Role, r.Session)
	}
	st, _ := e.store.State(ctx)
	if len(st.History) != 1 || !strings.Contains(st.History[0].Action, "first_tool") || st.History[0].Result != "warn" {
		t.Errorf("violation history: %+v", st.History)
	}
}

func TestFirstToolDeny(t *testing.T) {
	e := setup(t, testPolicy)
	r := e.decide(t, bash("s1", "strict", "git status"), session.Options{})
	if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeFirstTool {
		t.Fatalf("first call: %+v", r.Decision)
	}
	if r.Session.FirstToolUsed() {
		t.Error("a denied first call counted as the first tool")
	}
	// Still the first call: still denied.
	r = e.decide(t, bash("s1", "strict", "git log"), session.Options{})
	if r.Decision.Code != warden.CodeFirstTool {
		t.Fatalf("second try: %+v", r.Decision)
	}
	r = e.decide(t, warden.ToolCall{Tool: "Read", Session: "s1", Args: map[string]any{"file_path": "a.go"}}, session.Options{})
	if r.Decision.Decision != warden.Allow || r.Session.FirstTool != "Read" {
		t.Fatalf("read first: %+v %+v", r.Decision, r.Session)
	}
	r = e.decide(t, bash("s1", "", "git status"), session.Options{})
	if r.Decision.Decision != warden.Allow {
		t.Errorf("after the first tool: %+v", r.Decision)
	}
	if r.Session.Violations != 2 {
		t.Errorf("violations = %d, want 2", r.Session.Violations)
	}
}

func TestDepthFromParentSession(t *testing.T) {
	e := setup(t, testPolicy)
	top, text, err := e.tr.Start(ctx, session.StartOptions{ID: "top", Role: "coordinator"})
	if err != nil || top.Depth != 0 || text == "" {
		t.Fatal(top, text, err)
	}
	child, _, err := e.tr.Start(ctx, session.StartOptions{ID: "child", Parent: "top", Role: "coordinator"})
	if err != nil || child.Depth != 1 || child.Parent != "top" {
		t.Fatalf("child: %+v %v", child, err)
	}
	grand, _, err := e.tr.Start(ctx, session.StartOptions{ID: "grand", Parent: "child", Role: "coordinator"})
	if err != nil || grand.Depth != 2 {
		t.Fatalf("grandchild: %+v %v", grand, err)
	}
	task := func(sess string) warden.ToolCall {
		return warden.ToolCall{Tool: "Task", Session: sess, Args: map[string]any{"prompt": "do it"}}
	}
	e.decide(t, warden.ToolCall{Tool: "TodoWrite", Session: "child", Args: map[string]any{}}, session.Options{})
	if r := e.decide(t, task("child"), session.Options{}); r.Decision.Decision == warden.Deny {
		t.Errorf("delegate at depth 1 of 2: %+v", r.Decision)
	}
	e.decide(t, warden.ToolCall{Tool: "TodoWrite", Session: "grand", Args: map[string]any{}}, session.Options{})
	r := e.decide(t, task("grand"), session.Options{})
	if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeDepthExceeded {
		t.Fatalf("delegate at depth 2 of 2: %+v", r.Decision)
	}
	if r.Audit.Depth != 2 || r.Session.Violations != 1 {
		t.Errorf("audit depth %d, violations %d", r.Audit.Depth, r.Session.Violations)
	}
}

func TestIntentFromPrompt(t *testing.T) {
	e := setup(t, testPolicy)
	call := warden.ToolCall{Tool: "gmail.delete", Session: "s", Args: map[string]any{"id": "1"}}
	if r := e.decide(t, call, session.Options{HostPrompts: true}); r.Decision.Decision != warden.Ask {
		t.Fatalf("without intent: %+v", r.Decision)
	}
	if _, err := e.tr.Prompt(ctx, "s", "please delete the spam"); err != nil {
		t.Fatal(err)
	}
	if r := e.decide(t, call, session.Options{}); r.Decision.Decision != warden.Allow || r.Decision.Rule != "spam" {
		t.Fatalf("with the user's request as intent: %+v", r.Decision)
	}
}

func pending(t *testing.T, e *env) []warden.Approval {
	t.Helper()
	as, err := e.store.Approvals(ctx, warden.ApprovalFilter{Status: warden.ApprovalPending})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func TestApproveAlways(t *testing.T) {
	e := setup(t, testPolicy)
	e.decide(t, warden.ToolCall{Tool: "Read", Session: "s", Role: "builder", Args: map[string]any{"file_path": "x"}}, session.Options{})
	push := bash("s", "builder", "git push origin main")
	r := e.decide(t, push, session.Options{})
	if r.Decision.Decision != warden.Ask || r.Approval == nil || !strings.Contains(r.Decision.Reason, r.Approval.ID) ||
		!strings.Contains(r.Decision.Suggestion, "warden approvals approve "+r.Approval.ID) {
		t.Fatalf("ask: %+v %+v", r.Decision, r.Approval)
	}
	id := r.Approval.ID
	// A retry before the answer reuses the pending approval.
	r = e.decide(t, push, session.Options{})
	if r.Approval == nil || r.Approval.ID != id || len(pending(t, e)) != 1 {
		t.Fatalf("retry made a new approval: %+v, pending %d", r.Approval, len(pending(t, e)))
	}
	a := pending(t, e)[0]
	if len(a.Parts) != 1 || a.Parts[0] != (warden.GrantPart{Subject: "command", Value: "git push origin main"}) || a.Rule != "ask-push" {
		t.Fatalf("approval parts: %+v", a)
	}
	ap, err := session.Approve(ctx, e.store, id, session.Answer{Scope: warden.ScopeAlways, By: "me"}, time.Now())
	if err != nil || len(ap.Grants) != 1 {
		t.Fatal(ap, err)
	}
	// Honoured on the next call, in any session of the role.
	for _, sess := range []string{"s", "other"} {
		r = e.decide(t, bash(sess, "builder", "git push origin main"), session.Options{})
		if r.Decision.Decision != warden.Allow || r.Decision.Rule != "grant:"+ap.Grants[0] || len(r.Audit.Grants) != 1 {
			t.Fatalf("session %s after approve always: %+v audit %+v", sess, r.Decision, r.Audit)
		}
	}
	// Exactly as wide as the call.
	// (A call cannot change its session's role: the coordinator's call is
	// in a session of its own.)
	for _, c := range []warden.ToolCall{bash("s", "builder", "git push origin dev"), bash("s-coord", "coordinator", "git push origin main"),
		{Tool: "shell", Session: "s", Role: "builder", Args: map[string]any{"command": "git push origin main"}}} {
		r = e.decide(t, c, session.Options{HostPrompts: true})
		if r.Decision.Decision == warden.Allow {
			t.Errorf("grant is wider than the call: %+v allowed", c)
		}
	}
	// Never over a deny.
	r = e.decide(t, bash("s", "builder", "git push --force origin main"), session.Options{})
	if r.Decision.Decision != warden.Deny {
		t.Errorf("force push: %+v", r.Decision)
	}
	// A revoked grant is gone: the always answer is not a once answer too.
	if err := e.store.RevokeGrant(ctx, ap.Grants[0]); err != nil {
		t.Fatal(err)
	}
	if r := e.decide(t, push, session.Options{}); r.Decision.Decision != warden.Ask {
		t.Errorf("after revoking the grant: %+v", r.Decision)
	}
	// Answering twice is a conflict.
	if _, err := session.Approve(ctx, e.store, id, session.Answer{Scope: warden.ScopeOnce}, time.Now()); !errors.Is(err, warden.ErrConflict) {
		t.Errorf("second answer: %v", err)
	}
}

func TestApprovePatternUsesExpiry(t *testing.T) {
	e := setup(t, testPolicy)
	r := e.decide(t, bash("s", "builder", "git push origin main"), session.Options{})
	if _, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: warden.ScopeAlways, Pattern: "git push origin *", Uses: 2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for i, want := range []warden.Effect{warden.Allow, warden.Allow, warden.Ask} {
		r = e.decide(t, bash("s", "builder", "git push origin b"+string(rune('0'+i))), session.Options{HostPrompts: true})
		if r.Decision.Decision != want {
			t.Errorf("use %d of a 2-use pattern grant: %s, want %s", i+1, r.Decision.Decision, want)
		}
	}
	r = e.decide(t, bash("s", "builder", "git push other main"), session.Options{})
	a, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: warden.ScopeAlways, Expires: time.Hour}, time.Now().Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	gs, _ := e.store.Grants(ctx, warden.GrantFilter{All: true})
	found := false
	for _, g := range gs {
		if g.ID == a.Grants[0] {
			found = true
			if g.Expires.IsZero() {
				t.Errorf("grant expiry not stored: %+v", g)
			}
		}
	}
	if !found {
		t.Fatalf("grant %s not stored: %+v", a.Grants[0], gs)
	}
	if r := e.decide(t, bash("s", "builder", "git push other main"), session.Options{HostPrompts: true}); r.Decision.Decision != warden.Ask {
		t.Errorf("expired grant honoured: %+v", r.Decision)
	}
	if _, err := session.Approve(ctx, e.store, "a-x", session.Answer{Scope: warden.ScopeOnce, Uses: 3}, time.Now()); err == nil {
		t.Error("--uses with --once: no error")
	}
}

func TestApproveSessionAndOnce(t *testing.T) {
	e := setup(t, testPolicy)
	r := e.decide(t, bash("s1", "builder", "git push origin main"), session.Options{})
	if _, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: warden.ScopeSession}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := e.decide(t, bash("s1", "builder", "git push origin main"), session.Options{}); r.Decision.Decision != warden.Allow {
		t.Errorf("same session: %+v", r.Decision)
	}
	if r := e.decide(t, bash("s2", "builder", "git push origin main"), session.Options{HostPrompts: true}); r.Decision.Decision != warden.Ask {
		t.Errorf("other session: %+v", r.Decision)
	}
	// Once: the retry goes through once, the next one asks again.
	r = e.decide(t, bash("s3", "builder", "git push origin main"), session.Options{})
	if _, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: warden.ScopeOnce}, time.Now()); err != nil {
		t.Fatal(err)
	}
	r = e.decide(t, bash("s3", "builder", "git push origin main"), session.Options{})
	if r.Decision.Decision != warden.Allow || !strings.HasPrefix(r.Decision.Rule, "approval:") || r.Audit.Approval == "" {
		t.Fatalf("retry after once: %+v", r.Decision)
	}
	r = e.decide(t, bash("s3", "builder", "git push origin main"), session.Options{})
	if r.Decision.Decision != warden.Ask {
		t.Errorf("second retry after once: %+v", r.Decision)
	}
	if gs, _ := e.store.Grants(ctx, warden.GrantFilter{Session: "s3"}); len(gs) != 0 {
		t.Errorf("once made grants: %+v", gs)
	}
}

func TestWaitForAnswer(t *testing.T) {
	e := setup(t, testPolicy)
	answer := func(sess string, fn func(id string)) {
		go func() {
			for range 200 {
				for _, a := range pending(t, e) {
					if a.Session == sess {
						fn(a.ID)
						return
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	answer("w1", func(id string) {
		session.Approve(ctx, e.store, id, session.Answer{Scope: warden.ScopeOnce}, time.Now())
	})
	r := e.decide(t, bash("w1", "builder", "git push origin main"), session.Options{Wait: 5 * time.Second})
	if r.Decision.Decision != warden.Allow {
		t.Errorf("approved while waiting: %+v", r.Decision)
	}
	answer("w2", func(id string) {
		session.Reject(ctx, e.store, id, "Open a pull request instead.", "me")
	})
	r = e.decide(t, bash("w2", "builder", "git push origin main"), session.Options{Wait: 5 * time.Second})
	if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeApprovalRejected ||
		!strings.Contains(r.Decision.Reason, "Open a pull request instead.") || r.Decision.Suggestion == "" {
		t.Errorf("rejected while waiting: %+v", r.Decision)
	}
	start := time.Now()
	r = e.decide(t, bash("w3", "builder", "git push origin main"), session.Options{Wait: 150 * time.Millisecond})
	if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeApprovalTimeout || r.Decision.Suggestion == "" {
		t.Errorf("timeout: %+v", r.Decision)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 3*time.Second {
		t.Errorf("waited %v for a 150ms timeout", el)
	}
	if _, err := session.Reject(ctx, e.store, r.Approval.ID, "", "me"); err == nil {
		t.Error("reject without a message: no error")
	}
	recs, _ := e.store.Audit(ctx, warden.AuditFilter{})
	if len(recs) != 3 || recs[0].Decision != warden.Allow || recs[1].Code != warden.CodeApprovalRejected || recs[2].Code != warden.CodeApprovalTimeout {
		t.Errorf("audit of waits: %+v", recs)
	}
}

func TestAuditRedactsAndCounts(t *testing.T) {
	e := setup(t, testPolicy)
	calls := []warden.ToolCall{
		bash("a", "builder", "API_KEY=abc123secret git status"),
		bash("a", "builder", `curl -H "Authorization: Bearer tok_9876543210" https://x`),
		{Tool: "WebFetch", Session: "a", Role: "builder", Args: map[string]any{"url": "https://x", "headers": map[string]any{"Authorization": "Basic dXNlcjpwYXNz"}, "password": "hunter2"}},
	}
	for _, c := range calls {
		e.decide(t, c, session.Options{HostPrompts: true})
	}
	recs, err := e.store.Audit(ctx, warden.AuditFilter{Session: "a"})
	if err != nil || len(recs) != len(calls) {
		t.Fatalf("%d audit records for %d calls (%v)", len(recs), len(calls), err)
	}
	var dump strings.Builder
	for _, r := range recs {
		dump.WriteString(r.Reason)
		for k, v := range r.Args {
			dump.WriteString(k + "=" + strings.TrimSpace(strings.ReplaceAll(toString(v), "\n", " ")) + " ")
		}
		if r.Mode != "enforce" || r.Latency <= 0 || r.Time.IsZero() || r.Host != "" && r.Host != "claude" {
			t.Errorf("record fields: %+v", r)
		}
	}
	for _, secret := range []string{"abc123secret", "tok_9876543210", "dXNlcjpwYXNz", "hunter2"} {
		if strings.Contains(dump.String(), secret) {
			t.Errorf("secret %q in the audit trail: %s", secret, dump.String())
		}
	}
	if recs[0].Decision != warden.Allow || recs[0].Rule != "allow-git-read" || len(recs[0].Matched) == 0 {
		t.Errorf("record 0: %+v", recs[0])
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		var s []string
		for k, x := range v {
			s = append(s, k+":"+toString(x))
		}
		return strings.Join(s, ",")
	}
	return ""
}

func TestFailClosed(t *testing.T) {
	e := setup(t, testPolicy)
	e.store.Close()
	res, err := e.tr.Decide(ctx, warden.ToolCall{Tool: "Read", Session: "s", Args: map[string]any{"file_path": "a"}}, session.Options{})
	if err == nil || res.Decision.Decision != warden.Deny || res.Decision.Reason == "" || res.Decision.Suggestion == "" {
		t.Fatalf("closed store: %+v, %v", res.Decision, err)
	}
}

func TestConcurrentFirstCall(t *testing.T) {
	// Parallel tool calls of one session: exactly one is the first.
	e := setup(t, testPolicy)
	var wg sync.WaitGroup
	var mu sync.Mutex
	warned := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.tr.Decide(ctx, bash("p", "builder", "git status"), session.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			if len(r.Decision.Warnings) > 0 {
				mu.Lock()
				warned++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s, _ := e.store.Session(ctx, "p")
	if warned != 1 || s.Calls != 8 || s.Violations != 1 {
		t.Errorf("first-tool warnings %d (want 1), session %+v", warned, s)
	}
}

// TestAuditArgsCutsLongStrings: the audit trail keeps a long content's
// beginning, redacted, and says how much it left out; a huge single token
// is not kept at all.
func TestAuditArgsCutsLongStrings(t *testing.T) {
	long := "token=" + "sk-ant-" + strings.Repeat("a", 30) + " " + strings.Repeat("word ", 20000)
	got := session.AuditArgs(map[string]any{"content": long, "n": 3, "list": []any{strings.Repeat("b", 100000)}})
	c, _ := got["content"].(string)
	if len(c) > session.MaxAuditString+100 || !strings.Contains(c, "more bytes not recorded]") || strings.Contains(c, "sk-ant-") || !strings.HasPrefix(c, "token="+warden.Redacted) {
		t.Errorf("content: %d bytes, starts %q, ends %q", len(c), c[:40], c[len(c)-60:])
	}
	if l, _ := got["list"].([]any); len(l) != 1 || l[0] != "\n[warden: 100000 more bytes not recorded]" {
		t.Errorf("one huge token: %v", l)
	}
	if got["n"] != 3 {
		t.Errorf("a number changed: %v", got["n"])
	}
	if short := session.AuditArgs(map[string]any{"command": "ls"}); short["command"] != "ls" {
		t.Errorf("a short string changed: %v", short)
	}
}

// A subagent is never wider than its parent: a subagent whose type the
// policy does not name takes its parent's role, whether its session was
// started by the host's subagent event or first seen on a call; a call
// cannot report a lower depth or another role than its session has.
func TestSubagentNeverWiderThanParent(t *testing.T) {
	e := setup(t, testPolicy)
	if _, _, err := e.tr.Start(ctx, session.StartOptions{ID: "p", Role: "coordinator"}); err != nil {
		t.Fatal(err)
	}
	e.decide(t, warden.ToolCall{Tool: "TodoWrite", Session: "p", Args: map[string]any{}}, session.Options{})
	write := func(sess, role string, depth int) warden.ToolCall {
		return warden.ToolCall{Tool: "Write", Session: sess, Role: role, Depth: depth, Args: map[string]any{"file_path": "x.go", "content": "x"}}
	}
	// Started by the host's subagent event with an unnamed type.
	child, _, err := e.tr.Start(ctx, session.StartOptions{ID: "p/a1", Parent: "p"})
	if err != nil || child.Role != "coordinator" || child.Depth != 1 {
		t.Fatalf("child session: %+v %v", child, err)
	}
	if r := e.decide(t, write("p/a1", "", 1), session.Options{HostPrompts: true}); r.Decision.Code != warden.CodeRoleToolDenied {
		t.Errorf("subagent of a coordinator wrote: %+v", r.Decision)
	}
	// First seen on a call (no subagent event).
	if r := e.decide(t, write("p/a2", "", 1), session.Options{HostPrompts: true}); r.Decision.Code != warden.CodeRoleToolDenied || r.Session.Role != "coordinator" || r.Session.Depth != 1 {
		t.Errorf("unseen subagent of a coordinator: %+v session %+v", r.Decision, r.Session)
	}
	// A call that reports another role or a lower depth changes nothing.
	if r := e.decide(t, write("p", "builder", 0), session.Options{HostPrompts: true}); r.Decision.Code != warden.CodeRoleToolDenied || r.Audit.Role != "coordinator" {
		t.Errorf("a call widened its session's role: %+v", r.Decision)
	}
	if _, _, err := e.tr.Start(ctx, session.StartOptions{ID: "deep", Role: "coordinator", Depth: 2}); err != nil {
		t.Fatal(err)
	}
	e.decide(t, warden.ToolCall{Tool: "TodoWrite", Session: "deep", Args: map[string]any{}}, session.Options{})
	r := e.decide(t, warden.ToolCall{Tool: "Task", Session: "deep", Depth: 0, Args: map[string]any{"prompt": "x"}}, session.Options{})
	if r.Decision.Code != warden.CodeDepthExceeded {
		t.Errorf("a call lowered its depth past the limit: %+v", r.Decision)
	}
}

// TestAnswerReachesNewSession: headless hosts start a new session for each
// run, so an answer reaches the next identical call (same role, tool and
// normalised command) from any session, once; a rejection carries the
// human's message; another role or another command is not answered.
func TestAnswerReachesNewSession(t *testing.T) {
	e := setup(t, testPolicy)
	push := func(sess, role, cmd, desc string) warden.ToolCall {
		c := bash(sess, role, cmd)
		c.Args["description"] = desc // wording that is not the call
		return c
	}
	// Reject with a message: the next identical call from a new session
	// gets it, once; the call after that asks again.
	r := e.decide(t, push("run1", "", "git push origin main", "push it"), session.Options{})
	if r.Approval == nil {
		t.Fatalf("no approval: %+v", r.Decision)
	}
	if _, err := session.Reject(ctx, e.store, r.Approval.ID, "Open a pull request instead.", "me"); err != nil {
		t.Fatal(err)
	}
	if r := e.decide(t, push("other", "builder", "git push origin main", "x"), session.Options{}); r.Decision.Code == warden.CodeApprovalRejected {
		t.Errorf("another role got the rejection: %+v", r.Decision)
	}
	if r := e.decide(t, push("run2", "", "git push origin dev", "x"), session.Options{}); r.Decision.Code == warden.CodeApprovalRejected {
		t.Errorf("another command got the rejection: %+v", r.Decision)
	}
	r = e.decide(t, push("run2", "", "git  push 'origin' main", "push again"), session.Options{})
	if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeApprovalRejected ||
		!strings.Contains(r.Decision.Reason, "Open a pull request instead.") {
		t.Fatalf("retry in a new session after a rejection: %+v", r.Decision)
	}
	if r := e.decide(t, push("run3", "", "git push origin main", ""), session.Options{}); r.Decision.Decision != warden.Ask {
		t.Errorf("a rejection was delivered twice: %+v", r.Decision)
	}
	// Once from another session.
	r = e.decide(t, push("run4", "", "git push origin feature", ""), session.Options{})
	if _, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: warden.ScopeOnce}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := e.decide(t, push("run5", "", "git push origin feature", ""), session.Options{}); r.Decision.Decision != warden.Allow {
		t.Errorf("once, new session: %+v", r.Decision)
	}
	if r := e.decide(t, push("run5", "", "git push origin feature", ""), session.Options{}); r.Decision.Decision != warden.Ask {
		t.Errorf("once let two calls through: %+v", r.Decision)
	}
	// Session: the call in a new session goes through once and says what
	// the answer covers; the asking session keeps its grant.
	r = e.decide(t, push("run6", "", "git push origin fix", ""), session.Options{})
	if _, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: warden.ScopeSession}, time.Now()); err != nil {
		t.Fatal(err)
	}
	r = e.decide(t, push("run7", "", "git push origin fix", ""), session.Options{})
	if r.Decision.Decision != warden.Allow || !strings.Contains(r.Decision.Reason, "session run6") {
		t.Errorf("session answer, new session: %+v", r.Decision)
	}
	if r := e.decide(t, push("run7", "", "git push origin fix", ""), session.Options{}); r.Decision.Decision != warden.Ask {
		t.Errorf("session answer covered the new session beyond one call: %+v", r.Decision)
	}
	if r := e.decide(t, push("run6", "", "git push origin fix", ""), session.Options{}); r.Decision.Decision != warden.Allow {
		t.Errorf("session answer, asking session: %+v", r.Decision)
	}
}

// TestApprovalsExpire: a pending approval past approvals.expires is
// dropped and the call queues a new one; an answer past it no longer
// reaches the call.
func TestApprovalsExpire(t *testing.T) {
	e := setup(t, testPolicy+"approvals:\n  expires: 1h\n")
	now := time.Now()
	e.store.Clock = func() time.Time { return now }
	r := e.decide(t, bash("s1", "", "git push origin main"), session.Options{})
	first := r.Approval.ID
	if !strings.Contains(r.Decision.Reason, "expires after 1h without") {
		t.Errorf("ask does not say when it expires: %q", r.Decision.Reason)
	}
	if got := session.ApprovalExpiry(*r.Approval, session.ApprovalLifetime(e.pol)); got.Sub(r.Approval.CreatedAt) != time.Hour {
		t.Errorf("expiry %v, created %v", got, r.Approval.CreatedAt)
	}
	now = now.Add(2 * time.Hour)
	r = e.decide(t, bash("s2", "", "git push origin main"), session.Options{})
	if r.Approval == nil || r.Approval.ID == first {
		t.Fatalf("expired approval reused: %+v", r.Approval)
	}
	if _, err := e.store.Approval(ctx, first); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("expired approval kept: %v", err)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{24 * time.Hour: "24h", 90 * time.Minute: "1h30m", 45 * time.Second: "45s",
		time.Hour + 30*time.Second: "1h0m30s", 10 * time.Minute: "10m"} {
		if got := session.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestPurgeDropsExpiredApprovals: warden purge drops the approvals past
// their lifetime and keeps the others.
func TestPurgeDropsExpiredApprovals(t *testing.T) {
	e := setup(t, testPolicy+"approvals:\n  expires: 1h\n")
	start := time.Now()
	clock := start
	e.store.Clock = func() time.Time { return clock }
	old := e.decide(t, bash("s1", "", "git push origin main"), session.Options{}).Approval
	fresh := e.decide(t, bash("s1", "", "git push origin dev"), session.Options{}).Approval
	// The second was answered 45 minutes later: its answer lives on.
	clock = start.Add(45 * time.Minute)
	if _, err := e.store.ResolveApproval(ctx, fresh.ID, warden.Resolution{Status: warden.ApprovalRejected, Message: "no"}, nil); err != nil {
		t.Fatal(err)
	}
	rep, err := session.Purge(ctx, e.store, session.Limits(e.pol), start.Add(90*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rep.ApprovalsPurged != 1 {
		t.Errorf("purged %d approvals, want 1", rep.ApprovalsPurged)
	}
	if _, err := e.store.Approval(ctx, old.ID); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("expired approval kept: %v", err)
	}
	if _, err := e.store.Approval(ctx, fresh.ID); err != nil {
		t.Errorf("answered approval within its lifetime dropped: %v", err)
	}
}

// Sequence rules see the session's history through the store: an edit is
// denied until the session read the file, and a repeated command is
// stopped.
func TestSequenceRulesUseTheSessionHistory(t *testing.T) {
	e := setup(t, `version: 1
default: allow
rules:
  - id: read-before-edit
    effect: deny
    tool: [edit, write]
    after: {tool: read, same_path: true}
    message: Read a file before you change it.
    suggestion: Read it first.
  - id: no-loops
    effect: deny
    tool: shell
    repeat: {count: 2, within: 10m}
    message: This command already ran twice.
    suggestion: Try something else.
`)
	edit := warden.ToolCall{Tool: "Edit", Session: "q", Args: map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b"}}
	if r := e.decide(t, edit, session.Options{HostPrompts: true}); r.Decision.Rule != "read-before-edit" {
		t.Fatalf("edit before a read: %+v", r.Decision)
	}
	e.decide(t, warden.ToolCall{Tool: "Read", Session: "q", Args: map[string]any{"file_path": "a.go"}}, session.Options{})
	if r := e.decide(t, edit, session.Options{HostPrompts: true}); r.Decision.Decision != warden.Allow {
		t.Fatalf("edit after a read: %+v", r.Decision)
	}
	// Another session has not read it.
	edit.Session = "other"
	if r := e.decide(t, edit, session.Options{HostPrompts: true}); r.Decision.Rule != "read-before-edit" {
		t.Errorf("another session's edit: %+v", r.Decision)
	}
	for i, want := range []warden.Effect{warden.Allow, warden.Allow, warden.Deny} {
		r := e.decide(t, bash("q", "", "make"), session.Options{HostPrompts: true})
		if r.Decision.Decision != want {
			t.Errorf("make #%d: %+v", i+1, r.Decision)
		}
	}
}

// warden halt stops every call of a session (and its subagents), or of the
// whole project, until resumed; each stopped call is audited as HALTED.
func TestHalt(t *testing.T) {
	e := setup(t, testPolicy)
	call := func(sess string) session.Result {
		return e.decide(t, warden.ToolCall{Tool: "Read", Session: sess, Args: map[string]any{"file_path": "a.go"}}, session.Options{})
	}
	if r := call("h1"); r.Decision.Decision != warden.Allow {
		t.Fatalf("before the halt: %+v", r.Decision)
	}
	if _, err := e.store.SetHalt(ctx, warden.Halt{Session: "h1", Message: "Stop: the deploy is broken.", By: "ops"}); err != nil {
		t.Fatal(err)
	}
	for _, sess := range []string{"h1", "h1/agent-7"} {
		r := call(sess)
		if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeHalted || !strings.Contains(r.Decision.Reason, "the deploy is broken") || r.Audit.Code != warden.CodeHalted {
			t.Errorf("%s halted: %+v audit %+v", sess, r.Decision, r.Audit)
		}
	}
	if r := call("h2"); r.Decision.Decision != warden.Allow {
		t.Errorf("another session: %+v", r.Decision)
	}
	if _, err := e.store.SetHalt(ctx, warden.Halt{Message: "Everyone stop."}); err != nil {
		t.Fatal(err)
	}
	if r := call("h2"); r.Decision.Code != warden.CodeHalted || !strings.Contains(r.Decision.Reason, "Every session") {
		t.Errorf("project halt: %+v", r.Decision)
	}
	for _, s := range []string{"", "h1"} {
		if err := e.store.ClearHalt(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.ClearHalt(ctx, "h1"); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("clearing no halt: %v", err)
	}
	if r := call("h1"); r.Decision.Decision != warden.Allow {
		t.Errorf("after resume: %+v", r.Decision)
	}
}

// A compiled rule's sentence (its source) reaches the audit record of the
// decisions it makes.
func TestAuditKeepsRuleSource(t *testing.T) {
	e := setup(t, `version: 1
default: allow
rules:
  - id: no-bulk-delete
    effect: deny
    tool: mail.batch_delete
    message: No bulk deletes.
    suggestion: Delete one at a time.
    source: Never delete emails in bulk.
`)
	r := e.decide(t, warden.ToolCall{Tool: "mail.batch_delete", Session: "src", Args: map[string]any{"ids": []any{"1"}}}, session.Options{})
	recs, err := e.store.Audit(ctx, warden.AuditFilter{Session: "src"})
	if err != nil || len(recs) != 1 || recs[0].Source != "Never delete emails in bulk." || r.Decision.Rule != "no-bulk-delete" {
		t.Fatalf("audit: %+v %v", recs, err)
	}
}

// TestTakeRole: a session takes the role its host names when it has none
// (created if new), and keeps the role it has.
func TestTakeRole(t *testing.T) {
	e := setup(t, testPolicy)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.store.Clock = func() time.Time { return now }
	s, err := e.tr.TakeRole(ctx, "oc", "build")
	if err != nil {
		t.Fatal(err)
	}
	if s.Role != "build" || s.Status != warden.SessionActive || !s.StartedAt.Equal(now) {
		t.Errorf("new session: %+v", s)
	}
	if s, err = e.tr.TakeRole(ctx, "oc", "plan"); err != nil || s.Role != "build" {
		t.Errorf("a second role replaced the first: %q, %v", s.Role, err)
	}
}

// TestOneClock: the store's clock is the session layer's: a tracker whose
// store is two days in the past honours a grant that expired yesterday by
// the wall clock, and stamps the session and the audit record with the
// store's time.
func TestOneClock(t *testing.T) {
	e := setup(t, testPolicy)
	then := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	e.store.Clock = func() time.Time { return then }
	if _, err := e.store.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "git push origin main",
		Expires: then.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	r := e.decide(t, bash("s1", "", "git push origin main"), session.Options{})
	if r.Decision.Decision != warden.Allow || !strings.HasPrefix(r.Decision.Rule, "grant:") {
		t.Errorf("a grant in force on the store's clock: %+v", r.Decision)
	}
	if !r.Audit.Time.Equal(then) || !r.Session.LastSeen.Equal(then) {
		t.Errorf("audit at %v, session seen %v, want the store's %v", r.Audit.Time, r.Session.LastSeen, then)
	}
}
