package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/servetest"
	"github.com/warden-run/warden/serve"
)

const testPolicy = `version: 1
default: deny
rules:
  - id: ask-touch
    effect: ask
    tool: shell
    command: ["touch *"]
    message: Creating files needs the user's approval.
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: Deleting is not allowed.
    suggestion: Move it to the trash folder instead.
  - id: echo
    effect: allow
    tool: shell
    command: ["echo *"]
  - id: files
    effect: allow
    path: ["**"]
`

type svc struct {
	t             *testing.T
	url           string
	dir           string
	s             *serve.Server
	agent, person string
	sv            *servetest.Service
}

// start runs a service on a real loopback port with a SQLite store in a
// temporary folder, and an agent and a person token.
func start(t *testing.T, policyText string) *svc {
	t.Helper()
	sv := servetest.Start(t, policyText)
	return &svc{t: t, url: sv.URL, dir: sv.Dir, s: sv.Server, sv: sv,
		agent: sv.Token(t, "ci-bot", serve.KindAgent), person: sv.Token(t, "alice", serve.KindPerson)}
}

// do sends a request with a bearer token ("" none) and returns the status
// and body.
func (v *svc) do(method, path, tok string, body any) (int, []byte) {
	v.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, v.url+path, rd)
	if err != nil {
		v.t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func (v *svc) decide(call string, wait string) serve.DecideResponse {
	v.t.Helper()
	body := fmt.Sprintf(`{"call": %s, "wait": %q}`, call, wait)
	code, data := v.do("POST", "/v1/decide", v.agent, body)
	if code != 200 {
		v.t.Fatalf("decide: %d %s", code, data)
	}
	var r serve.DecideResponse
	if err := json.Unmarshal(data, &r); err != nil {
		v.t.Fatalf("decide: %v: %s", err, data)
	}
	return r
}

// pending waits for n pending approvals and returns them.
func (v *svc) pending(n int) []warden.Approval {
	v.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		code, data := v.do("GET", "/v1/approvals", v.person, nil)
		if code != 200 {
			v.t.Fatalf("approvals: %d %s", code, data)
		}
		var list []warden.Approval
		json.Unmarshal(data, &list)
		if len(list) >= n {
			return list
		}
	}
	v.t.Fatalf("no %d pending approvals", n)
	return nil
}

