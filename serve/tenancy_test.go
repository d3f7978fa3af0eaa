package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/internal/servetest"
	"github.com/warden-run/warden/serve"
)

const tenancyPolicy = `version: 1
default: deny
rules:
  - id: git-status
    effect: allow
    tool: shell
    command: ["git status"]
  - id: ask-touch
    effect: ask
    tool: shell
    command: ["touch *"]
    message: Creating files needs the user's approval.
  - id: files
    effect: allow
    path: ["**"]
`

// tenants is a service with two agent tokens, a and b, and a person.
type tenants struct {
	*svc
	a, b string
}

func startTenants(t *testing.T, set func(*serve.Config)) *tenants {
	t.Helper()
	sv := servetest.StartConfig(t, tenancyPolicy, set)
	v := &svc{t: t, url: sv.URL, dir: sv.Dir, s: sv.Server, sv: sv,
		agent: sv.Token(t, "agent-a", serve.KindAgent), person: sv.Token(t, "alice", serve.KindPerson)}
	return &tenants{svc: v, a: v.agent, b: sv.Token(t, "agent-b", serve.KindAgent)}
}

// onBothStores runs a test on a service with a SQLite store and one with
// a PostgreSQL store (skipped where PostgreSQL is not reachable).
func onBothStores(t *testing.T, test func(t *testing.T, set func(*serve.Config))) {
	t.Run("sqlite", func(t *testing.T) { test(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.Schema(t)
		test(t, func(c *serve.Config) { c.Store = url })
	})
}

// decideAs sends a call with a token, a session and a call id ("" none).
func (v *tenants) decideAs(tok, session, command, callID string) serve.DecideResponse {
	v.t.Helper()
	call, _ := json.Marshal(map[string]any{"tool": "Bash", "args": map[string]any{"command": command}, "session": session})
	body, _ := json.Marshal(map[string]any{"call": json.RawMessage(call), "call_id": callID})
	code, data := v.do("POST", "/v1/decide", tok, body)
	if code != 200 {
		v.t.Fatalf("decide %q in %q: %d %s", command, session, code, data)
	}
	var r serve.DecideResponse
	if err := json.Unmarshal(data, &r); err != nil {
		v.t.Fatalf("decide: %v: %s", err, data)
	}
	return r
}

// record returns the audit record of a decision, which must exist.
func (v *tenants) record(r serve.DecideResponse) warden.AuditRecord {
	v.t.Helper()
	if r.AuditID == 0 {
		v.t.Fatalf("the answer names no audit record: %+v", r)
	}
	recs, err := v.s.Store().Audit(context.Background(), warden.AuditFilter{})
	if err != nil {
		v.t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.ID == r.AuditID {
			return rec
		}
	}
	v.t.Fatalf("audit record %d of %+v is not in the store", r.AuditID, r.Decision)
	return warden.AuditRecord{}
}

// TestCallIDAnswersOnlyItsCall: a call id on record answers only its own
// call (same token, session, tool and arguments). Another token, another
// session or another command with that id is never given the recorded
// allow: it is denied, and the refusal is recorded.
func TestCallIDAnswersOnlyItsCall(t *testing.T) { onBothStores(t, testCallIDAnswersOnlyItsCall) }

func testCallIDAnswersOnlyItsCall(t *testing.T, set func(*serve.Config)) {
	v := startTenants(t, set)
	first := v.decideAs(v.a, "s-a", "git status", "call-x")
	if first.Decision.Decision != warden.Allow || first.Replayed {
		t.Fatalf("git status: %+v", first)
	}
	for _, tc := range []struct {
		name, tok, session string
	}{
		{"another token", v.b, "s-b"},
		{"another token naming the session", v.b, "s-a"},
		{"the same token in another session", v.a, "s-a2"},
		{"the same token and session, another command", v.a, "s-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := v.decideAs(tc.tok, tc.session, "rm -rf /", "call-x")
			if r.Decision.Decision == warden.Allow || r.Replayed {
				t.Fatalf("rm -rf / with a taken call id: %+v", r)
			}
			rec := v.record(r)
			if rec.Decision != warden.Deny || rec.ID == first.AuditID || rec.Tool != "Bash" || rec.Args["command"] != "rm -rf /" {
				t.Fatalf("the refusal's record: %+v", rec)
			}
		})
	}
	// The refusal says why, and what to do.
	r := v.decideAs(v.b, "s-b", "rm -rf /", "call-x")
	if r.Decision.Code != warden.CodeBadInput || !strings.Contains(r.Decision.Reason, `call id "call-x" was given already for another call`) ||
		!strings.Contains(r.Decision.Suggestion, "new call id") {
		t.Fatalf("the refusal: %+v", r.Decision)
	}
	// Also the same command from another token or session: the id is the
	// first call's.
	if r := v.decideAs(v.b, "s-b", "git status", "call-x"); r.Replayed || r.AuditID == first.AuditID {
		t.Fatalf("git status from another token with the id: %+v", r)
	}
	// The call itself, retried: its recorded answer, no new record.
	again := v.decideAs(v.a, "s-a", "git status", "call-x")
	if !again.Replayed || again.AuditID != first.AuditID || again.Decision.Decision != warden.Allow {
		t.Fatalf("the retried call: %+v", again)
	}
	recs, err := v.s.Store().Audit(context.Background(), warden.AuditFilter{CallID: "call-x"})
	if err != nil || len(recs) != 1 || recs[0].ID != first.AuditID {
		t.Fatalf("records under call-x: %+v %v", recs, err)
	}
	// The hooks' path replays by call id too: a remote hook event from
	// another token with that id is no replay either.
	in := fmt.Sprintf(`{"session_id":"h-b","hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`, v.dir)
	body, _ := json.Marshal(map[string]any{"v": 1, "op": "hook", "args": []string{"claude"}, "dir": v.dir, "stdin": []byte(in), "call_id": "call-x"})
	code, data := v.do("POST", "/v1/hook", v.b, body)
	var hr struct {
		Stdout []byte `json:"stdout"`
	}
	if code != 200 || json.Unmarshal(data, &hr) != nil || !strings.Contains(string(hr.Stdout), `"permissionDecision":"deny"`) {
		t.Fatalf("hook with a taken call id: %d %s", code, data)
	}
	hooked, err := v.s.Store().Audit(context.Background(), warden.AuditFilter{Agent: "agent-b", Tool: "Bash"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range hooked {
		found = found || (rec.Host == "claude" && rec.Decision == warden.Deny && rec.Args["command"] == "rm -rf /")
	}
	if !found {
		t.Fatalf("no record of the refused hook event: %+v", hooked)
	}
}

// TestSessionBelongsToItsToken: another agent token cannot decide in a
// session, nor in a subagent session of it, nor use its grants; an
// approval answered for one token's call does not let another token's
// identical call through, also from a new session.
func TestSessionBelongsToItsToken(t *testing.T) { onBothStores(t, testSessionBelongsToItsToken) }

func testSessionBelongsToItsToken(t *testing.T, set func(*serve.Config)) {
	v := startTenants(t, set)
	if r := v.decideAs(v.a, "s-a", "git status", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("a in its session: %+v", r)
	}
	for _, sid := range []string{"s-a", "s-a/sub"} {
		r := v.decideAs(v.b, sid, "git status", "")
		if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeRefused || !strings.Contains(r.Decision.Reason, "belongs to another agent") {
			t.Fatalf("b in %s: %+v", sid, r.Decision)
		}
		// Recorded, in no session: the refusal never lands in a's history.
		if rec := v.record(r); rec.Session != "" || rec.Agent != "agent-b" {
			t.Fatalf("record of b in %s: %+v", sid, rec)
		}
	}
	if code, data := v.do("POST", "/v1/hidden", v.b, `{"session":"s-a","tools":["Bash"]}`); code != 403 || !strings.Contains(string(data), "belongs to another agent") {
		t.Fatalf("b asks which tools a's session hides: %d %s", code, data)
	}
	if code, data := v.do("POST", "/v1/hidden", v.a, `{"session":"s-a","tools":["Bash"]}`); code != 200 {
		t.Fatalf("a asks which tools its session hides: %d %s", code, data)
	}
	// Nor can b's hooks resume a's session, or start a subagent in it.
	for _, ev := range []string{
		`{"session_id":"s-a","hook_event_name":"SessionStart","source":"resume","cwd":%q}`,
		`{"session_id":"s-a","hook_event_name":"SubagentStart","agent_id":"x","agent_type":"helper","cwd":%q}`,
	} {
		body, _ := json.Marshal(map[string]any{"v": 1, "op": "hook", "args": []string{"claude"}, "dir": v.dir, "stdin": []byte(fmt.Sprintf(ev, v.dir))})
		code, data := v.do("POST", "/v1/hook", v.b, body)
		var hr struct {
			Stdout []byte `json:"stdout"`
		}
		if code != 200 || json.Unmarshal(data, &hr) != nil || !strings.Contains(string(hr.Stdout), "belongs to another agent") {
			t.Fatalf("b's hook event in a's session: %d %s", code, hr.Stdout)
		}
	}
	sess, err := v.s.Store().Session(context.Background(), "s-a")
	if err != nil || sess.Agent != "agent-a" || sess.Calls != 1 || sess.Resumes != 0 {
		t.Fatalf("session s-a: %+v %v", sess, err)
	}
	if list, err := v.s.Store().Sessions(context.Background(), warden.SessionFilter{}); err != nil || len(list) != 1 {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	// A grant for a's session is a's.
	if code, data := v.do("POST", "/v1/grants", v.person, serve.GrantRequest{Tool: "Bash", Session: "s-a", Command: "touch granted.txt"}); code != 200 {
		t.Fatalf("grant: %d %s", code, data)
	}
	if r := v.decideAs(v.b, "s-a", "touch granted.txt", ""); r.Decision.Decision == warden.Allow {
		t.Fatalf("b used a's grant: %+v", r)
	}
	if r := v.decideAs(v.a, "s-a", "touch granted.txt", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("a's grant: %+v", r)
	}
	// a's ask, answered "for the session": a headless host of b, in a new
	// session, neither shares nor takes it.
	ask := v.decideAs(v.a, "s-a", "touch report.txt", "")
	if ask.Decision.Decision != warden.Ask || ask.Approval == nil {
		t.Fatalf("a's ask: %+v", ask)
	}
	if code, data := v.do("POST", "/v1/approvals/"+ask.Approval.ID+"/approve", v.person, serve.ApproveRequest{Scope: "session"}); code != 200 {
		t.Fatalf("approve: %d %s", code, data)
	}
	rb := v.decideAs(v.b, "s-b-new", "touch report.txt", "")
	if rb.Decision.Decision == warden.Allow || rb.Approval == nil || rb.Approval.ID == ask.Approval.ID || rb.Approval.Agent != "agent-b" {
		t.Fatalf("b's identical call in a new session: %+v approval %+v", rb.Decision, rb.Approval)
	}
	// a's own headless run in a new session still takes the answer.
	if ra := v.decideAs(v.a, "s-a-new", "touch report.txt", ""); ra.Decision.Decision != warden.Allow {
		t.Fatalf("a's identical call in a new session: %+v", ra.Decision)
	}
}

// TestHaltAnAgent: a halted agent token is stopped in every session, a
// new one included; a session id it bends (a trailing space, a control
// character) is refused, never a new session; the other token carries on.
func TestHaltAnAgent(t *testing.T) { onBothStores(t, testHaltAnAgent) }

func testHaltAnAgent(t *testing.T, set func(*serve.Config)) {
	v := startTenants(t, set)
	if r := v.decideAs(v.b, "s-b", "git status", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("b before the halt: %+v", r)
	}
	if code, data := v.do("POST", "/v1/halts", v.person, serve.HaltRequest{Session: "s-b", Message: "stop, b"}); code != 200 {
		t.Fatalf("halt s-b: %d %s", code, data)
	}
	for _, sid := range []string{"s-b ", " s-b", "s-b\t", "s-b\n", "s-b\x00", "s-b\u0085"} {
		r := v.decideAs(v.b, sid, "git status", "")
		if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeBadInput || !strings.Contains(r.Decision.Reason, "session id") {
			t.Fatalf("b in session %q: %+v", sid, r.Decision)
		}
		if rec := v.record(r); rec.Session != "" {
			t.Fatalf("record of session %q: %+v", sid, rec)
		}
	}
	if code, data := v.do("POST", "/v1/halts", v.person, serve.HaltRequest{Agent: "agent-b", Message: "Stop, agent b."}); code != 200 {
		t.Fatalf("halt agent-b: %d %s", code, data)
	}
	for _, sid := range []string{"s-b2", "brand-new", ""} {
		r := v.decideAs(v.b, sid, "git status", "")
		if r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeHalted || !strings.Contains(r.Decision.Reason, "agent-b") {
			t.Fatalf("halted b in session %q: %+v", sid, r.Decision)
		}
	}
	if r := v.decideAs(v.a, "s-a", "git status", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("a while b is halted: %+v", r.Decision)
	}
	// Halted b naming a's session: denied, and recorded outside it.
	if r := v.decideAs(v.b, "s-a", "git status", ""); r.Decision.Code != warden.CodeHalted {
		t.Fatalf("halted b in a's session: %+v", r.Decision)
	} else if rec := v.record(r); rec.Session != "" {
		t.Fatalf("halted b's record in a's session: %+v", rec)
	}
	code, data := v.do("GET", "/v1/halts", v.person, nil)
	if code != 200 || !strings.Contains(string(data), `"agent":"agent-b"`) {
		t.Fatalf("halts: %d %s", code, data)
	}
	code, data = v.do("GET", "/v1/sessions/s-b2", v.person, nil)
	if code != 404 {
		t.Fatalf("a halted agent's refused call opened a session: %d %s", code, data)
	}
	// b's session, its own halt lifted, shows the agent's.
	if code, data := v.do("POST", "/v1/halts/resume", v.person, serve.HaltRequest{Session: "s-b"}); code != 200 {
		t.Fatalf("resume s-b: %d %s", code, data)
	}
	code, data = v.do("GET", "/v1/sessions/s-b", v.person, nil)
	if code != 200 || !strings.Contains(string(data), `"agent":"agent-b","message":"Stop, agent b."`) {
		t.Fatalf("session s-b: %d %s", code, data)
	}
	for _, bad := range []serve.HaltRequest{{Agent: "agent-b", Session: "s"}, {Session: "s "}} {
		if code, data := v.do("POST", "/v1/halts", v.person, bad); code != 400 {
			t.Fatalf("halt %+v: %d %s", bad, code, data)
		}
	}
	if code, data := v.do("POST", "/v1/halts/resume", v.person, serve.HaltRequest{Agent: "agent-b"}); code != 200 {
		t.Fatalf("resume agent-b: %d %s", code, data)
	}
	if r := v.decideAs(v.b, "s-b3", "git status", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("b after resume: %+v", r.Decision)
	}
	// Every endpoint that takes a session id refuses a bent one.
	if code, data := v.do("POST", "/v1/hidden", v.b, `{"session":"s-b3 ","tools":["x"]}`); code != 400 || !strings.Contains(string(data), "session id") {
		t.Fatalf("hidden with a bent session id: %d %s", code, data)
	}
	if code, data := v.do("POST", "/v1/grants", v.person, serve.GrantRequest{Tool: "Bash", Session: "s-b3\x01", Command: "ls"}); code != 400 {
		t.Fatalf("grant with a bent session id: %d %s", code, data)
	}
	in := fmt.Sprintf(`{"session_id":"s-b3 ","hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Bash","tool_input":{"command":"git status"}}`, v.dir)
	body, _ := json.Marshal(map[string]any{"v": 1, "op": "hook", "args": []string{"claude"}, "dir": v.dir, "stdin": []byte(in)})
	code, data = v.do("POST", "/v1/hook", v.b, body)
	var hr struct {
		Stdout []byte `json:"stdout"`
	}
	if code != 200 || json.Unmarshal(data, &hr) != nil || !strings.Contains(string(hr.Stdout), `"permissionDecision":"deny"`) ||
		!strings.Contains(string(hr.Stdout), "BAD_INPUT") {
		t.Fatalf("hook with a bent session id: %d %s", code, hr.Stdout)
	}
}

// TestSlowBodyIsCut: a client that sends its body a byte at a time is cut
// off when the body deadline passes: its connection is closed, with a 408
// if it reads one.
func TestSlowBodyIsCut(t *testing.T) {
	v := startTenants(t, func(c *serve.Config) { c.BodyTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(v.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 100000
	fmt.Fprintf(conn, "POST /v1/decide HTTP/1.1\r\nHost: warden\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", v.a, size)
	stop := make(chan struct{})
	var sent int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ; sent < size; sent++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := conn.Write([]byte{' '}); err != nil {
				return
			}
		}
	}()
	// Wait for the server to close the connection (generous: the test
	// fails only if it never does).
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	resp, rerr := http.ReadResponse(bufio.NewReader(conn), nil)
	if rerr == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "did not arrive in time") {
			t.Errorf("answer to a slow body: %d %s", resp.StatusCode, body)
		}
		_, rerr = conn.Read(make([]byte, 1))
	}
	var ne net.Error
	if errors.As(rerr, &ne) && ne.Timeout() {
		t.Fatalf("the server kept a slow body's connection open: %v", rerr)
	}
	close(stop)
	wg.Wait()
	if sent >= size {
		t.Fatalf("the whole body was sent (%d bytes): nothing was cut", sent)
	}
	if code, data := v.do("GET", "/metrics", v.person, nil); code != 200 || !strings.Contains(string(data), `warden_requests_refused_total{reason="body_timeout"} 1`) {
		t.Errorf("metrics after a slow body: %d\n%s", code, data)
	}
	// A request that then waits for its answer is not cut by the body's
	// deadline: the ask waits past it and is answered by a person.
	done := make(chan serve.DecideResponse, 1)
	go func() {
		call := `{"call":{"tool":"Bash","args":{"command":"touch slow.txt"},"session":"w"},"wait":"60s"}`
		code, data := v.do("POST", "/v1/decide", v.a, call)
		var r serve.DecideResponse
		if code != 200 || json.Unmarshal(data, &r) != nil {
			t.Errorf("waiting call: %d %s", code, data)
		}
		done <- r
	}()
	a := v.pending(1)[0]
	// The request's body was read once its approval shows; let it wait
	// well past the body deadline before the answer comes. (Not a timed
	// assertion: a slower machine only waits longer.)
	time.Sleep(3 * 300 * time.Millisecond)
	if code, data := v.do("POST", "/v1/approvals/"+a.ID+"/approve", v.person, serve.ApproveRequest{Scope: "once"}); code != 200 {
		t.Fatalf("approve: %d %s", code, data)
	}
	if r := <-done; r.Decision.Decision != warden.Allow {
		t.Fatalf("the waiting call after its body deadline: %+v", r)
	}
}

// TestRequestsPerToken: one token may hold Config.MaxPerToken requests at
// once; one more is answered 429 with a body that says so, while another
// token is served; when one ends, the token is served again.
func TestRequestsPerToken(t *testing.T) {
	v := startTenants(t, func(c *serve.Config) { c.MaxPerToken = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streams []*http.Response
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, "GET", v.url+"/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+v.person)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("events stream: %v %v", resp, err)
		}
		streams = append(streams, resp)
	}
	code, data := v.do("GET", "/v1/approvals", v.person, nil)
	if code != http.StatusTooManyRequests || !strings.Contains(string(data), "too many requests at once for the token alice") ||
		!strings.Contains(string(data), "the limit is 2") {
		t.Fatalf("a third request of the token: %d %s", code, data)
	}
	if r := v.decideAs(v.a, "s", "git status", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("another token meanwhile: %+v", r)
	}
	if code, data := v.do("GET", "/metrics", v.a, nil); code != 200 || !strings.Contains(string(data), `warden_requests_refused_total{reason="too_many"} 1`) {
		t.Errorf("metrics after a request over the limit: %d\n%s", code, data)
	}
	streams[0].Body.Close()
	// The stream's end reaches the service when it next writes or sees
	// the connection close: wait for it.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		code, data := v.do("GET", "/v1/approvals", v.person, nil)
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token is still refused after a stream ended: %d %s", code, data)
		}
	}
	streams[1].Body.Close()
}

