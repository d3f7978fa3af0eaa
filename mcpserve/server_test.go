package mcpserve_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/mcpserve"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
)

const testPolicy = `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
intents: {file: intents.yaml, require: [write], out_of_scope: deny}
rules:
  - id: docs-writes
    effect: allow
    tool: write
    path: "docs/**"
  - id: no-secrets
    effect: deny
    tool: write
    path: "src/secret/**"
    message: Secrets are written by the release process only.
    suggestion: Leave src/secret alone.
  - id: anchors-from-agents
    effect: allow
    tool: mcp__warden__add_anchor
`

const testIntents = `active_intents:
  - id: INT-1
    name: Docs and code
    status: IN_PROGRESS
    owned_scope: ["docs/**", "src/**"]
    constraints: [Keep the public API stable]
    acceptance_criteria: [go test ./... passes]
  - id: INT-2
    name: Nothing yet
`

type fixture struct {
	dir   string
	store *sqlite.Store
	gate  *mcpproxy.SessionGate
	cs    *mcp.ClientSession
}

var ctx = context.Background()

func setup(t *testing.T, policyText string) *fixture {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for name, text := range map[string]string{"warden.yaml": policyText, "intents.yaml": testIntents} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pol := &mcpproxy.Policy{File: filepath.Join(dir, "warden.yaml")}
	eng, err := pol.Compiled()
	if err != nil {
		t.Fatal(err)
	}
	gate := &mcpproxy.SessionGate{Tracker: session.New(eng, store), Engine: pol.Engine, Session: "mcp-warden-test", Cwd: dir}
	srv := (&mcpserve.Server{Gate: gate, Version: "test"}).New()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &fixture{dir: dir, store: store, gate: gate, cs: cs}
}

// call calls a tool and returns its text and whether it is an error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func write(path string) map[string]any {
	return map[string]any{"tool": "Write", "args": map[string]any{"file_path": path, "content": "x"}}
}

// audited returns the tools of the session's audit records, oldest first,
// with their decisions.
func (f *fixture) audited(t *testing.T, sess string) []string {
	t.Helper()
	recs, err := f.store.Audit(ctx, warden.AuditFilter{Session: sess})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.Tool+" "+string(r.Decision))
	}
	slices.Sort(out)
	return out
}