func TestDecideApproveAudit(t *testing.T) {
	v := start(t, testPolicy)
	if r := v.decide(`{"tool":"Bash","args":{"command":"echo hi"},"session":"s1"}`, ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("echo: %+v", r)
	}
	if r := v.decide(`{"tool":"Bash","args":{"command":"rm -rf x"},"session":"s1"}`, ""); r.Decision.Decision != warden.Deny || r.Decision.Rule != "no-rm" {
		t.Fatalf("rm: %+v", r)
	}
	// An ask that does not wait tells the model to have a person answer
	// it on the page it can reach (the address its request came to),
	// not with commands that would look in the agent's own folder.
	r := v.decide(`{"tool":"Bash","args":{"command":"touch queued.txt"},"session":"s1"}`, "")
	if r.Decision.Decision != warden.Ask || r.Approval == nil ||
		!strings.Contains(r.Decision.Suggestion, "approval "+r.Approval.ID+" on the warden approvals page, "+v.url+"/#approvals") ||
		strings.Contains(r.Decision.Suggestion, "warden approvals approve") {
		t.Fatalf("queued ask: %+v", r.Decision)
	}
	if code, data := v.do("POST", "/v1/approvals/"+r.Approval.ID+"/reject", v.person, serve.RejectRequest{Message: "not now"}); code != 200 {
		t.Fatalf("reject: %d %s", code, data)
	}
	// A call waits for a human; the person approves it for the session
	// with a narrow grant, and the call goes through.
	var wg sync.WaitGroup
	var waited serve.DecideResponse
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = v.decide(`{"tool":"Bash","args":{"command":"touch a.txt"},"session":"s1"}`, "60s")
	}()
	list := v.pending(1)
	a := list[0]
	// Who asked: the agent token the call came with.
	if a.Rule != "ask-touch" || a.Session != "s1" || a.Agent != "ci-bot" {
		t.Fatalf("approval: %+v", a)
	}
	code, data := v.do("GET", "/v1/approvals/"+a.ID, v.person, nil)
	var detail serve.ApprovalDetail
	if code != 200 || json.Unmarshal(data, &detail) != nil || len(detail.History) == 0 {
		t.Fatalf("approval detail: %d %s", code, data)
	}
	code, data = v.do("POST", "/v1/approvals/"+a.ID+"/approve", v.person, serve.ApproveRequest{Scope: "session", Uses: 2, Expires: "1h"})
	if code != 200 {
		t.Fatalf("approve: %d %s", code, data)
	}
	wg.Wait()
	if waited.Decision.Decision != warden.Allow {
		t.Fatalf("waiting call after approval: %+v", waited)
	}
	// Answering twice is a conflict.
	if code, data = v.do("POST", "/v1/approvals/"+a.ID+"/approve", v.person, serve.ApproveRequest{Scope: "once"}); code != http.StatusConflict {
		t.Fatalf("second answer: %d %s", code, data)
	}
	// The grant is as narrow as the call: a.txt, not b.txt.
	code, data = v.do("GET", "/v1/grants", v.person, nil)
	var grants []warden.Grant
	if code != 200 || json.Unmarshal(data, &grants) != nil || len(grants) != 1 || grants[0].Value != "touch a.txt" || grants[0].CreatedBy != "alice" {
		t.Fatalf("grants: %d %s", code, data)
	}
	if r := v.decide(`{"tool":"Bash","args":{"command":"touch b.txt"},"session":"s1"}`, ""); r.Decision.Decision != warden.Ask {
		t.Fatalf("touch b.txt: %+v", r)
	}
	// Reject the new one with a message: the model sees it.
	list = v.pending(1)
	if code, data = v.do("POST", "/v1/approvals/"+list[0].ID+"/reject", v.person, serve.RejectRequest{Message: "use the tmp folder"}); code != 200 {
		t.Fatalf("reject: %d %s", code, data)
	}
	if r := v.decide(`{"tool":"Bash","args":{"command":"touch b.txt"},"session":"s1"}`, ""); r.Decision.Decision != warden.Deny || !strings.Contains(r.Decision.Reason, "use the tmp folder") {
		t.Fatalf("after reject: %+v", r)
	}
	// Revoke the grant: the call asks again.
	if code, data = v.do("POST", "/v1/grants/"+grants[0].ID+"/revoke", v.person, "{}"); code != 200 {
		t.Fatalf("revoke: %d %s", code, data)
	}
	if r := v.decide(`{"tool":"Bash","args":{"command":"touch a.txt"},"session":"s1"}`, ""); r.Decision.Decision != warden.Ask {
		t.Fatalf("after revoke: %+v", r)
	}
	// The audit trail has every decision, filtered and exported.
	code, data = v.do("GET", "/v1/audit?session=s1&decision=deny", v.person, nil)
	var recs []warden.AuditRecord
	if code != 200 || json.Unmarshal(data, &recs) != nil || len(recs) != 2 || recs[0].Agent != "ci-bot" {
		t.Fatalf("audit deny: %d %s", code, data)
	}
	for agent, want := range map[string]int{"ci-bot": 7, "someone-else": 0} {
		code, data = v.do("GET", "/v1/audit?agent="+agent, v.person, nil)
		if code != 200 || json.Unmarshal(data, &recs) != nil || len(recs) != want {
			t.Fatalf("audit of agent %s: %d %s, want %d records", agent, code, data, want)
		}
	}
	code, data = v.do("GET", "/v1/audit/export", v.person, nil)
	if lines := strings.Count(string(data), "\n"); code != 200 || lines != 7 {
		t.Fatalf("export: %d, %d lines\n%s", code, lines, data)
	}
	code, data = v.do("GET", "/v1/sessions/s1", v.person, nil)
	var sd serve.SessionDetail
	if code != 200 || json.Unmarshal(data, &sd) != nil || sd.Session.Calls == 0 || len(sd.Recent) != 7 {
		t.Fatalf("session: %d %s", code, data)
	}
	// Metrics count the decisions by outcome and rule.
	code, data = v.do("GET", "/metrics", v.person, nil)
	if code != 200 || !strings.Contains(string(data), `warden_decisions_total{code="RULE_DENY",outcome="deny",rule="no-rm"} 1`) ||
		!strings.Contains(string(data), `warden_approvals_answered_total{scope="session",status="approved"} 1`) ||
		!strings.Contains(string(data), "warden_decision_seconds_bucket") {
		t.Fatalf("metrics: %d\n%s", code, data)
	}
}

