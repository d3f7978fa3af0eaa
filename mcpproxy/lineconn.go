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
	"runtime"
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
	// Log, when set with Answer, gets one line for each message over
	// MaxLine answered with an error (other bad lines are answered only).
	Log io.Writer

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
		var long *TooLongError
		if err != nil && !errors.As(err, &long) {
			return
		}
	}
}

// readLine returns the next line without its end, in a slice of its own.
// A last line without an end is a line; no line at all is io.EOF. A line
// over MaxLine is read to its end and dropped: the error is then a
// *TooLongError, and the next call reads the next line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > MaxLine {
			return nil, skipLine(br, line, part, err)
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

// Of a line over MaxLine, the first headSize bytes and the last tailSize
// are kept, for its id.
const (
	headSize = 64 << 10
	tailSize = 256
)

// skipLine reads the rest of a line over MaxLine (line, then part, which
// ReadSlice returned with err) without keeping it, and returns the
// *TooLongError for it.
func skipLine(br *bufio.Reader, line, part []byte, err error) error {
	size := len(line) + len(part)
	head := line[:min(len(line), headSize)]
	if len(head) < headSize {
		head = append(head, part[:min(len(part), headSize-len(head))]...)
	}
	tail := keepTail(append([]byte(nil), line[max(0, len(line)-tailSize):]...), part)
	for errors.Is(err, bufio.ErrBufferFull) {
		part, err = br.ReadSlice('\n')
		size += len(part)
		tail = keepTail(tail, part)
	}
	e := &TooLongError{Size: size}
	e.ID, e.NotJSON = lineID(head, bytes.TrimRight(tail, "\r\n"))
	return e
}

// keepTail appends part to tail and keeps the last tailSize bytes.
func keepTail(tail, part []byte) []byte {
	tail = append(tail, part[max(0, len(part)-tailSize):]...)
	if len(tail) > tailSize {
		tail = append(tail[:0], tail[len(tail)-tailSize:]...)
	}
	return tail
}

// TooLongError is a line over MaxLine. The line was read to its end and
// dropped; the connection reads on.
type TooLongError struct {
	// Size is the line's length in bytes.
	Size int
	// ID is the message's id when it could be read cheaply, from the
	// line's first 64 KiB or its last bytes (an invalid ID otherwise).
	ID jsonrpc.ID
	// NotJSON reports that the line's start is not JSON.
	NotJSON bool
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("a message of %d bytes is over the limit of %d MiB a message may have", e.Size, MaxLine>>20)
}

// lineID reads the id of a message too long to decode from the line's
// start (head) or its end (tail): a top-level "id" member whose value is
// a number or a string. notJSON reports that head is not the start of a
// JSON value.
func lineID(head, tail []byte) (id jsonrpc.ID, notJSON bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		var syn *json.SyntaxError
		return id, errors.As(err, &syn) || errors.Is(err, io.EOF)
	}
	if tok != json.Delim('{') {
		return id, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return tailID(tail), isSyntax(err)
		}
		if key == "id" {
			v, err := dec.Token()
			if err != nil {
				return tailID(tail), isSyntax(err)
			}
			return makeID(v), false
		}
		if err := skipValue(dec); err != nil {
			return tailID(tail), isSyntax(err)
		}
	}
	return id, false
}

func isSyntax(err error) bool {
	var syn *json.SyntaxError
	return errors.As(err, &syn)
}

// skipValue reads the next value of dec, token by token (a string or a
// number is one token, read whole: at most headSize bytes).
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// makeID is the id of a token: a string or a number (json.Number).
func makeID(v any) jsonrpc.ID {
	var raw any
	switch v := v.(type) {
	case string:
		raw = v
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return jsonrpc.ID{}
		}
		raw = f
	default:
		return jsonrpc.ID{}
	}
	id, _ := jsonrpc.MakeID(raw)
	return id
}

