package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one message of a LineConn, as the MCP Go SDK bounds its
// stdio frames.
const MaxLine = mcp.DefaultMaxLineLength

// LineConn is an mcp.Connection over MCP's stdio framing: one JSON-RPC
// message (or batch) per line. It does what the SDK's IOTransport does,
// with less work per message: the SDK's decoder allocated 32 KB or more
// for every message it read (twice for one that is not a batch), which
// made the proxy's garbage, and its collector's work, most of its own cost
// per call. A batch is read as its messages in turn, and the answers to
// its requests are written back as one batch.
type LineConn struct {
	// Answer, when set, answers a line that is no JSON-RPC message with a
	// JSON-RPC error (-32700 for one that is not JSON, -32600 for the
	// rest, with the request's id when it has one) and goes on to the
	// next line, as a JSON-RPC server does; unset, such a line ends the
	// connection (Read returns the error). Set it for the connection to a
	// client, before the first Read.
	Answer bool

	w     io.Writer
	close func() error

	incoming chan lineRead
	closed   chan struct{}
	once     sync.Once
	closeErr error

	queue []jsonrpc.Message // the rest of a batch being read

	writeMu sync.Mutex
	batches map[jsonrpc.ID]*lineBatch // under writeMu
}

type lineRead struct {
	data []byte
	err  error
}

// lineBatch collects the answers to the requests of one batch read.
type lineBatch struct {
	pending map[jsonrpc.ID]int
	answers []*jsonrpc.Response
}

// NewLineConn reads messages from r and writes them to w; closeFn (if
// set) is called once by Close.
func NewLineConn(r io.Reader, w io.Writer, closeFn func() error) *LineConn {
	c := &LineConn{w: w, close: closeFn, incoming: make(chan lineRead), closed: make(chan struct{})}
	go c.readLoop(r)
	return c
}

// readLoop reads lines until an error, handing each to Read. It ends
// when the connection is closed, or leaks blocked in a read of a stream
// that never ends (stdin cannot be unblocked portably).
func (c *LineConn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if err == nil && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		select {
		case c.incoming <- lineRead{line, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine returns the next line without its end, in a slice of its own.
// A last line without an end is a line; no line at all is io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > MaxLine {
			return nil, fmt.Errorf("a message is over %d MiB", MaxLine>>20)
		}
		line = append(line, part...)
		switch {
		case err == nil:
			return bytes.TrimRight(line, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// Read implements mcp.Connection.
func (c *LineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	for {
		var in lineRead
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case in = <-c.incoming:
		}
		if in.err != nil {
			return nil, in.err
		}
		m, err := c.decodeLine(in.data)
		if err == nil || !c.Answer {
			return m, err
		}
		if err := c.answerBad(in.data, err); err != nil {
			return nil, err
		}
	}
}

// answerBad answers a line that is no JSON-RPC message with the JSON-RPC
// error for it.
func (c *LineConn) answerBad(line []byte, bad error) error {
	code, id := -32700, []byte("null")
	if json.Valid(line) {
		code = -32600
		var w struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &w) == nil && len(w.ID) > 0 && (w.ID[0] == '"' || w.ID[0] == '-' || w.ID[0] >= '0' && w.ID[0] <= '9') {
			id = w.ID
		}
	}
	msg, _ := json.Marshal("warden: the line is not a JSON-RPC 2.0 message (" + bad.Error() + "); it was not run")
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, code, msg)
	return err
}

// decodeLine reads one line: a message, or a batch whose first message
// it returns (the rest are queued).
func (c *LineConn) decodeLine(data []byte) (jsonrpc.Message, error) {
	if data[0] != '[' {
		return decodeMessage(data)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("unreadable batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("an empty batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	b := &lineBatch{pending: map[jsonrpc.ID]int{}}
	for i, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			if _, dup := b.pending[req.ID]; dup {
				return nil, fmt.Errorf("a batch has the request id %v twice", req.ID.Raw())
			}
			b.pending[req.ID] = len(b.answers)
			b.answers = append(b.answers, nil)
		}
	}
	if len(b.pending) > 0 {
		c.writeMu.Lock()
		if c.batches == nil {
			c.batches = map[jsonrpc.ID]*lineBatch{}
		}
		for id := range b.pending {
			if _, dup := c.batches[id]; dup {
				c.writeMu.Unlock()
				return nil, fmt.Errorf("a batch has the id %v of a request still unanswered", id.Raw())
			}
		}
		for id := range b.pending {
			c.batches[id] = b
		}
		c.writeMu.Unlock()
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// decodeMessage reads one JSON-RPC 2.0 message as the SDK's
// jsonrpc.DecodeMessage does: keys are matched exactly, an id is a number
// or a string, a message with a method is a request (a notification
// without an id), one without is a response, which needs an id.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var version string
	if json.Unmarshal(w["jsonrpc"], &version) != nil || version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %s; expected \"2.0\"", w["jsonrpc"])
	}
	var idv any
	if raw, ok := w["id"]; ok {
		if err := json.Unmarshal(raw, &idv); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message id: %w", err)
		}
	}
	id, err := jsonrpc.MakeID(idv)
	if err != nil {
		return nil, err
	}
	if raw, ok := w["method"]; ok {
		var method string
		if err := json.Unmarshal(raw, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w["params"]}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("invalid request: a response has no id")
	}
	resp := &jsonrpc.Response{ID: id, Result: w["result"]}
	if raw := w["error"]; len(raw) > 0 && string(raw) != "null" {
		var e jsonrpc.Error
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc error: %w", err)
		}
		resp.Error = &e
	}
	return resp, nil
}