func TestPolicyEndpoints(t *testing.T) {
	v := start(t, testPolicy)
	code, data := v.do("POST", "/v1/policy/lint", v.person, serve.PolicyRequest{Policy: "version: 1\ndefault: maybe\n"})
	if code != 200 || !strings.Contains(string(data), `"ok":false`) || !strings.Contains(string(data), `"line":2`) {
		t.Fatalf("lint: %d %s", code, data)
	}
	code, data = v.do("POST", "/v1/policy/explain", v.person, `{"call":{"tool":"Bash","args":{"command":"rm x"}}}`)
	if code != 200 || !strings.Contains(string(data), `"rule":"no-rm"`) || !strings.Contains(string(data), `"policy":"live"`) {
		t.Fatalf("explain live: %d %s", code, data)
	}
	// What if rm were allowed?
	code, data = v.do("POST", "/v1/policy/explain", v.person, serve.PolicyRequest{Policy: "version: 1\ndefault: allow\n",
		Call: json.RawMessage(`{"tool":"Bash","args":{"command":"rm x"}}`)})
	if code != 200 || !strings.Contains(string(data), `"decision":"allow"`) || !strings.Contains(string(data), `"policy":"posted"`) {
		t.Fatalf("explain posted: %d %s", code, data)
	}
}

