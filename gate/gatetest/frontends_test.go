package gatetest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/gate/gatetest"
	"github.com/warden-run/warden/internal/cli"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/remote"
	"github.com/warden-run/warden/serve"
	"github.com/warden-run/warden/wire"
)

// upstreamArg makes the test binary the MCP server the proxy starts.
const upstreamArg = "gatetest-mcp-upstream"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == upstreamArg {
		fakeServer()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServer is an MCP server over stdio with one tool, echo.
func fakeServer() {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			fmt.Println(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
		case "tools/list":
			fmt.Println(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`)
		case "tools/call":
			fmt.Println(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"echoed"}]}}`)
		default:
			fmt.Println(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
		}
	}
}

func TestHookThroughHookd(t *testing.T) {
	t.Parallel()
	gatetest.Run(t, gatetest.FrontEnd{Name: "hookd", Deadline: 3 * time.Second, Start: startHookd})
}

func TestServe(t *testing.T) {
	t.Parallel()
	gatetest.Run(t, gatetest.FrontEnd{Name: "serve", Deadline: 3 * time.Second, Start: startServe})
}

func TestServeHook(t *testing.T) {
	t.Parallel()
	gatetest.Run(t, gatetest.FrontEnd{Name: "serve /v1/hook", Deadline: 3 * time.Second, Start: startServeHook})
}

func TestMCPProxy(t *testing.T) {
	t.Parallel()
	gatetest.Run(t, gatetest.FrontEnd{Name: "mcp proxy", Deadline: 10 * time.Second, Start: startMCP})
}

func TestGoClient(t *testing.T) {
	t.Parallel()
	gatetest.Run(t, gatetest.FrontEnd{Name: "client", Deadline: 3 * time.Second, Start: startClient})
}

// startHookd runs a real `warden hookd` on a Unix socket and sends it
// Claude Code's PreToolUse events as warden-hook does.
func startHookd(t *testing.T, p *gatetest.Project) func(*testing.T, gatetest.Call) gatetest.Answer {
	dir, err := os.MkdirTemp("", "gt") // a socket path must be short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	sock := filepath.Join(dir, "hookd.sock")
	srv := cli.NewHookd(sock, 0, log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := hookd.Ask(sock, &hookd.Request{Op: hookd.OpPing}, 5*time.Second); err == nil {
			break
		} else if time.Now().After(end) {
			t.Fatalf("hookd did not come up: %v", err)
		}
	}
	return func(t *testing.T, c gatetest.Call) gatetest.Answer {
		ev := claudeEvent(p, c)
		req := &hookd.Request{Op: hookd.OpHook, Args: []string{"claude", "--policy", p.Policy, "--store", p.Store, "--timeout", "3s"},
			Dir: p.Dir, Home: os.Getenv("HOME"), Stdin: ev, CallID: c.CallID}
		resp, err := hookd.Ask(sock, req, time.Minute)
		if err != nil {
			t.Fatalf("hookd: %v", err)
		}
		return hookAnswer(resp)
	}
}

// hookAnswer reads a hook's answer as Claude Code does.
func hookAnswer(resp wire.HookResponse) gatetest.Answer {
	var out struct {
		Specific struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	json.Unmarshal(resp.Stdout, &out)
	a := gatetest.Answer{Decision: warden.Effect(out.Specific.Decision), Raw: string(resp.Stdout) + string(resp.Stderr)}
	if a.Decision == "" && resp.Code == 0 {
		a.Decision = warden.Allow // no objection
	}
	if a.Decision != warden.Allow {
		a.Code = gatetest.CodeIn(out.Specific.Reason + string(resp.Stderr))
	}
	return a
}

// claudeEvent is Claude Code's PreToolUse event for the call.
func claudeEvent(p *gatetest.Project, c gatetest.Call) []byte {
	ev, _ := json.Marshal(map[string]any{"session_id": "gt", "hook_event_name": "PreToolUse", "cwd": p.Dir, "tool_name": "Bash",
		"tool_input": map[string]any{"command": c.Command()}})
	return ev
}

// startServe runs a real `warden serve` on 127.0.0.1 and calls POST
// /v1/decide with warden's Go client of the service (package remote).
func startServe(t *testing.T, p *gatetest.Project) func(*testing.T, gatetest.Call) gatetest.Answer {
	rc := runServe(t, p)
	return func(t *testing.T, c gatetest.Call) gatetest.Answer {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		call := warden.ToolCall{Tool: "Bash", Session: "gt", Args: map[string]any{"command": c.Command()}}
		resp, err := rc.DecideWith(ctx, call, wire.DecideRequest{CallID: c.CallID})
		raw, _ := json.Marshal(resp)
		a := gatetest.Answer{Decision: resp.Decision.Decision, Code: resp.Decision.Code, Raw: string(raw)}
		if err != nil {
			a.Raw += " " + err.Error()
		}
		return a
	}
}

// startServeHook runs a real `warden serve` and sends it Claude Code's
// events as `warden hook claude --serve URL` does (POST /v1/hook).
func startServeHook(t *testing.T, p *gatetest.Project) func(*testing.T, gatetest.Call) gatetest.Answer {
	rc := runServe(t, p)
	return func(t *testing.T, c gatetest.Call) gatetest.Answer {
		req := &wire.HookRequest{V: wire.Version, Op: wire.OpHook, Args: []string{"claude", "--timeout", "3s"}, Dir: p.Dir,
			Stdin: claudeEvent(p, c), CallID: c.CallID}
		resp, err := rc.Hook(req, time.Now().Add(time.Minute))
		if err != nil {
			return gatetest.Answer{Decision: warden.Deny, Code: warden.ErrorCode(err), Raw: err.Error()}
		}
		return hookAnswer(resp)
	}
}

// runServe runs a real `warden serve` on 127.0.0.1 for the project and
// returns a client with an agent token.
func runServe(t *testing.T, p *gatetest.Project) *remote.Client {
	s, err := serve.New(context.Background(), serve.Config{Policy: p.Policy, Store: p.Store, Tokens: filepath.Join(p.Dir, "tokens"),
		Grace: time.Second, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Tokens().Add("gt-agent", serve.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, "", "") }()
	t.Cleanup(func() { cancel(); <-done })
	return &remote.Client{URL: "http://" + ln.Addr().String(), Token: tok}
}

// startMCP runs `warden mcp proxy` (the CLI, in this process) in front of
// a real MCP server over stdio (this test binary), and speaks JSON-RPC to
// it over its stdin and stdout. A call's id is the request's JSON-RPC id:
// a call sent again under its id is the same request sent again.
func startMCP(t *testing.T, p *gatetest.Project) func(*testing.T, gatetest.Call) gatetest.Answer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"mcp", "proxy", "--name", "fake", "--policy", p.Policy, "--store", p.Store, "--session", "gt",
			"--", os.Args[0], upstreamArg}, inR, outW, &stderr)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-done
		if t.Failed() {
			t.Logf("mcp proxy's log:\n%s", stderr.String())
		}
	})
	lines := bufio.NewReader(outR)
	var mu sync.Mutex
	send := func(t *testing.T, msg string) map[string]json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatalf("write to the proxy: %v", err)
		}
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatalf("read from the proxy: %v (log: %s)", err, stderr.String())
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(line, &m) == nil && m["id"] != nil {
				return m
			}
		}
	}
	send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gt","version":"1"}}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	ids := map[string]string{}
	next := 0
	return func(t *testing.T, c gatetest.Call) gatetest.Answer {
		id := ids[c.CallID]
		if id == "" {
			next++
			id = fmt.Sprint(next)
			if c.CallID != "" {
				ids[c.CallID] = id
			}
		}
		args, _ := json.Marshal(map[string]any{"text": c.Marker})
		m := send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":`+string(args)+`}}`)
		var res struct {
			IsError bool `json:"isError"`
			Meta    struct {
				Decision warden.Decision `json:"run.warden/decision"`
			} `json:"_meta"`
		}
		json.Unmarshal(m["result"], &res)
		raw := string(m["result"]) + string(m["error"])
		if m["result"] != nil && !res.IsError {
			return gatetest.Answer{Decision: warden.Allow, Raw: raw}
		}
		return gatetest.Answer{Decision: res.Meta.Decision.Decision, Code: res.Meta.Decision.Code, Raw: raw}
	}
}

// startClient opens warden's Go client (package client) on the project.
func startClient(t *testing.T, p *gatetest.Project) func(*testing.T, gatetest.Call) gatetest.Answer {
	c, err := client.Open(context.Background(), client.Options{Policy: p.Policy, Store: p.Store, Session: "gt", Host: "go"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return func(t *testing.T, call gatetest.Call) gatetest.Answer {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		d, err := c.DecideID(ctx, warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": call.Command()}}, call.CallID)
		raw, _ := json.Marshal(d)
		a := gatetest.Answer{Decision: d.Decision, Code: d.Code, Raw: string(raw)}
		if err != nil {
			a.Raw += " " + err.Error()
		}
		return a
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(s.b.String())
}