// TestHealthzRevealsNothing: /healthz says whether the service decides,
// and names no path, file or policy, also when the policy breaks.
func TestHealthzRevealsNothing(t *testing.T) {
	v := startTenants(t, nil)
	code, data := v.do("GET", "/healthz", "", nil)
	if code != 200 || strings.TrimSpace(string(data)) != `{"ok":true}` {
		t.Fatalf("healthz: %d %s", code, data)
	}
	if err := os.WriteFile(v.dir+"/warden.yaml", []byte("version: 1\nrules: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		code, data = v.do("GET", "/healthz", "", nil)
		if code == http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
	}
	if code != http.StatusServiceUnavailable || strings.Contains(string(data), v.dir) || strings.Contains(string(data), "warden.yaml") ||
		strings.Contains(string(data), "line") {
		t.Fatalf("healthz with a broken policy: %d %s", code, data)
	}
}

// TestTokenExpiry: a token with an expiry works until it; past it, it is
// refused with 401 and a body that says it expired, and the service's log
// names the token, never the token itself.
func TestTokenExpiry(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	v := startTenants(t, func(c *serve.Config) {
		c.Log = log.New(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logged.Write(p)
		}), "", 0)
	})
	tk := v.s.Tokens()
	tok, err := tk.AddExpiring("temp-bot", serve.KindAgent, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if r := v.decideAs(tok, "s-t", "git status", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("before expiry: %+v", r)
	}
	list, err := tk.List()
	if err != nil {
		t.Fatal(err)
	}
	// Its expiry passes: the file says so (as a token added with an
	// expiry in the past would, were that allowed).
	var raw []map[string]any
	data, _ := os.ReadFile(tk.File())
	json.Unmarshal(data, &raw)
	for _, e := range raw {
		if e["name"] == "temp-bot" {
			e["expires"] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
		}
	}
	data, _ = json.Marshal(raw)
	// A new file in its place (as the tokens file is always written): the
	// service sees the change whatever the clock's granularity.
	if err := os.WriteFile(tk.File()+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tk.File()+".new", tk.File()); err != nil {
		t.Fatal(err)
	}
	code, body := v.do("POST", "/v1/decide", tok, `{"call":{"tool":"Bash","args":{"command":"git status"}}}`)
	if code != http.StatusUnauthorized || !strings.Contains(string(body), "temp-bot expired at") || strings.Contains(string(body), tok) {
		t.Fatalf("an expired token: %d %s", code, body)
	}
	mu.Lock()
	l := logged.String()
	mu.Unlock()
	if !strings.Contains(l, `expired token "temp-bot"`) || strings.Contains(l, tok) {
		t.Fatalf("the service's log of an expired token:\n%s", l)
	}
	listed := false
	for _, e := range list {
		listed = listed || (e.Name == "temp-bot" && !e.Expires.IsZero())
	}
	if !listed {
		t.Fatalf("tokens: %+v", list)
	}
	// The others are unaffected.
	if r := v.decideAs(v.a, "s-a", "git status", ""); r.Decision.Decision != warden.Allow {
		t.Fatalf("a token without expiry: %+v", r)
	}
}