func TestHotReloadFailsClosed(t *testing.T) {
	v := start(t, testPolicy)
	call := `{"tool":"Bash","args":{"command":"echo hi"}}`
	if r := v.decide(call, ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("before: %+v", r)
	}
	pf := filepath.Join(v.dir, "warden.yaml")
	if err := os.WriteFile(pf, []byte(strings.Replace(testPolicy, "effect: allow", "effect: deny\n    message: No printing.\n    suggestion: Print nothing.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := v.decide(call, ""); r.Decision.Decision != warden.Deny || r.Decision.Rule != "echo" {
		t.Fatalf("after the edit: %+v", r)
	}
	if err := os.WriteFile(pf, []byte("version: 1\ndefault: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := v.decide(call, "")
	if r.Decision.Decision != warden.Deny || r.Error == "" || r.AuditID == 0 {
		t.Fatalf("broken policy: %+v", r)
	}
	if code, _ := v.do("GET", "/healthz", "", nil); code != http.StatusServiceUnavailable {
		t.Fatalf("healthz with a broken policy: %d", code)
	}
	if err := os.WriteFile(pf, []byte(testPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := v.decide(call, ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("fixed: %+v", r)
	}
}

// TestDecideBodies: a /v1/decide body is decided, or refused with its
// fault named, the same whether it takes the one-pass decoding (names as
// spelled, once) or the slow one (anything else).
func TestDecideBodies(t *testing.T) {
	v := start(t, testPolicy)
	for _, c := range []struct {
		body, want string
		code       int
	}{
		{`{"call":{"tool":"Bash","args":{"command":"rm -rf x"},"session":"b1"},"host_prompts":true}`, `"rule":"no-rm"`, 200},
		{`{"call":{"tool":"Bash","args":{"command":"echo hi"}}}`, `"decision":"allow"`, 200},
		// Slow: a name twice (the last is decided), a name escaped, the
		// body's name in another case.
		{`{"call":{"tool":"Read","tool":"Bash","args":{"command":"rm -rf x"}}}`, `"rule":"no-rm"`, 200},
		{`{"call":{"t\u006fol":"Bash","args":{"command":"rm -rf x"}}}`, `"rule":"no-rm"`, 200},
		{`{"CALL":{"tool":"Bash","args":{"command":"rm -rf x"}}}`, `"rule":"no-rm"`, 200},
		// Refused, in the slow decoding's words.
		{`{"call":{"Tool":"Bash","args":{}}}`, `tool call: unknown field \"Tool\"`, 400},
		{`{"call":{"tool":"Bash","args":null}}`, `field \"args\" must be an object, not null`, 400},
		{`{"call":{"tool":"Bash"}}`, `field \"args\" is required`, 400},
		{`{"call":{"tool":"","args":{}}}`, `field \"tool\" is required`, 400},
		{`{"call":{"tool":"Bash","args":{},"depth":-1}}`, `field \"depth\" must not be negative`, 400},
		{`{"call":{"tool":"Bash","args":{}},"extra":1}`, `unknown field \"extra\"`, 400},
		{`{"call":{"tool":"Bash","args":{}}} {}`, `more than one JSON value`, 400},
		{`{"wait":"1s"}`, `no \"call\"`, 400},
		{`{"call":{"tool":"Bash","args":{}},"wait":"forever"}`, `wait \"forever\": want a duration`, 400},
	} {
		code, data := v.do("POST", "/v1/decide", v.agent, c.body)
		if code != c.code || !strings.Contains(string(data), c.want) {
			t.Errorf("%s: %d %s, want %d and %s", c.body, code, data, c.code, c.want)
		}
	}
}

// TestSecurity: each refused with the right status, nothing answered.
func TestSecurity(t *testing.T) {
	v := start(t, testPolicy)
	v.decide(`{"tool":"Bash","args":{"command":"touch a.txt"},"session":"s1"}`, "")
	a := v.pending(1)[0]
	approve := "/v1/approvals/" + a.ID + "/approve"
	once := `{"scope":"once"}`
	for _, c := range []struct {
		name, method, path, tok string
		body                    any
		want                    int
	}{
		{"no token", "POST", approve, "", once, 401},
		{"wrong token", "POST", approve, "wdn_0123456789abcdef", once, 401},
		{"not a token", "POST", approve, "hunter2", once, 401},
		{"agent answers an approval", "POST", approve, v.agent, once, 403},
		{"agent rejects an approval", "POST", "/v1/approvals/" + a.ID + "/reject", v.agent, `{"message":"no"}`, 403},
		{"agent reads the audit", "GET", "/v1/audit", v.agent, nil, 403},
		{"agent adds a grant", "POST", "/v1/grants", v.agent, `{"tool":"Bash","command":"touch a.txt"}`, 403},
		{"person decides", "POST", "/v1/decide", v.person, `{"call":{"tool":"Bash","args":{"command":"echo"}}}`, 403},
		{"malformed JSON", "POST", approve, v.person, `{"scope":`, 400},
		{"unknown field", "POST", approve, v.person, `{"scope":"once","grant_everything":true}`, 400},
		{"bad scope", "POST", approve, v.person, `{"scope":"forever"}`, 400},
		{"oversized body", "POST", approve, v.person, `{"scope":"once","message":"` + strings.Repeat("x", 70<<10) + `"}`, 413},
		{"malformed decide", "POST", "/v1/decide", v.agent, `{"call":{"tool":"Bash"}}`, 400},
		{"reject without message", "POST", "/v1/approvals/" + a.ID + "/reject", v.person, `{"message":" "}`, 400},
	} {
		code, data := v.do(c.method, c.path, c.tok, c.body)
		if code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, code, c.want, data)
		}
		if code >= 400 && !strings.Contains(string(data), `"error"`) {
			t.Errorf("%s: no error message: %s", c.name, data)
		}
		if want := map[string]string{"agent answers an approval": "an agent token may not do this: it needs a person token",
			"person decides": "a person token may not do this: it needs an agent token"}[c.name]; want != "" && !strings.Contains(string(data), want) {
			t.Errorf("%s: %s, want %q", c.name, data, want)
		}
	}
	// A cross-site form post with the person's cookie (what a browser
	// sends from another site's page): refused, with or without Origin.
	for _, origin := range []string{"http://evil.example", ""} {
		form := url.Values{"scope": {"once"}}
		req, _ := http.NewRequest("POST", v.url+approve, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "warden_token", Value: v.person})
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site form post (Origin %q): status %d, want 403", origin, resp.StatusCode)
		}
	}
	// Same origin with the cookie but no CSRF token: refused too.
	req, _ := http.NewRequest("POST", v.url+approve, strings.NewReader(once))
	req.AddCookie(&http.Cookie{Name: "warden_token", Value: v.person})
	req.Header.Set("Origin", v.url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cookie without CSRF token: status %d, want 403", resp.StatusCode)
	}
	// Nothing was answered, no grant was made.
	got, err := v.s.Store().Approval(context.Background(), a.ID)
	if err != nil || got.Status != warden.ApprovalPending {
		t.Fatalf("approval after the refused requests: %+v %v", got, err)
	}
	if gs, _ := v.s.Store().Grants(context.Background(), warden.GrantFilter{All: true}); len(gs) != 0 {
		t.Fatalf("grants after the refused requests: %+v", gs)
	}
}

// TestShutdownAnswersWaitingCalls: a call waiting for a human when the
// service stops gets an answer (deny) and its audit record.
func TestShutdownAnswersWaitingCalls(t *testing.T) {
	v := start(t, testPolicy)
	got := make(chan serve.DecideResponse, 1)
	go func() { got <- v.decide(`{"tool":"Bash","args":{"command":"touch a.txt"}}`, "5m") }()
	v.pending(1)
	stopped := make(chan error, 1)
	go func() { stopped <- v.sv.Stop() }()
	var r serve.DecideResponse
	select {
	case r = <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("the waiting call got no answer at shutdown")
	}
	if r.Decision.Decision != warden.Deny || r.AuditID == 0 {
		t.Fatalf("waiting call at shutdown: %+v", r)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// TestHookEvent: a remote hook event is answered as `warden hook` would
// answer it, and audited even when the hook asks for --stateless.
func TestHookEvent(t *testing.T) {
	v := start(t, testPolicy)
	in := fmt.Sprintf(`{"session_id":"h1","hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Bash","tool_input":{"command":"rm -rf x"}}`, v.dir)
	body, _ := json.Marshal(map[string]any{"v": 1, "op": "hook", "args": []string{"claude", "--stateless"}, "dir": v.dir, "stdin": []byte(in)})
	code, data := v.do("POST", "/v1/hook", v.agent, body)
	var resp struct {
		Code   int    `json:"code"`
		Stdout []byte `json:"stdout"`
	}
	if code != 200 || json.Unmarshal(data, &resp) != nil || !strings.Contains(string(resp.Stdout), `"permissionDecision":"deny"`) {
		t.Fatalf("hook: %d %s", code, data)
	}
	recs, err := v.s.Store().Audit(context.Background(), warden.AuditFilter{Session: "h1"})
	if err != nil || len(recs) != 1 || recs[0].Rule != "no-rm" || recs[0].Host != "claude" {
		t.Fatalf("audit of the hook event: %+v %v", recs, err)
	}
	if code, data := v.do("GET", "/metrics", v.agent, nil); code != 200 || !strings.Contains(string(data), `warden_decisions_total{code="RULE_DENY",outcome="deny",rule="no-rm"} 1`) {
		t.Fatalf("metrics after a hook event: %d\n%s", code, data)
	}
	if code, data := v.do("POST", "/v1/hook", v.person, body); code != 403 {
		t.Fatalf("hook with a person token: %d %s", code, data)
	}
	// A headless host's ask is queued, and the model is told to have it
	// answered on the service's page.
	in = fmt.Sprintf(`{"session_id":"h1","hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Bash","tool_input":{"command":"touch q.txt"}}`, v.dir)
	body, _ = json.Marshal(map[string]any{"v": 1, "op": "hook", "args": []string{"claude"}, "dir": v.dir, "stdin": []byte(in)})
	code, data = v.do("POST", "/v1/hook", v.agent, body)
	if code != 200 || json.Unmarshal(data, &resp) != nil || !strings.Contains(string(resp.Stdout), "on the warden approvals page, "+v.url+"/#approvals") ||
		strings.Contains(string(resp.Stdout), "warden approvals approve") {
		t.Fatalf("queued ask through a remote hook: %d %s", code, resp.Stdout)
	}
}

// TestTokensFile: a token added is known at once, one revoked is refused
// at once (the file is read again when it changes), and a file with a
// hash that is not hex is refused whole: never a pass.
func TestTokensFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "serve-tokens.json")
	tk := serve.OpenTokens(file)
	a, err := tk.Add("bot", serve.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tk.Check(a); err != nil || got.Name != "bot" || got.Kind != serve.KindAgent {
		t.Fatalf("check: %+v %v", got, err)
	}
	p, err := tk.Add("alice", serve.KindPerson)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tk.Check(p); err != nil || got.Name != "alice" {
		t.Fatalf("check the second token: %+v %v", got, err)
	}
	if err := tk.Revoke("bot"); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Check(a); err == nil {
		t.Fatal("a revoked token passed")
	}
	if _, err := tk.Check(p + "x"); err == nil {
		t.Fatal("a wrong token passed")
	}
	bad := `[{"name":"x","kind":"agent","sha256":"` + strings.Repeat("zz", 32) + `","created":"2026-01-01T00:00:00Z"}]`
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Check(p); err == nil || !strings.Contains(err.Error(), "not a SHA-256") {
		t.Fatalf("a tokens file with a bad hash: %v", err)
	}
}

// A token revoked by another process (another Tokens on the same file, as
// `warden serve token revoke` is), long after the file was last written,
// is refused at the next check: what the service remembers of the file
// (through a workspace view) is checked before each request.
func TestTokensRevokedElsewhere(t *testing.T) {
	file := filepath.Join(t.TempDir(), "serve-tokens.json")
	tk := serve.OpenTokens(file)
	a, err := tk.Add("bot", serve.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	// Older than the clock step within which a stamp vouches for nothing.
	time.Sleep(300 * time.Millisecond)
	for range 3 {
		if _, err := tk.Check(a); err != nil {
			t.Fatalf("check: %v", err)
		}
	}
	if err := serve.OpenTokens(file).Revoke("bot"); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Check(a); err == nil {
		t.Fatal("a token revoked elsewhere passed")
	}
}

// gitStatusService starts a service whose policy allows git status, and
// returns it with a git status call.
func gitStatusService(t *testing.T) (*svc, string) {
	t.Helper()
	v := start(t, testPolicy+`  - id: git-status
    effect: allow
    tool: shell
    command: ["git status"]
`)
	return v, `{"tool":"Bash","args":{"command":"git status"},"session":"s1"}`
}

// repoShape gives dir a bare repository's shape (HEAD, objects/, refs/),
// whose configuration git would run.
func repoShape(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An attacker who waits until the service's view trusts what it read
// (past the clock step, its folders watched) and then makes the root a
// repository's folder by renames (prepared elsewhere, moved in: no file
// written in place) still has the next git status refused.
func TestDecideSeesWorkspaceChangeLater(t *testing.T) {
	v, call := gitStatusService(t)
	stage := t.TempDir()
	repoShape(t, stage)
	if r := v.decide(call, ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("git status in a plain folder: %+v", r.Decision)
	}
	time.Sleep(300 * time.Millisecond) // past the clock step: the view keeps its answers
	for range 2 {
		if r := v.decide(call, ""); r.Decision.Decision != warden.Allow {
			t.Fatalf("git status in a plain folder, again: %+v", r.Decision)
		}
	}
	for _, n := range []string{"objects", "refs", "HEAD"} {
		if err := os.Rename(filepath.Join(stage, n), filepath.Join(v.dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if r := v.decide(call, ""); r.Decision.Decision == warden.Allow {
		t.Errorf("git status in a root moved into a repository's shape: %+v", r.Decision)
	}
}

// The service keeps its view of the workspace across decisions and checks
// it before each: a root made to look like a repository (HEAD, objects/,
// refs/, whose configuration git would run) after a git status was
// allowed is seen at the next call.
func TestDecideSeesWorkspaceChange(t *testing.T) {
	v, call := gitStatusService(t)
	if r := v.decide(call, ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("git status in a plain folder: %+v", r.Decision)
	}
	repoShape(t, v.dir)
	if r := v.decide(call, ""); r.Decision.Decision == warden.Allow {
		t.Errorf("git status in a root that became a repository's folder: %+v", r.Decision)
	}
}
