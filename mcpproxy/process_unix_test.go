//go:build unix

package mcpproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/cli"
	"github.com/warden-run/warden/sqlite"
)

func init() {
	runProxy = func() {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
}

// patience bounds every wait of these tests for something that happens
// anyway (a process to exit, a line to arrive): generous, for a loaded
// machine; no test depends on it being short.
const patience = 2 * time.Minute

// proxyProc is `warden mcp proxy` run as a process of its own (the test
// binary, see TestMain) in front of the fake server.
type proxyProc struct {
	t      *testing.T
	dir    string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	outR   io.Closer
	exited chan error
	stderr *syncBuffer
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
	return s.b.String()
}

// startProxy starts the proxy with the flags and the fake server, its
// behaviour set by env (WARDEN_TEST_STUBBORN=1, WARDEN_TEST_LATE=1), and
// initializes the MCP session.
func startProxy(t *testing.T, env []string, flags ...string) *proxyProc {
	t.Helper()
	dir := t.TempDir()
	writePolicy(t, dir, "version: 1\ndefault: allow\nworkspace: {root: ., outside: deny}\n")
	args := append([]string{"mcp", "proxy", "--policy", filepath.Join(dir, "warden.yaml"), "--session", "s-" + t.Name(), "--name", "files"}, flags...)
	cmd := exec.Command(os.Args[0], append(args, "--", os.Args[0])...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "WARDEN_TEST_AS=proxy", "WARDEN_TEST_DIR="+dir, "WARDEN_SESSION=")...)
	p := &proxyProc{t: t, dir: dir, cmd: cmd, exited: make(chan error, 1), stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out, p.outR = bufio.NewReaderSize(stdout, 1<<20), stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// Whatever the test did, nothing it started is left running.
		cmd.Process.Kill()
		for _, f := range []string{"upstream.pid", "sleeper.pid"} {
			if pid := p.pidIn(f); pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			t.Logf("the proxy's stderr:\n%s", p.stderr)
		}
	})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if m := p.answer(`1`); m["result"] == nil {
		t.Fatalf("initialize: %s", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *proxyProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write to the proxy: %v", err)
	}
}

// answer reads the proxy's messages up to the answer with the id (as
// written in JSON) and returns it; another answer on the way is an error.
func (p *proxyProc) answer(id string) wire {
	p.t.Helper()
	type read struct {
		line []byte
		err  error
	}
	got := make(chan read, 1)
	for {
		go func() {
			line, err := p.out.ReadBytes('\n')
			got <- read{line, err}
		}()
		var r read
		select {
		case r = <-got:
		case <-time.After(patience):
			p.t.Fatalf("no answer to id %s from the proxy in %v", id, patience)
		}
		if r.err != nil {
			p.t.Fatalf("read from the proxy: %v", r.err)
		}
		var m wire
		if err := json.Unmarshal(r.line, &m); err != nil {
			p.t.Fatalf("the proxy wrote %.200q: %v", r.line, err)
		}
		if _, isReq := m["method"]; isReq {
			continue
		}
		if m.id() != id {
			p.t.Fatalf("the proxy answered id %s (%.300s), want an answer to id %s", m.id(), r.line, id)
		}
		return m
	}
}

// pidIn is the pid the fake server wrote to the file (0 for none yet).
func (p *proxyProc) pidIn(file string) int {
	b, err := os.ReadFile(filepath.Join(p.dir, file))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// upstreamGot waits until a line the fake server read contains all of
// parts, and returns it.
func (p *proxyProc) upstreamGot(parts ...string) string {
	p.t.Helper()
	for start := time.Now(); time.Since(start) < patience; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(p.dir, "upstream.log"))
	lines:
		for _, line := range strings.Split(string(b), "\n") {
			for _, part := range parts {
				if !strings.Contains(line, part) {
					continue lines
				}
			}
			return line
		}
	}
	p.t.Fatalf("the upstream server never read a message with %q", parts)
	return ""
}

// waitExit waits for the proxy to exit.
func (p *proxyProc) waitExit() {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(patience):
		p.t.Fatalf("the proxy did not exit in %v", patience)
	}
}

// alive reports whether the process runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// waitGone waits for the process to be gone.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for start := time.Now(); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > patience {
			t.Fatalf("%s (pid %d) still runs %v after the proxy was done", what, pid, patience)
		}
	}
}