// TestSelectActiveIntent: the handshake of seed 002 through the server.
// Without an id the intents are listed; an unknown id is refused with the
// ids to select; a known one becomes the session's intent (the checks that
// follow are decided with it) and its context comes back.
func TestSelectActiveIntent(t *testing.T) {
	f := setup(t, testPolicy)
	tools, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"add_anchor", "check_call", "list_anchors", "request_approval", "select_active_intent"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	text, isErr := call(t, f.cs, "select_active_intent", nil)
	if isErr || !strings.Contains(text, "- INT-1: Docs and code [IN_PROGRESS]\n  owned scope: docs/**, src/**") ||
		!strings.Contains(text, "- INT-2: Nothing yet\n  owned scope: none") {
		t.Fatalf("listing (error %v):\n%s", isErr, text)
	}
	text, _ = call(t, f.cs, "check_call", write("docs/a.md"))
	if !strings.Contains(text, "code: MISSING_INTENT") || !strings.Contains(text, "INT-1 (Docs and code), INT-2 (Nothing yet)") {
		t.Fatalf("check before the handshake:\n%s", text)
	}

	text, isErr = call(t, f.cs, "select_active_intent", map[string]any{"intent_id": "INT-9"})
	if !isErr || !strings.Contains(text, "INTENT_NOT_FOUND") || !strings.Contains(text, "INT-1 (Docs and code), INT-2 (Nothing yet)") {
		t.Fatalf("unknown intent (error %v):\n%s", isErr, text)
	}

	text, isErr = call(t, f.cs, "select_active_intent", map[string]any{"intent_id": "INT-1"})
	for _, want := range []string{"Intent INT-1 is now the active intent", "name: Docs and code", "owned scope: docs/**, src/**",
		"constraints:\n- Keep the public API stable", "acceptance criteria:\n- go test ./... passes"} {
		if isErr || !strings.Contains(text, want) {
			t.Fatalf("select INT-1 (error %v): no %q in\n%s", isErr, want, text)
		}
	}
	s, err := f.store.Session(ctx, f.gate.Session)
	if err != nil || s.IntentID != "INT-1" {
		t.Fatalf("session after the handshake: %+v, %v", s, err)
	}
	for path, want := range map[string]string{
		"docs/a.md":         "decision: allow\ncode: ALLOWED\n",
		"README.md":         "decision: deny\ncode: SCOPE_VIOLATION\n",
		"src/secret/key.go": "decision: deny\ncode: RULE_DENY\n",
		"src/main.go":       "decision: ask\n",
	} {
		if text, isErr := call(t, f.cs, "check_call", write(path)); isErr || !strings.HasPrefix(text, want) || !strings.Contains(text, "nothing ran") {
			t.Errorf("check %s (error %v):\n%s\nwant prefix %q", path, isErr, text, want)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, "docs/a.md")); err == nil {
		t.Error("check_call wrote the file")
	}
	// Every call of the server's tools was decided and audited; the
	// checked calls were not.
	got := f.audited(t, f.gate.Session)
	want := []string{"mcp__warden__check_call allow", "mcp__warden__check_call allow", "mcp__warden__check_call allow",
		"mcp__warden__check_call allow", "mcp__warden__check_call allow", "mcp__warden__list_tools allow",
		"mcp__warden__select_active_intent allow", "mcp__warden__select_active_intent allow", "mcp__warden__select_active_intent deny"}
	want = slices.DeleteFunc(want, func(s string) bool { return strings.Contains(s, "list_tools") })
	if !slices.Equal(got, want) {
		t.Errorf("audit:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// An intent without owned_scope owns nothing.
	call(t, f.cs, "select_active_intent", map[string]any{"intent_id": "INT-2"})
	if text, _ := call(t, f.cs, "check_call", write("docs/a.md")); !strings.HasPrefix(text, "decision: deny\ncode: SCOPE_VIOLATION\n") || !strings.Contains(text, "owns nothing") {
		t.Errorf("INT-2 writes docs/a.md:\n%s", text)
	}
}

var approvalID = regexp.MustCompile(`approval: (\S+)\n`)

// TestRequestApproval: an approval requested ahead of a call is queued for
// a human and grants nothing by itself; once a person approves it, the
// call goes through once. A denied call cannot be approved this way, an
// allowed one needs nothing, and a check spends no grant.
func TestRequestApproval(t *testing.T) {
	f := setup(t, testPolicy)
	call(t, f.cs, "select_active_intent", map[string]any{"intent_id": "INT-1"})
	target := warden.ToolCall{Tool: "Write", Session: f.gate.Session, Cwd: f.dir, Host: mcpproxy.Host,
		Args: map[string]any{"file_path": "src/main.go", "content": "x"}}

	text, isErr := call(t, f.cs, "request_approval", write("src/main.go"))
	m := approvalID.FindStringSubmatch(text)
	if isErr || m == nil || !strings.Contains(text, "warden approvals approve "+m[1]+" --once") {
		t.Fatalf("request (error %v):\n%s", isErr, text)
	}
	id := m[1]
	if again, _ := call(t, f.cs, "request_approval", write("src/main.go")); !strings.Contains(again, "approval: "+id+"\n") {
		t.Fatalf("a second request queued another approval:\n%s", again)
	}
	aps, err := f.store.Approvals(ctx, warden.ApprovalFilter{})
	if err != nil || len(aps) != 1 || aps[0].Status != warden.ApprovalPending {
		t.Fatalf("approvals: %+v, %v", aps, err)
	}
	// Requesting granted nothing: the call is still an ask.
	res, err := f.gate.Tracker.Decide(ctx, target, session.Options{})
	if err != nil || res.Decision.Decision != warden.Ask {
		t.Fatalf("the call before a human answered: %+v, %v", res.Decision, err)
	}
	if _, err := session.Approve(ctx, f.store, id, session.Answer{Scope: warden.ScopeOnce, By: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	// A check after the answer neither spends it nor changes the session.
	if text, _ := call(t, f.cs, "check_call", write("src/main.go")); !strings.HasPrefix(text, "decision: ask") {
		t.Errorf("check after approval:\n%s", text)
	}
	res, err = f.gate.Tracker.Decide(ctx, target, session.Options{})
	if err != nil || res.Decision.Decision != warden.Allow {
		t.Fatalf("the approved call: %+v, %v", res.Decision, err)
	}
	if res, _ := f.gate.Tracker.Decide(ctx, target, session.Options{}); res.Decision.Decision != warden.Ask {
		t.Errorf("an approval once let a second call through: %+v", res.Decision)
	}

	text, isErr = call(t, f.cs, "request_approval", write("src/secret/key.go"))
	if !isErr || !strings.Contains(text, "No approval was queued") || !strings.Contains(text, "RULE_DENY") {
		t.Errorf("request for a denied call (error %v):\n%s", isErr, text)
	}
	if text, isErr := call(t, f.cs, "request_approval", write("docs/a.md")); isErr || !strings.Contains(text, "No approval is needed") {
		t.Errorf("request for an allowed call (error %v):\n%s", isErr, text)
	}
	if aps, _ := f.store.Approvals(ctx, warden.ApprovalFilter{}); len(aps) != 2 {
		t.Errorf("approvals after the deny and the allow: %d, want 2 (one answered, one pending)", len(aps))
	}
}

// TestAnchorsAndOwnCallsDecided: the anchor tools work, and every call of
// the server's tools is decided by the policy first: a policy that denies
// one of them refuses it with warden's reason.
func TestAnchorsAndOwnCallsDecided(t *testing.T) {
	f := setup(t, testPolicy+`  - id: no-checks
    effect: deny
    tool: mcp__warden__check_call
    message: Checks are switched off here.
    suggestion: Make the call and read warden's answer.
`)
	if text, isErr := call(t, f.cs, "list_anchors", nil); isErr || text != "There are no anchors." {
		t.Fatalf("empty list (error %v): %q", isErr, text)
	}
	// add_anchor changes state (kind other), so under a policy that
	// requires an intent for writes it needs one, as any tool warden does
	// not know does.
	if text, isErr := call(t, f.cs, "add_anchor", map[string]any{"text": "early"}); !isErr || !strings.Contains(text, "MISSING_INTENT") {
		t.Fatalf("add_anchor without an intent (error %v): %s", isErr, text)
	}
	if text, isErr := call(t, f.cs, "select_active_intent", map[string]any{"intent_id": "INT-1"}); isErr {
		t.Fatalf("select INT-1: %s", text)
	}
	text, isErr := call(t, f.cs, "add_anchor", map[string]any{"text": "The API is frozen until 2.0", "priority": "high"})
	if isErr || !strings.Contains(text, "[HIGH] The API is frozen until 2.0") {
		t.Fatalf("add (error %v): %s", isErr, text)
	}
	if text, _ := call(t, f.cs, "list_anchors", nil); !strings.Contains(text, "[HIGH] The API is frozen until 2.0") {
		t.Errorf("list: %s", text)
	}
	if text, isErr := call(t, f.cs, "add_anchor", map[string]any{"text": "x", "priority": "urgent"}); !isErr || !strings.Contains(text, "priority") {
		t.Errorf("bad priority (error %v): %s", isErr, text)
	}
	text, isErr = call(t, f.cs, "check_call", write("docs/a.md"))
	if !isErr || !strings.Contains(text, "BLOCKED: RULE_DENY") || !strings.Contains(text, "Checks are switched off here.") {
		t.Errorf("denied check_call (error %v):\n%s", isErr, text)
	}

	// Without the rule that allows it, add_anchor is destructive: asked.
	g := setup(t, testPolicy)
	os.WriteFile(filepath.Join(g.dir, "warden.yaml"), []byte(strings.Replace(testPolicy, "mcp__warden__add_anchor", "mcp__warden__nothing", 1)), 0o644)
	if text, isErr := call(t, g.cs, "select_active_intent", map[string]any{"intent_id": "INT-1"}); isErr {
		t.Fatalf("select INT-1: %s", text)
	}
	text, isErr = call(t, g.cs, "add_anchor", map[string]any{"text": "remember me"})
	if !isErr || !strings.Contains(text, "APPROVAL REQUIRED") {
		t.Errorf("add_anchor under the default (error %v):\n%s", isErr, text)
	}
	if st, _ := g.store.State(ctx); len(st.Anchors) != 0 {
		t.Errorf("an asked add_anchor stored %v", st.Anchors)
	}
}

// TestHTTPClientsHaveOwnSessions: over streamable HTTP each MCP session
// is a warden session of its own, so one client's intent is not another's.
func TestHTTPClientsHaveOwnSessions(t *testing.T) {
	f := setup(t, testPolicy)
	srv := (&mcpserve.Server{Gate: f.gate, PerClient: true, Version: "test"}).New()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close) // after the clients closed (cleanups run last first)
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect(), connect()
	call(t, a, "select_active_intent", map[string]any{"intent_id": "INT-1"})
	if text, _ := call(t, a, "check_call", write("docs/a.md")); !strings.HasPrefix(text, "decision: allow") {
		t.Errorf("client a, with INT-1:\n%s", text)
	}
	if text, _ := call(t, b, "check_call", write("docs/a.md")); !strings.Contains(text, "code: MISSING_INTENT") {
		t.Errorf("client b, without an intent:\n%s", text)
	}
	s, err := f.store.Session(ctx, f.gate.Session+"-"+a.ID())
	if err != nil || s.IntentID != "INT-1" {
		t.Errorf("client a's session %s: %+v, %v", f.gate.Session+"-"+a.ID(), s, err)
	}
}