// TestParseExpiry: a duration from now or an RFC 3339 time, in the future.
func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"30d":                  now.Add(30 * 24 * time.Hour),
		"12h":                  now.Add(12 * time.Hour),
		"2027-01-01T00:00:00Z": time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := serve.ParseExpiry(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "-1h", "0s", "2025-01-01T00:00:00Z"} {
		if _, err := serve.ParseExpiry(in, now); err == nil {
			t.Errorf("ParseExpiry(%q) took it", in)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestSessionRaceHasOneOwner: two tokens that open one session at once:
// one owns it, every call of the other in it is refused, none of the
// owner's is.
func TestSessionRaceHasOneOwner(t *testing.T) { onBothStores(t, testSessionRaceHasOneOwner) }

func testSessionRaceHasOneOwner(t *testing.T, set func(*serve.Config)) {
	v := startTenants(t, set)
	const each = 8
	type answer struct {
		agent string
		r     serve.DecideResponse
	}
	answers := make(chan answer, 2*each)
	var wg sync.WaitGroup
	for i := range 2 * each {
		tok, name := v.a, "agent-a"
		if i%2 == 1 {
			tok, name = v.b, "agent-b"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			call := `{"call":{"tool":"Bash","args":{"command":"git status"},"session":"race"}}`
			code, data := v.do("POST", "/v1/decide", tok, call)
			var r serve.DecideResponse
			if code != 200 || json.Unmarshal(data, &r) != nil {
				t.Errorf("decide: %d %s", code, data)
			}
			answers <- answer{name, r}
		}()
	}
	wg.Wait()
	close(answers)
	sess, err := v.s.Store().Session(context.Background(), "race")
	if err != nil || (sess.Agent != "agent-a" && sess.Agent != "agent-b") || sess.Calls != each {
		t.Fatalf("session race: %+v %v", sess, err)
	}
	for a := range answers {
		allowed := a.r.Decision.Decision == warden.Allow
		if allowed != (a.agent == sess.Agent) || (!allowed && a.r.Decision.Code != warden.CodeRefused) {
			t.Errorf("%s (owner %s): %+v", a.agent, sess.Agent, a.r.Decision)
		}
	}
}