// Write implements mcp.Connection.
func (c *LineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok && c.batches[resp.ID] != nil {
		b := c.batches[resp.ID]
		delete(c.batches, resp.ID)
		b.answers[b.pending[resp.ID]] = resp
		delete(b.pending, resp.ID)
		if len(b.pending) > 0 {
			return nil
		}
		parts := make([]json.RawMessage, len(b.answers))
		for i, a := range b.answers {
			if parts[i], err = jsonrpc.EncodeMessage(a); err != nil {
				return err
			}
		}
		data, err = json.Marshal(parts)
	} else {
		data, err = jsonrpc.EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// Close implements mcp.Connection.
func (c *LineConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		if c.close != nil {
			c.closeErr = c.close()
		}
	})
	return c.closeErr
}

// SessionID implements mcp.Connection.
func (c *LineConn) SessionID() string { return "" }

// Connect implements mcp.Transport: an MCP server runs on the connection
// itself (mcp.Server.Run), one session.
func (c *LineConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// TerminateAfter is how long closing a command's connection waits for the
// server to exit once its input is closed, and again after SIGTERM, before
// it kills the server.
var TerminateAfter = 5 * time.Second

// CommandConn starts cmd, an MCP server over stdio, and returns the
// connection to it. Closing the connection ends the server as the MCP
// specification says a client should: its input is closed, then it gets
// SIGTERM, then SIGKILL, each after TerminateAfter.
func CommandConn(cmd *exec.Cmd) (*LineConn, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	stop := func() error {
		if err := stdin.Close(); err != nil {
			return fmt.Errorf("close the server's input: %w", err)
		}
		go func() { exited <- cmd.Wait() }()
		wait := func() (error, bool) {
			select {
			case err := <-exited:
				return err, true
			case <-time.After(TerminateAfter):
				return nil, false
			}
		}
		if err, ok := wait(); ok {
			return err
		}
		if cmd.Process.Signal(syscall.SIGTERM) == nil {
			if err, ok := wait(); ok {
				return err
			}
		}
		if err := cmd.Process.Kill(); err != nil {
			return err
		}
		if err, ok := wait(); ok {
			return err
		}
		return errors.New("the server does not exit")
	}
	return NewLineConn(stdout, stdin, stop), nil
}

var (
	_ mcp.Connection = (*LineConn)(nil)
	_ mcp.Transport  = (*LineConn)(nil)
)