// tailID reads the id from the end of a line whose last member is the
// top-level id, as in {"result":...,"id":7}: a number, or a string
// without escapes, after "id": that follows a comma, at the very end of
// the object.
func tailID(tail []byte) jsonrpc.ID {
	t := bytes.TrimRight(tail, " \t\r\n")
	if !bytes.HasSuffix(t, []byte("}")) {
		return jsonrpc.ID{}
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	var value []byte
	if bytes.HasSuffix(t, []byte(`"`)) {
		open := bytes.LastIndexByte(t[:len(t)-1], '"')
		if open < 0 || bytes.IndexByte(t[open:], '\\') >= 0 {
			return jsonrpc.ID{}
		}
		value, t = t[open:], t[:open]
	} else {
		i := len(t)
		for i > 0 && bytes.IndexByte([]byte("0123456789-+.eE"), t[i-1]) >= 0 {
			i--
		}
		value, t = t[i:], t[:i]
	}
	t = bytes.TrimRight(t, " \t\r\n")
	if !bytes.HasSuffix(t, []byte(":")) {
		return jsonrpc.ID{}
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	if !bytes.HasSuffix(t, []byte(`"id"`)) {
		return jsonrpc.ID{}
	}
	t = bytes.TrimRight(t[:len(t)-4], " \t\r\n")
	if !bytes.HasSuffix(t, []byte(",")) {
		return jsonrpc.ID{}
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	v, err := dec.Token()
	if err != nil || dec.More() {
		return jsonrpc.ID{}
	}
	return makeID(v)
}

// Read implements mcp.Connection. A line over MaxLine is answered when
// Answer is set; unset, Read returns a *TooLongError for it, and the next
// Read reads the next line.
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
			var long *TooLongError
			if !errors.As(in.err, &long) || !c.Answer {
				return nil, in.err
			}
			if err := c.answerTooLong(long); err != nil {
				return nil, err
			}
			continue
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

// answerTooLong answers a line over MaxLine: -32700 when its start is
// not JSON, else -32600, with the message's id when it could be read.
func (c *LineConn) answerTooLong(long *TooLongError) error {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "warden mcp proxy: answered a client message with an error: %v\n", long)
	}
	code := jsonrpc.CodeInvalidRequest
	if long.NotJSON {
		code = jsonrpc.CodeParseError
	}
	msg := "warden: " + long.Error() + ", so it was not read and nothing of it was run. " +
		"Send less in one message: split the work into smaller calls, or pass large content by reference (a file path or a URL) instead of inline."
	id := []byte("null")
	if long.ID.IsValid() {
		id, _ = json.Marshal(long.ID.Raw())
	}
	text, _ := json.Marshal(msg)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, code, text)
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

// TerminateAfter is how long CommandConn's Close waits for the server to
// exit once its input is closed, and again after SIGTERM, before it kills
// the server.
var TerminateAfter = 5 * time.Second

// CommandConn starts cmd, an MCP server over stdio, and returns the
// connection to it; closing the connection ends the server (see
// StartServer), each step after TerminateAfter.
func CommandConn(cmd *exec.Cmd) (*LineConn, error) { return StartServer(cmd, TerminateAfter) }

// StartServer starts cmd, an MCP server over stdio, in a process group of
// its own, and returns the connection to it. Closing the connection ends
// the server as the MCP specification's stdio shutdown says a client
// should: its input is closed; if it has not exited after grace, its
// process group gets SIGTERM, and after grace again SIGKILL. Processes it
// started that outlive it get the same, so that none outlives the
// connection. On Linux the server is also killed when the proxy dies
// (PR_SET_PDEATHSIG), for a proxy that is killed itself.
// Close returns once the server is gone (or after a last grace period
// when even SIGKILL did not end it).
func StartServer(cmd *exec.Cmd, grace time.Duration) (*LineConn, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = procAttr()
	}
	// PR_SET_PDEATHSIG fires when the thread that started the server
	// ends, not the process: the server is started on a thread of its own,
	// held until the server is gone, so that no goroutine that locks the
	// thread and ends takes the server with it.
	started, gone := make(chan error), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-gone
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return NewLineConn(stdout, stdin, func() error {
		defer close(gone)
		return endServer(cmd, stdin, grace)
	}), nil
}

// endServer ends a server started by StartServer, and what it left
// running in its process group.
func endServer(cmd *exec.Cmd, stdin io.Closer, grace time.Duration) error {
	closeErr := stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	pid := cmd.Process.Pid
	defer endGroup(pid, grace)
	if err, ok := wait(); ok {
		return err
	}
	if signalGroup(cmd.Process, syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := signalGroup(cmd.Process, syscall.SIGKILL); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	if closeErr != nil {
		return fmt.Errorf("close the server's input: %w", closeErr)
	}
	return errors.New("the server does not exit, even after SIGKILL")
}

// endGroup ends what is left of the process group a server led once the
// server is gone: SIGTERM, and SIGKILL after grace if any is still there.
func endGroup(pid int, grace time.Duration) {
	if !groupAlive(pid) {
		return
	}
	killGroup(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for groupAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if groupAlive(pid) {
		killGroup(pid, syscall.SIGKILL)
	}
}

var (
	_ mcp.Connection = (*LineConn)(nil)
	_ mcp.Transport  = (*LineConn)(nil)
)
