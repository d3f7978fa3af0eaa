package mcpproxy_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/warden-run/warden/mcpproxy"
)

// TestLineConn reads what a client may send on stdin and checks each
// message, and writes answers, as the SDK's stdio transport does.
func TestLineConn(t *testing.T) {
	ctx := t.Context()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		``,
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r",
		`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":3,"result":null}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
		`{"jsonrpc":"1.0","id":5,"method":"ping"}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":6,"Method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":7,"method":"last"}`, // no line end
	}, "\n")
	pr, pw := io.Pipe()
	c := mcpproxy.NewLineConn(strings.NewReader(in), pw, nil)
	out := bufio.NewScanner(pr)
	read := func() jsonrpc.Message {
		t.Helper()
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		return m
	}
	req := func(m jsonrpc.Message) *jsonrpc.Request {
		t.Helper()
		r, ok := m.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("%#v: not a request", m)
		}
		return r
	}
	if r := req(read()); r.Method != "tools/list" || r.ID.Raw() != int64(1) || string(r.Params) != "{}" {
		t.Errorf("first: %+v", r)
	}
	if r := req(read()); r.Method != "notifications/initialized" || r.ID.IsValid() {
		t.Errorf("notification: %+v", r)
	}
	// A batch comes as its messages in turn.
	a, p, two := req(read()), req(read()), req(read())
	if a.ID.Raw() != "a" || p.Method != "notifications/progress" || two.ID.Raw() != int64(2) {
		t.Errorf("batch: %+v %+v %+v", a, p, two)
	}
	if r, ok := read().(*jsonrpc.Response); !ok || r.ID.Raw() != int64(3) || string(r.Result) != "null" || r.Error != nil {
		t.Errorf("null result: %+v", r)
	}
	if r, ok := read().(*jsonrpc.Response); !ok || r.Error == nil || !strings.Contains(r.Error.Error(), "no such method") {
		t.Errorf("error answer: %+v", r)
	}
	for _, want := range []string{"version", "has no id"} {
		if m, err := c.Read(ctx); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read = %+v, %v; want an error with %q", m, err, want)
		}
	}
	// Keys are matched exactly, as the SDK matches them: "Method" is not
	// the method, so this is an answer (with an id and no result).
	if r, ok := read().(*jsonrpc.Response); !ok || r.ID.Raw() != int64(6) {
		t.Errorf(`{"id":6,"Method":...}: %+v, want a response`, r)
	}
	if r := req(read()); r.Method != "last" {
		t.Errorf("last line without an end: %+v", r)
	}
	if _, err := c.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after the input: %v, want EOF", err)
	}
	// The answers to the batch's requests go back as one batch, once both
	// are in; other messages go alone.
	go func() {
		c.Write(ctx, &jsonrpc.Response{ID: two.ID, Result: []byte(`{}`)})
		c.Write(ctx, &jsonrpc.Request{Method: "notifications/message", Params: []byte(`{"level":"info"}`)})
		c.Write(ctx, &jsonrpc.Response{ID: a.ID, Result: []byte(`{"x":1}`)})
	}()
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`,
		`[{"jsonrpc":"2.0","id":"a","result":{"x":1}},{"jsonrpc":"2.0","id":2,"result":{}}]`,
	} {
		if !out.Scan() || out.Text() != want {
			t.Errorf("wrote %q, want %q", out.Text(), want)
		}
	}
}

// TestLineConnLimits: a line over the limit is an error that carries the
// message's id when it is at the start or the end of the line, the next
// Read reads the next line, and Close ends a Read that waits.
func TestLineConnLimits(t *testing.T) {
	ctx := t.Context()
	pad := strings.Repeat("a", mcpproxy.MaxLine)
	in := `{"jsonrpc":"2.0","id":1,"method":"x","params":"` + pad + `"}` + "\n" +
		`{"jsonrpc":"2.0","method":"x","params":"` + pad + `","id":"two"}` + "\n" +
		`{"jsonrpc":"2.0","method":"x","params":"` + pad + `","id":{"x":3}}` + "\n" +
		`{"jsonrpc":"2.0","method":"x","params":"` + pad + `"}` + "\n" +
		`nope` + pad + "\n" +
		`{"jsonrpc":"2.0","id":9,"method":"y"}` + "\n"
	c := mcpproxy.NewLineConn(strings.NewReader(in), io.Discard, nil)
	for _, want := range []struct {
		id      any
		notJSON bool
	}{{int64(1), false}, {"two", false}, {nil, false}, {nil, false}, {nil, true}} {
		_, err := c.Read(ctx)
		var long *mcpproxy.TooLongError
		if !errors.As(err, &long) || !strings.Contains(err.Error(), "MiB") || long.ID.Raw() != want.id || long.NotJSON != want.notJSON {
			t.Errorf("a message over the limit: %v (%+v), want a TooLongError with id %v, not JSON %v", err, long, want.id, want.notJSON)
		}
	}
	if m, err := c.Read(ctx); err != nil || m.(*jsonrpc.Request).Method != "y" {
		t.Errorf("after the messages over the limit: %v, %v; want the next one", m, err)
	}
	pr, _ := io.Pipe()
	closed := false
	c = mcpproxy.NewLineConn(pr, io.Discard, func() error { closed = true; return nil })
	done := make(chan error, 1)
	go func() { _, err := c.Read(context.Background()); done <- err }()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) || !closed {
			t.Errorf("Read after Close: %v (close func called: %v)", err, closed)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Read")
	}
}

// TestLineConnAnswer: with Answer set, a line that is no JSON-RPC message
// is answered with the JSON-RPC error for it (parse error, or invalid
// request with the request's id) and the next line is read; unset, the
// same line is Read's error.
func TestLineConnAnswer(t *testing.T) {
	ctx := t.Context()
	in := strings.Join([]string{
		`not json`,
		`{"jsonrpc":"2.0","id":7,"method":}`,
		`{"jsonrpc":"1.0","id":8,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"s","Method":"x","result":1,"error":5}`,
		`[]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	}, "\n") + "\n"
	pr, pw := io.Pipe()
	c := mcpproxy.NewLineConn(strings.NewReader(in), pw, nil)
	c.Answer = true
	out := bufio.NewScanner(pr)
	got := make(chan jsonrpc.Message, 1)
	go func() {
		m, err := c.Read(ctx)
		if err != nil {
			t.Errorf("Read: %v", err)
		}
		got <- m
	}()
	for _, want := range []string{`"id":null,"error":{"code":-32700`, `"id":null,"error":{"code":-32700`, `"id":8,"error":{"code":-32600`, `"id":"s","error":{"code":-32600`, `"id":null,"error":{"code":-32600`} {
		if !out.Scan() {
			t.Fatalf("no answer, want one with %s", want)
		}
		if !strings.Contains(out.Text(), want) || !strings.Contains(out.Text(), "it was not run") {
			t.Errorf("answered %s, want %s", out.Text(), want)
		}
	}
	if r, ok := (<-got).(*jsonrpc.Request); !ok || r.Method != "tools/list" {
		t.Errorf("after the bad lines: %+v, want the tools/list request", r)
	}
	c = mcpproxy.NewLineConn(strings.NewReader("not json\n"), io.Discard, nil)
	if _, err := c.Read(ctx); err == nil {
		t.Error("without Answer, a bad line is no error")
	}
}
