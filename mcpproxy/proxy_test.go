package mcpproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

const testPolicy = `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
rules:
  - id: no-secret-writes
    effect: deny
    tool: mcp__files__write_file
    path: "secret/**"
    message: Files in secret/ are written by the release process only.
    suggestion: Write the file under docs/ instead, or ask the user.
  - id: docs-writes
    effect: allow
    tool: mcp__files__write_file
    path: "docs/**"
  - id: warn-listing
    effect: warn
    tool: mcp__files__list_directory
    message: Listings are logged; read the files you need by name.
roles:
  reader:
    tools: [read, list]
  builder:
    tools: [read, list, write, edit]
`

// upstream is an in-process MCP server with tools named as the reference
// filesystem server names them; it records the calls that reach it.
type upstream struct {
	mu    sync.Mutex
	calls []string
	// cancelled, when set, is closed when slow_read sees its call cancelled.
	cancelled chan struct{}
	// versions, when set, are the protocol versions the server speaks.
	versions []string
}

func (u *upstream) record(name string) {
	u.mu.Lock()
	u.calls = append(u.calls, name)
	u.mu.Unlock()
}

func (u *upstream) got() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.calls)
}

func (u *upstream) server() *mcp.Server {
	var opts *mcp.ServerOptions
	if u.versions != nil {
		opts = &mcp.ServerOptions{SupportedProtocolVersions: u.versions}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, opts)
	type pathArgs struct {
		Path    string `json:"path"`
		Content string `json:"content,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read_text_file"}, func(ctx context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
		u.record("read_text_file " + in.Path)
		if strings.Contains(in.Path, "missing") {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file: " + in.Path}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "contents of " + in.Path}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "write_file"}, func(ctx context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
		u.record("write_file " + in.Path)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote " + in.Path}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "list_directory"}, func(ctx context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
		u.record("list_directory " + in.Path)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[FILE] a.txt"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow_read"}, func(ctx context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
		u.record("slow_read")
		select {
		case <-ctx.Done():
			if u.cancelled != nil {
				close(u.cancelled)
			}
			return nil, nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
		}
	})
	s.AddResource(&mcp.Resource{URI: "file:///docs/a.txt", Name: "a.txt", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "resource text"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "review"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "review this"}}}}, nil
	})
	return s
}

// fixture is a client session through the proxy to an upstream, with the
// policy and the SQLite store the gate uses.
type fixture struct {
	up     *upstream
	client *mcp.ClientSession
	store  *sqlite.Store
	dir    string
	upConn mcp.Connection
}

type options struct {
	role    string
	session string
	// cancelled is closed when slow_read sees its call cancelled.
	cancelled chan struct{}
	// closeStore closes the gate's store once the client is connected.
	closeStore bool
	// engine, when set, is the gate's Engine.
	engine func() (session.Engine, error)
	// versions, when set, are the protocol versions the upstream speaks.
	versions []string
	// http serves the upstream over streamable HTTP.
	http bool
	// clientOpts tune the client.
	clientOpts *mcp.ClientOptions
	// rules are added to testPolicy's.
	rules string
}

func newFixture(t *testing.T, o options) *fixture {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	for _, d := range []string{"docs", "secret"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, eng := writePolicy(t, dir, strings.Replace(testPolicy, "rules:\n", "rules:\n"+o.rules, 1)+"tools:\n  mcp__files__slow_read: read\n")
	st, err := sqlite.Open(ctx, filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	up := &upstream{cancelled: o.cancelled, versions: o.versions}
	var upClientT mcp.Transport
	if o.http {
		srv := up.server()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The server wants its token, as remote MCP servers do.
			if r.Header.Get("Authorization") != "Bearer t0ken" {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(hs.Close)
		upClientT = mcpproxy.HTTPUpstream(hs.URL, http.Header{"Authorization": {"Bearer t0ken"}})
	} else {
		upServerT, memT := mcp.NewInMemoryTransports()
		if _, err := up.server().Connect(ctx, upServerT, nil); err != nil {
			t.Fatal(err)
		}
		upClientT = memT
	}
	upConn, err := upClientT.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proxyServerT, clientT := mcp.NewInMemoryTransports()
	clientConn, err := proxyServerT.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sid := o.session
	if sid == "" {
		sid = "s-" + strings.ReplaceAll(t.Name(), "/", "-")
	}
	gate := &mcpproxy.SessionGate{Tracker: session.New(eng, st), Session: sid, Role: o.role, Cwd: dir, Engine: o.engine}
	p := &mcpproxy.Proxy{Name: "files", Gate: gate, Log: testWriter{t}}
	ran := make(chan struct{})
	go func() { p.Run(ctx, clientConn, upConn); close(ran) }()
	// The proxy logs to t: it must be done before the test is (a Log
	// after that panics). This cleanup runs after the client's below.
	t.Cleanup(func() {
		clientConn.Close()
		upConn.Close()
		select {
		case <-ran:
		case <-time.After(10 * time.Second): // a hang, not a measure
			t.Error("the proxy did not stop after its connections closed")
		}
	})

	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, o.clientOpts)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if o.closeStore {
		st.Close()
	}
	return &fixture{up: up, client: cs, store: st, dir: dir, upConn: upConn}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (f *fixture) call(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := f.client.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestListHidesToolsTheRoleMayNotUse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role string
		want []string
	}{
		{"reader", []string{"list_directory", "read_text_file", "slow_read"}},
		{"builder", []string{"list_directory", "read_text_file", "slow_read", "write_file"}},
		{"", []string{"list_directory", "read_text_file", "slow_read", "write_file"}},
		// A role the policy does not define gets no tools.
		{"raeder", nil},
	} {
		t.Run("role="+tc.role, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, options{role: tc.role})
			if got := toolNames(t, f.client); !slices.Equal(got, tc.want) {
				t.Errorf("tools/list for role %q = %v, want %v", tc.role, got, tc.want)
			}
		})
	}
}

func TestDenyReturnsReasonAndNeverReachesUpstream(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	res := f.call(t, "write_file", map[string]any{"path": filepath.Join(f.dir, "secret", "k.txt"), "content": "x"})
	if !res.IsError {
		t.Fatalf("denied write_file: IsError = false, result %q", text(res))
	}
	got := text(res)
	for _, want := range []string{"warden BLOCKED: RULE_DENY", "Files in secret/ are written by the release process only.",
		"Suggestion: Write the file under docs/ instead"} {
		if !strings.Contains(got, want) {
			t.Errorf("tool error %q lacks %q", got, want)
		}
	}
	if calls := f.up.got(); len(calls) != 0 {
		t.Errorf("upstream got %v for a denied call", calls)
	}
	recs, err := f.store.Audit(t.Context(), warden.AuditFilter{Tool: "mcp__files__write_file"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Decision != warden.Deny || recs[0].Rule != "no-secret-writes" || recs[0].Host != mcpproxy.Host {
		t.Errorf("audit = %+v, want one deny by no-secret-writes from host mcp", recs)
	}
}

func TestRoleDeniedToolIsRefusedEvenIfCalledByName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "reader"})
	res := f.call(t, "write_file", map[string]any{"path": filepath.Join(f.dir, "docs", "a.txt"), "content": "x"})
	if !res.IsError || !strings.Contains(text(res), string(warden.CodeRoleToolDenied)) {
		t.Errorf("reader's write_file = %v %q, want a ROLE_TOOL_DENIED tool error", res.IsError, text(res))
	}
	if calls := f.up.got(); len(calls) != 0 {
		t.Errorf("upstream got %v", calls)
	}
}

func TestAllowedCallsGoThrough(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	read := filepath.Join(f.dir, "docs", "a.txt")
	if res := f.call(t, "read_text_file", map[string]any{"path": read}); res.IsError || text(res) != "contents of "+read {
		t.Errorf("read_text_file = %v %q", res.IsError, text(res))
	}
	if res := f.call(t, "write_file", map[string]any{"path": read, "content": "x"}); res.IsError || text(res) != "wrote "+read {
		t.Errorf("write_file in docs/ = %v %q", res.IsError, text(res))
	}
	if want := []string{"read_text_file " + read, "write_file " + read}; !slices.Equal(f.up.got(), want) {
		t.Errorf("upstream got %v, want %v", f.up.got(), want)
	}
}

func TestAskQueuesApprovalAndApprovedCallGoesThrough(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	args := map[string]any{"path": filepath.Join(f.dir, "notes.txt"), "content": "x"}
	res := f.call(t, "write_file", args)
	if !res.IsError || !strings.Contains(text(res), "APPROVAL REQUIRED") {
		t.Fatalf("write_file without a rule = %v %q, want an approval tool error", res.IsError, text(res))
	}
	aps, err := f.store.Approvals(t.Context(), warden.ApprovalFilter{Status: warden.ApprovalPending})
	if err != nil {
		t.Fatal(err)
	}
	if len(aps) != 1 {
		t.Fatalf("pending approvals = %+v, want 1", aps)
	}
	if want := "warden approvals approve " + aps[0].ID + " --once"; !strings.Contains(text(res), want) {
		t.Errorf("tool error %q does not say %q", text(res), want)
	}
	if calls := f.up.got(); len(calls) != 0 {
		t.Fatalf("upstream got %v before the approval", calls)
	}
	if _, err := session.Approve(t.Context(), f.store, aps[0].ID, session.Answer{Scope: warden.ScopeOnce, By: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if res := f.call(t, "write_file", args); res.IsError {
		t.Fatalf("approved write_file = tool error %q", text(res))
	}
	if res := f.call(t, "write_file", args); !res.IsError {
		t.Errorf("a second identical call after a once approval went through")
	}
	if calls := f.up.got(); len(calls) != 1 {
		t.Errorf("upstream got %v, want the one approved call", calls)
	}
}

func TestStreamableHTTPUpstream(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder", http: true})
	if got, want := toolNames(t, f.client), []string{"list_directory", "read_text_file", "slow_read", "write_file"}; !slices.Equal(got, want) {
		t.Errorf("tools/list over HTTP = %v, want %v", got, want)
	}
	read := filepath.Join(f.dir, "docs", "a.txt")
	if res := f.call(t, "read_text_file", map[string]any{"path": read}); res.IsError || text(res) != "contents of "+read {
		t.Errorf("read_text_file over HTTP = %v %q", res.IsError, text(res))
	}
	res := f.call(t, "write_file", map[string]any{"path": filepath.Join(f.dir, "secret", "k"), "content": "x"})
	if !res.IsError || !strings.Contains(text(res), "no-secret-writes") {
		t.Errorf("denied write_file over HTTP = %v %q", res.IsError, text(res))
	}
	if want := []string{"read_text_file " + read}; !slices.Equal(f.up.got(), want) {
		t.Errorf("upstream got %v, want %v", f.up.got(), want)
	}
}

func TestPolicyReloadAndBrokenPolicy(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var current session.Engine
	var loadErr error
	f := newFixture(t, options{role: "reader", engine: func() (session.Engine, error) {
		mu.Lock()
		defer mu.Unlock()
		return current, loadErr
	}})
	set := func(yaml string, err error) {
		mu.Lock()
		defer mu.Unlock()
		current, loadErr = nil, err
		if yaml == "" {
			return
		}
		file := filepath.Join(f.dir, "warden.yaml")
		pol, perr := policy.LoadBytes(file, []byte(yaml))
		if perr != nil {
			t.Fatal(perr)
		}
		if current, perr = engine.Compile(pol, workspace.Live()); perr != nil {
			t.Fatal(perr)
		}
	}
	set(testPolicy, nil)
	if got := toolNames(t, f.client); slices.Contains(got, "write_file") {
		t.Errorf("reader sees write_file: %v", got)
	}
	// The policy now lets readers write: the next tools/list shows it.
	set(strings.Replace(testPolicy, "tools: [read, list]\n", "tools: [read, list, write]\n", 1), nil)
	if got := toolNames(t, f.client); !slices.Contains(got, "write_file") {
		t.Errorf("after the policy change, reader's tools = %v, want write_file among them", got)
	}
	// A policy that no longer loads denies, and shows no tools.
	set("", errors.New("policy warden.yaml:3:1: bad indentation"))
	res := f.call(t, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "docs", "a.txt")})
	if !res.IsError || !strings.Contains(text(res), "bad indentation") {
		t.Errorf("call under a broken policy = %v %q, want a deny naming the error", res.IsError, text(res))
	}
	if got := toolNames(t, f.client); len(got) != 0 {
		t.Errorf("tools/list under a broken policy = %v, want none", got)
	}
	if calls := f.up.got(); len(calls) != 0 {
		t.Errorf("upstream got %v", calls)
	}
}

func TestAskGoesToTheUserThroughElicitation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer *mcp.ElicitResult
		// ran: the call reached the server; code: the tool error's code.
		ran    bool
		code   warden.Code
		status string
	}{
		{"approve", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, true, "", warden.ApprovalApproved},
		{"accept-without-approve", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false, "note": "not there"}}, false, warden.CodeApprovalRejected, warden.ApprovalRejected},
		{"decline", &mcp.ElicitResult{Action: "decline"}, false, warden.CodeApprovalRejected, warden.ApprovalRejected},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, false, warden.CodeDefault, warden.ApprovalPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			var mu sync.Mutex
			f := newFixture(t, options{role: "builder", versions: []string{"2025-11-25"}, clientOpts: &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					return tc.answer, nil
				}}})
			if v := f.client.InitializeResult().ProtocolVersion; v != "2025-11-25" {
				t.Fatalf("negotiated protocol %s, want 2025-11-25", v)
			}
			notes := filepath.Join(f.dir, "notes.txt")
			res := f.call(t, "write_file", map[string]any{"path": notes, "content": "x"})
			mu.Lock()
			if len(asked) != 1 || !strings.Contains(asked[0], "mcp__files__write_file") || !strings.Contains(asked[0], "notes.txt") {
				t.Errorf("elicitations = %q, want one naming the tool and the file", asked)
			}
			mu.Unlock()
			ran := len(f.up.got()) == 1
			if ran != tc.ran || res.IsError == tc.ran {
				t.Errorf("call ran = %v (upstream %v), IsError = %v %q; want ran = %v", ran, f.up.got(), res.IsError, text(res), tc.ran)
			}
			if tc.code != "" && !strings.Contains(text(res), string(tc.code)) {
				t.Errorf("tool error %q lacks %s", text(res), tc.code)
			}
			aps, err := f.store.Approvals(t.Context(), warden.ApprovalFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(aps) != 1 || aps[0].Status != tc.status {
				t.Errorf("approvals = %+v, want one %s", aps, tc.status)
			} else if tc.status != warden.ApprovalPending && aps[0].DecidedBy != mcpproxy.ElicitedBy {
				t.Errorf("approval decided by %q, want %q", aps[0].DecidedBy, mcpproxy.ElicitedBy)
			}
		})
	}
}

func TestNoElicitationOnTheNewProtocol(t *testing.T) {
	t.Parallel()
	// On 2026-07-28 a server may not send elicitation/create: the ask is
	// queued and answered as a tool error, even for a client that elicits.
	var elicited atomic.Bool
	f := newFixture(t, options{role: "builder", clientOpts: &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited.Store(true)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}}})
	res := f.call(t, "write_file", map[string]any{"path": filepath.Join(f.dir, "notes.txt"), "content": "x"})
	if !res.IsError || !strings.Contains(text(res), "APPROVAL REQUIRED") || elicited.Load() {
		t.Errorf("ask on the new protocol: IsError %v, elicited %v, %q", res.IsError, elicited.Load(), text(res))
	}
}

func TestProjectHaltStopsProxiedCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	if _, err := f.store.SetHalt(t.Context(), warden.Halt{Message: "incident 42", By: "test", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	res := f.call(t, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "docs", "a.txt")})
	if !res.IsError || !strings.Contains(text(res), string(warden.CodeHalted)) || !strings.Contains(text(res), "incident 42") {
		t.Errorf("call under a project halt = %v %q, want a HALTED deny with the message", res.IsError, text(res))
	}
	if calls := f.up.got(); len(calls) != 0 {
		t.Errorf("upstream got %v under a halt", calls)
	}
}

// TestOutcomesAreRecorded: the upstream's answer to an allowed call is its
// outcome in the call's audit record: a tool error (isError) a failure.
func TestOutcomesAreRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder", rules: `
  - id: stop-failing-reads
    effect: deny
    tool: mcp__files__read_text_file
    repeat: {failures: 1}
    message: This read failed just before; it would fail the same way.
    suggestion: Read the error and check the path.
`})
	f.call(t, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "docs", "a.txt")})
	if res := f.call(t, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "docs", "missing.txt")}); !res.IsError {
		t.Fatalf("the missing file's read = %q, want the upstream's tool error", text(res))
	}
	// The outcome is recorded after the answer goes to the client, and the
	// next call is decided once it is in: the same read, sent at once, is
	// denied by the rule on failed reads.
	if res := f.call(t, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "docs", "missing.txt")}); !strings.Contains(text(res), "stop-failing-reads") {
		t.Fatalf("the failed read again = %q, want the deny of stop-failing-reads", text(res))
	}
	recs, err := f.store.Audit(t.Context(), warden.AuditFilter{Tool: "mcp__files__read_text_file"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Outcome != warden.OutcomeOK || recs[1].Outcome != warden.OutcomeFail || recs[2].Decision != warden.Deny {
		var got []string
		for _, r := range recs {
			got = append(got, string(r.Decision)+" "+r.Outcome)
		}
		t.Errorf("records: %q, want an allow that succeeded, one that failed, and a deny", got)
	}
}

func TestArgumentsThatAreNotAnObjectAreDenied(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	res, err := f.client.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_text_file", Arguments: []any{"docs/a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "not a JSON object") {
		t.Errorf("array arguments = %v %q, want a deny saying they are not an object", res.IsError, text(res))
	}
	if calls := f.up.got(); len(calls) != 0 {
		t.Errorf("upstream got %v", calls)
	}
}

func TestWarningsReachTheModelAfterTheCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	res := f.call(t, "list_directory", map[string]any{"path": filepath.Join(f.dir, "docs")})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("list_directory under a warn rule = %v, %d content items (%q), want the result and warden's guidance", res.IsError, len(res.Content), text(res))
	}
	if got := text(res); !strings.HasPrefix(got, "[FILE] a.txt") || !strings.Contains(got, "Listings are logged; read the files you need by name.") {
		t.Errorf("result = %q, want the server's text, then the warning", got)
	}
	if calls := f.up.got(); len(calls) != 1 {
		t.Errorf("upstream got %v, want the one call", calls)
	}
}

func TestStoreFailureDenies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder", closeStore: true})
	res := f.call(t, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "docs", "a.txt")})
	if !res.IsError || !strings.Contains(text(res), "warden could not decide this call") {
		t.Errorf("call with a closed store = %v %q, want a deny that says warden could not decide", res.IsError, text(res))
	}
	if calls := f.up.got(); len(calls) != 0 {
		t.Errorf("upstream got %v with the store down", calls)
	}
	// tools/list fails closed too: no tools.
	if got := toolNames(t, f.client); len(got) != 0 {
		t.Errorf("tools/list with the store down = %v, want none", got)
	}
}

func TestUpstreamGoneDenies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	f.upConn.Close()
	time.Sleep(50 * time.Millisecond)
	res := f.call(t, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "docs", "a.txt")})
	if !res.IsError || !strings.Contains(text(res), "the MCP server files behind warden's proxy is gone") {
		t.Errorf("call after the upstream went away = %v %q", res.IsError, text(res))
	}
	if _, err := f.client.ListTools(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("tools/list after the upstream went away: err = %v, want one saying it is gone", err)
	}
}

func TestUpstreamGoneMidCallAnswersTheCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{role: "builder"})
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := f.client.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow_read", Arguments: map[string]any{"path": "docs/a.txt"}})
		if err != nil {
			t.Errorf("slow_read: %v", err)
		}
		done <- res
	}()
	for start := time.Now(); len(f.up.got()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("slow_read never reached the upstream")
		}
	}
	f.upConn.Close()
	select {
	case res := <-done:
		if res == nil || !res.IsError || !strings.Contains(text(res), "may or may not have run") {
			t.Errorf("the call under way when the upstream went away = %+v, want a tool error saying it may have run", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call under way was never answered")
	}
}

func TestResourcesPromptsAndCancellationPassThrough(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{})
	f := newFixture(t, options{role: "reader", cancelled: cancelled})
	ctx := t.Context()
	rr, err := f.client.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///docs/a.txt"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "resource text" {
		t.Errorf("resources/read = %+v, %v", rr, err)
	}
	pr, err := f.client.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review"})
	if err != nil || len(pr.Messages) != 1 {
		t.Errorf("prompts/get = %+v, %v", pr, err)
	}
	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := f.client.CallTool(callCtx, &mcp.CallToolParams{Name: "slow_read", Arguments: map[string]any{"path": "docs/a.txt"}})
		done <- err
	}()
	for start := time.Now(); len(f.up.got()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("slow_read never reached the upstream")
		}
	}
	cancel()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream tool never saw the client's cancellation")
	}
	if err := <-done; err == nil {
		t.Error("a cancelled call returned no error")
	}
}

func TestServerName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, "filesystem"},
		{[]string{"node", "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/tmp"}, "filesystem"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-github@2025.4.8"}, "github"},
		{[]string{"uvx", "mcp-server-fetch"}, "fetch"},
		{[]string{"python", "-m", "mcp_server_time"}, "mcp_server_time"},
		{[]string{"/usr/local/bin/github-mcp-server", "stdio"}, "github"},
		{[]string{"docker", "run", "-i", "--rm", "ghcr.io/org/slack-mcp"}, "slack"},
		{[]string{"./my.server"}, "my"},
		{nil, ""},
	} {
		if got := mcpproxy.ServerName(tc.argv); got != tc.want {
			t.Errorf("ServerName(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
	if got := mcpproxy.ServerNameURL("https://mcp.linear.app/mcp"); got != "linear" {
		t.Errorf("ServerNameURL = %q, want linear", got)
	}
}

// TestCallAsNotificationIsNotForwarded: a tools/call without an id (a
// notification) has no answer to carry warden's decision; a server that
// ran it anyway would run it ungoverned, so the proxy drops it. The raw
// upstream connection sees the next request, not the call.
func TestCallAsNotificationIsNotForwarded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	_, eng := writePolicy(t, dir, testPolicy)
	clientEnd, proxyClientT := mcp.NewInMemoryTransports()
	proxyUpT, serverEnd := mcp.NewInMemoryTransports()
	cc, err := proxyClientT.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := proxyUpT.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go (&mcpproxy.Proxy{Name: "files", Gate: engineGate{eng: eng, role: "builder", cwd: dir}}).Run(ctx, cc, uc)
	client, err := clientEnd.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	server, err := serverEnd.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call := &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"write_file","arguments":{"path":"docs/a.txt","content":"x"}}`)}
	ping, _ := jsonrpc.MakeID(float64(7))
	for _, m := range []jsonrpc.Message{call, &jsonrpc.Request{ID: ping, Method: "ping"}} {
		if err := client.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := server.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if req, ok := got.(*jsonrpc.Request); !ok || req.Method != "ping" {
		t.Fatalf("the upstream got %#v first, want the ping (the call without an id dropped)", got)
	}
}

// writePolicy writes the policy text to dir/warden.yaml, its modification
// time an hour ago (a file a proxy meets: not one written in the last
// moments, which Policy reads again on every call until its stamp can be
// trusted), and returns the file and the compiled policy.
func writePolicy(tb testing.TB, dir, text string) (string, *engine.Engine) {
	tb.Helper()
	f := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f, old, old); err != nil {
		tb.Fatal(err)
	}
	pol, err := policy.Load(f)
	if err != nil {
		tb.Fatal(err)
	}
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		tb.Fatal(err)
	}
	return f, eng
}