// TestProxyEndsTheUpstreamWhenTheClientGoes: the client went away while
// the upstream server was in a call, and the proxy exited at once,
// leaving the server running (re-parented to PID 1). Now the proxy ends
// it before it exits: its input closed, then SIGTERM, then SIGKILL, to its
// process group, so that what it started ends too. The server here
// ignores both its input's end and SIGTERM, and started a process of its
// own that ignores SIGTERM too; the same when the client stops reading
// (the proxy died of SIGPIPE) and when the proxy itself is stopped by
// SIGTERM or SIGINT. A proxy killed by SIGKILL takes the server with it
// on Linux.
func TestProxyEndsTheUpstreamWhenTheClientGoes(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"stdin closed", "stdout closed", "SIGTERM", "SIGINT", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			if how == "SIGKILL" && runtime.GOOS != "linux" {
				t.Skip("PR_SET_PDEATHSIG is Linux's")
			}
			p := startProxy(t, []string{"WARDEN_TEST_STUBBORN=1"}, "--shutdown-grace", "200ms")
			p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{}}}`)
			p.upstreamGot(`"hang"`)
			server, sleeper := p.pidIn("upstream.pid"), p.pidIn("sleeper.pid")
			if server == 0 || sleeper == 0 {
				t.Fatalf("the fake server's pids: %d, %d", server, sleeper)
			}
			switch how {
			case "stdin closed":
				p.in.Close()
			case "stdout closed":
				// The proxy finds the client gone when it writes to it.
				p.outR.Close()
				p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
			case "SIGTERM":
				p.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				p.cmd.Process.Signal(syscall.SIGINT)
			case "SIGKILL":
				// The proxy cannot end anything: Linux kills the server
				// (PR_SET_PDEATHSIG); what the server started is out of
				// reach (the test's cleanup kills it).
				p.cmd.Process.Kill()
				waitGone(t, server, "the upstream server")
				return
			}
			p.waitExit()
			waitGone(t, server, "the upstream server")
			waitGone(t, sleeper, "the process the upstream server started")
		})
	}
}

// TestProxyAnswersACallTheUpstreamDoesNotAnswer: a call the server never
// answered was never answered. Now, after --call-timeout, the client gets
// a JSON-RPC error that says what happened and what to do, the server
// gets notifications/cancelled for the call, its late answer is dropped,
// the proxy goes on, and the call's audit record has a failed outcome.
func TestProxyAnswersACallTheUpstreamDoesNotAnswer(t *testing.T) {
	t.Parallel()
	p := startProxy(t, []string{"WARDEN_TEST_LATE=1"}, "--call-timeout", "1s")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{}}}`)
	m := p.answer(`2`)
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != -32001 ||
		!strings.Contains(e.Message, "did not answer the call of mcp__files__hang within") ||
		!strings.Contains(e.Message, "--call-timeout") || !strings.Contains(e.Message, "before you retry") {
		t.Errorf("the answer to the call the server did not answer: %s", m["error"])
	}
	p.upstreamGot(`"notifications/cancelled"`, `"requestId":2`)
	// The server answers when it is told of the cancellation (late); the
	// client gets the answer to its next call, not a second one to 2.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if m := p.answer(`3`); !strings.Contains(string(m["result"]), "echo") {
		t.Errorf("the call after: %s", m)
	}
	p.in.Close()
	p.waitExit()
	if !strings.Contains(p.stderr.String(), "dropped the upstream's late answer to id 2") {
		t.Errorf("the proxy did not report the late answer it dropped; stderr:\n%s", p.stderr)
	}
	outcomes(t, p.dir, map[string]string{"mcp__files__hang": warden.OutcomeFail, "mcp__files__echo": warden.OutcomeOK})
}

// TestProxyProgressRestartsTheWait: a call the server reports progress
// on is waited for past --call-timeout (the MCP specification's
// timeouts: progress shows the work goes on).
func TestProxyProgressRestartsTheWait(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil, "--call-timeout", "2s")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p2"}}}`)
	if m := p.answer(`2`); !strings.Contains(string(m["result"]), "slow done") {
		t.Errorf("the call the server reported progress on: %v, want its result", m)
	}
}

// outcomes checks the audit records of the calls of the tools: one each,
// an allow, with the outcome.
func outcomes(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for tool, outcome := range want {
		recs, err := st.Audit(t.Context(), warden.AuditFilter{Tool: tool})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].Decision != warden.Allow || recs[0].Outcome != outcome {
			t.Errorf("the audit records of %s: %+v, want one allow with the outcome %q", tool, recs, outcome)
		}
	}
}

// TestProxyAnswersOversizedLines: one client line over 16 MiB ended the
// whole proxy. Now it is answered with a JSON-RPC error (with its id when
// it is at the start or the end of the line) and the next line is read;
// an answer of the server over the limit is dropped and the call it
// answered gets an error instead, with a failed outcome.
func TestProxyAnswersOversizedLines(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil)
	big := strings.Repeat("a", 17<<20)
	checkErr := func(m wire, code int) {
		t.Helper()
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != code || !strings.Contains(e.Message, "over the limit of 16 MiB") {
			t.Errorf("the answer to the line over the limit: %.400s, want code %d", m["error"], code)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	checkErr(p.answer(`7`), -32600)
	if m := p.answer(`8`); !strings.Contains(string(m["result"]), "echo") {
		t.Errorf("the call after the line over the limit: %s", m)
	}
	// The id at the end, as some SDKs write it; none at all; not JSON.
	p.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}},"id":"nine"}`)
	checkErr(p.answer(`"nine"`), -32600)
	p.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}`)
	checkErr(p.answer(`null`), -32600)
	p.send(`not json ` + big)
	checkErr(p.answer(`null`), -32700)

	p.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	m := p.answer(`10`)
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != -32603 || !strings.Contains(e.Message, "answered the call of mcp__files__big with a message of") {
		t.Errorf("the call the server answered with a line over the limit: %.400s", m["error"])
	}
	p.send(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	if m := p.answer(`11`); string(m["result"]) != "{}" {
		t.Errorf("ping after the server's line over the limit: %s", m)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "upstream.log")); bytes.Contains(b, []byte(`"id":7`)) || bytes.Contains(b, []byte(big[:1000])) {
		t.Error("the line over the limit reached the upstream server")
	}
	p.in.Close()
	p.waitExit()
	outcomes(t, p.dir, map[string]string{"mcp__files__big": warden.OutcomeFail})
}
