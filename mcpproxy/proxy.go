// Package mcpproxy is warden's governing MCP proxy: an MCP server to its
// client and an MCP client to one upstream server. It passes every message
// through as it is, except these: each tools/call is decided by a Gate
// first (a deny or an ask is answered by the proxy as an MCP tool error,
// and the upstream never sees the call; an ask may go to the user through
// MCP elicitation first), the result of an allowed call that broke a rule
// that only warns gets the warnings added, and each tools/list result
// loses the tools the Gate hides. A client request with the id of one not
// yet answered is refused, and an upstream answer to no request the proxy
// forwarded is dropped. A request the upstream does not answer within
// Proxy.CallTimeout is answered with an error and cancelled upstream, and
// a message over MaxLine either way is answered with an error (see
// LineConn); Run ends the upstream server before it returns. Resources,
// prompts, notifications, cancellation, progress and the server's own
// requests to the client (roots, sampling, elicitation) pass through
// untouched.
//
// The proxy works on JSON-RPC messages over the MCP Go SDK's transports
// (mcp.Connection), so it needs to understand nothing else of the protocol,
// and any protocol version the two ends agree on passes through it.
package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/onereading"
)

// Gate decides the tool calls that pass through the proxy.
//
// Implementations must be safe for concurrent use.
type Gate interface {
	// Decide decides one call. A non-nil error is an infrastructure
	// failure (the store did not answer); the decision returned with it
	// must then be a deny that says so (warden.FailClosed). The call is
	// forwarded only on an allow.
	Decide(ctx context.Context, call warden.ToolCall) (Verdict, error)
	// Hidden returns the subset of the tools (named as in calls,
	// mcp__SERVER__TOOL) that the client must not see in tools/list: the
	// tools its role may not use. An error hides every tool.
	Hidden(ctx context.Context, tools []string) (map[string]bool, error)
}

// Verdict is a Gate's decision on a call.
type Verdict struct {
	Decision warden.Decision
	// Approval is the approval an ask queued for a human ("" for none).
	Approval string
}

// Answerer is a Gate that takes a human's answer to a queued approval.
// With one, an ask goes to the user through MCP elicitation when the
// client supports it (protocol versions before 2026-07-28, which let a
// server send elicitation/create), and the call is decided again after
// the answer.
type Answerer interface {
	// Answer approves (once) or rejects the approval; message is the
	// human's note.
	Answer(ctx context.Context, approval string, approve bool, message string) error
}

// ElicitTimeout bounds the wait for the user's answer in the client; then
// the call is answered as an ask (the approval stays queued).
var ElicitTimeout = 10 * time.Minute

// Proxy governs one MCP client's traffic to one upstream server. Set Name
// and Gate; the zero value of the other fields means the defaults.
type Proxy struct {
	// Name is the server's name in tool names: a call of the upstream's
	// tool TOOL is decided as mcp__Name__TOOL, as Claude Code names the
	// tools of an MCP server configured under that name.
	Name string
	// Gate decides the calls.
	Gate Gate
	// Log receives one line per problem the client cannot be told about
	// (nil: discarded). It must not be the client's stdout.
	Log io.Writer
	// CallTimeout bounds the wait for the upstream's answer to a request
	// the proxy forwarded (0: no bound; the CLI's default is
	// DefaultCallTimeout). A request not answered in time is answered with
	// a JSON-RPC error (CodeRequestTimeout) that says so, the upstream is
	// sent notifications/cancelled for it, and its late answer, if one
	// comes, is dropped. A progress notification for the request starts
	// the wait again, up to 10 times CallTimeout from the request.
	CallTimeout time.Duration
}

// DefaultCallTimeout is the CLI's default Proxy.CallTimeout.
const DefaultCallTimeout = 120 * time.Second

// CodeRequestTimeout is the JSON-RPC error code of a request the upstream
// did not answer in time: the code the MCP SDKs give their own request
// timeouts.
const CodeRequestTimeout = -32001

// ToolName is the name a call of the upstream tool tool is decided as.
func (p *Proxy) ToolName(tool string) string { return "mcp__" + p.Name + "__" + tool }

// Outcomer is a Gate that records what an allowed call did: the
// upstream's answer to a tools/call, a failure when it is a tool error
// (isError) or a JSON-RPC error. The proxy calls it right after it passes
// the answer on (the client does not wait for the write), and decides the
// client's next call only once it has returned, so that the call is
// decided with it.
type Outcomer interface {
	Outcome(ctx context.Context, tool string, ok bool) error
}

// pending is a client request forwarded upstream.
type pending struct {
	id     jsonrpc.ID
	method string
	// tool is a tools/call's tool, as calls are decided (mcp__SERVER__TOOL).
	tool string
	// warnings of an allowed tools/call that broke a rule that only warns.
	warnings []string
	// seq tells this request from a later one with its id; timer answers
	// it when the upstream does not (Proxy.CallTimeout), start is when it
	// was sent, and progress its progress token ("" for none).
	seq      int
	timer    *time.Timer
	start    time.Time
	progress string
}

// run is the state of one Run.
type run struct {
	p        *Proxy
	client   mcp.Connection
	upstream mcp.Connection

	mu sync.Mutex
	// inflight are the client's requests forwarded upstream and not yet
	// answered, by ID, with their method.
	inflight map[string]pending
	// busy are the IDs of the client's requests not yet answered, also
	// those being decided or put to the user: a second request with one
	// of them is refused, so that every answer is matched to the request
	// it answers (a tools/list answer taken for a tools/call's would
	// pass unfiltered).
	busy map[string]bool
	// gone is why the upstream is gone (nil while it is up).
	gone error
	// initID is the client's initialize request while it is under way;
	// clientElicits reports that it declared the elicitation capability,
	// and elicit that an ask may be put to the user (set once the
	// upstream agreed on a protocol version that allows it).
	initID        string
	clientElicits bool
	elicit        bool
	// waiters are the proxy's own requests to the client, by ID.
	waiters map[string]chan *jsonrpc.Response
	nextID  int
	// idPrefix starts the IDs of the proxy's own requests: random, so that
	// the upstream cannot send a request of its own under one of them and
	// have the client's answer to it taken for the user's.
	idPrefix string
	// callPrefix starts the call ids of this run's tools/calls (CallID).
	callPrefix string
	// asking are the calls put to the user.
	asking sync.WaitGroup
	// recording, when set, is closed once the outcome of the call last
	// answered is recorded; the next decision waits for it.
	recording chan struct{}
	// late are the IDs of requests answered by the proxy when the
	// upstream did not answer in time: the upstream's late answer is
	// dropped, and the client may not reuse the id until it comes.
	late map[string]bool
	// progress maps the progress tokens of the requests in flight to
	// their IDs (only with a CallTimeout).
	progress map[string]string
	seq      int
	// timing are the timeouts being answered; ending, once set, starts
	// no more.
	timing sync.WaitGroup
	ending bool
	// cancel ends the run (the client is gone when it cannot be written).
	cancel context.CancelFunc
}

// Run proxies between client and upstream until the client goes away (it
// returns nil on a clean end of input, and ends when a write to the client
// fails) or ctx is done. It closes both connections and waits for their
// Close (for a CommandConn, the end of the server) before it returns.
//
// When the upstream goes away first, every request it has not answered is
// answered with the reason (a tools/call as a tool error), and so is every
// later request, until the client goes away: a failure is never an allow.
func (p *Proxy) Run(ctx context.Context, client, upstream mcp.Connection) error {
	if p.Gate == nil {
		panic("mcpproxy: Proxy.Gate is nil")
	}
	var nonce [12]byte
	rand.Read(nonce[:])
	r := &run{p: p, client: client, upstream: upstream, inflight: map[string]pending{}, busy: map[string]bool{},
		waiters: map[string]chan *jsonrpc.Response{}, idPrefix: "warden-" + hex.EncodeToString(nonce[:]) + "-",
		late: map[string]bool{}, progress: map[string]string{}, callPrefix: "mcp-" + hex.EncodeToString(nonce[:]) + "-"}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.cancel = cancel
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-ctx.Done()
		client.Close()
		var exit *exec.ExitError
		if err := upstream.Close(); err != nil && !errors.As(err, &exit) {
			r.logf("end the upstream server: %v", err)
		}
	}()
	upDone := make(chan struct{})
	go func() {
		defer close(upDone)
		r.fromUpstream(ctx)
	}()
	err := r.fromClient(ctx)
	cancel()
	<-upDone
	r.asking.Wait()
	r.mu.Lock()
	r.ending = true
	r.mu.Unlock()
	r.timing.Wait()
	<-closed
	r.mu.Lock()
	for _, q := range r.inflight {
		if q.timer != nil {
			q.timer.Stop()
		}
	}
	r.mu.Unlock()
	return err
}

// toClient writes msg to the client. A client that cannot be written to
// is gone: the run ends.
func (r *run) toClient(ctx context.Context, msg jsonrpc.Message) {
	if err := r.client.Write(ctx, msg); err != nil && ctx.Err() == nil {
		r.logf("write to client: %v; the client is gone, the proxy stops", err)
		r.cancel()
	}
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (r *run) logf(format string, args ...any) {
	if r.p.Log != nil {
		fmt.Fprintf(r.p.Log, "warden mcp proxy: "+format+"\n", args...)
	}
}

// fromClient reads the client's messages and forwards, decides or answers
// them.
func (r *run) fromClient(ctx context.Context) error {
	for {
		msg, err := r.client.Read(ctx)
		var long *TooLongError
		if errors.As(err, &long) && ctx.Err() == nil {
			// A LineConn without Answer: the line is answered here, and
			// the next one read.
			if lc, ok := r.client.(*LineConn); ok {
				if err := lc.answerTooLong(long); err != nil {
					return fmt.Errorf("write to client: %w", err)
				}
			} else {
				r.logf("dropped a client message: %v", long)
			}
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read from client: %w", err)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && r.answered(resp) {
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		if ok && !req.ID.IsValid() && req.Method == "tools/call" {
			// A call sent as a notification: it has no answer to carry a
			// decision, and a server that ran it would run it ungoverned.
			r.logf("dropped a tools/call without an id (a notification): a call needs an id to be decided and answered")
			continue
		}
		if !ok || !req.ID.IsValid() {
			// A response to the upstream's request, or a notification
			// (initialized, cancelled, progress, roots changed).
			r.forward(ctx, msg)
			continue
		}
		key := idKey(req.ID)
		r.mu.Lock()
		dup, late := r.busy[key], r.late[key]
		if !dup && !late {
			r.busy[key] = true
		}
		r.mu.Unlock()
		if dup || late {
			// JSON-RPC: an ID names one request until it is answered.
			r.logf("refused a %s request with the id %v of a request not yet answered", req.Method, req.ID.Raw())
			why := " is in use by a request not yet answered"
			if late {
				why = " was used by a request that the upstream server did not answer in time, and the server may still answer it"
			}
			r.toClient(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "warden mcp proxy: the request id " + fmt.Sprint(req.ID.Raw()) + why + "; give each request an id of its own"}})
			continue
		}
		switch req.Method {
		case "initialize":
			var params struct {
				Capabilities struct {
					Elicitation json.RawMessage `json:"elicitation"`
				} `json:"capabilities"`
			}
			json.Unmarshal(req.Params, &params)
			e := strings.TrimSpace(string(params.Capabilities.Elicitation))
			r.mu.Lock()
			r.initID, r.clientElicits = idKey(req.ID), e != "" && e != "null"
			r.mu.Unlock()
		case "tools/call":
			v, stop := r.decide(ctx, req, "")
			if !stop {
				r.send(ctx, req, v.Decision.Warnings)
				continue
			}
			r.mu.Lock()
			elicit := r.elicit
			r.mu.Unlock()
			if a, ok := r.p.Gate.(Answerer); ok && elicit && v.Decision.Decision == warden.Ask && v.Approval != "" {
				r.asking.Go(func() { r.askUser(ctx, a, req, v) })
			} else {
				r.reply(ctx, req.ID, toolError(v.Decision), nil)
			}
			continue
		}
		r.send(ctx, req, nil)
	}
}

// send forwards a client's request upstream, or answers it when the
// upstream is gone.
func (r *run) send(ctx context.Context, req *jsonrpc.Request, warnings []string) {
	key := idKey(req.ID)
	r.mu.Lock()
	gone := r.gone
	if gone == nil {
		q := pending{id: req.ID, method: req.Method, tool: r.callTool(req), warnings: warnings}
		if d := r.p.CallTimeout; d > 0 {
			r.seq++
			q.seq, q.start, q.progress = r.seq, time.Now(), progressToken(req.Params)
			if q.progress != "" {
				r.progress[q.progress] = key
			}
			seq := q.seq
			q.timer = time.AfterFunc(d, func() { r.timedOut(ctx, key, seq) })
		}
		r.inflight[key] = q
	}
	r.mu.Unlock()
	if gone != nil {
		r.failRequest(ctx, req.ID, req.Method, gone)
		return
	}
	if err := r.upstream.Write(ctx, req); err != nil {
		r.upstreamGone(ctx, fmt.Errorf("write to the upstream server: %w", err))
	}
}

// answered delivers a client's response to one of the proxy's own
// requests, and reports whether it was one.
func (r *run) answered(resp *jsonrpc.Response) bool {
	if !resp.ID.IsValid() {
		return false
	}
	r.mu.Lock()
	ch, ok := r.waiters[idKey(resp.ID)]
	delete(r.waiters, idKey(resp.ID))
	r.mu.Unlock()
	if ok {
		ch <- resp
	}
	return ok
}

// askUser puts an ask to the user through MCP elicitation, records the
// answer, and decides the call again: an approved call goes upstream.
// Without an answer (the user cancelled, the wait ran out, the client
// failed) the call is answered as the ask it was, its approval queued.
func (r *run) askUser(ctx context.Context, a Answerer, req *jsonrpc.Request, v Verdict) {
	approve, message, ok := r.elicitAnswer(ctx, req, v)
	if !ok {
		r.reply(ctx, req.ID, toolError(v.Decision), nil)
		return
	}
	if err := a.Answer(ctx, v.Approval, approve, message); err != nil {
		r.logf("answer approval %s: %v", v.Approval, err)
		r.reply(ctx, req.ID, toolError(v.Decision), nil)
		return
	}
	v, stop := r.decide(ctx, req, "answered")
	if stop {
		r.reply(ctx, req.ID, toolError(v.Decision), nil)
		return
	}
	r.send(ctx, req, v.Decision.Warnings)
}

// elicitAnswer asks the user in the client whether the call may run.
func (r *run) elicitAnswer(ctx context.Context, req *jsonrpc.Request, v Verdict) (approve bool, message string, ok bool) {
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(req.Params, &params)
	args := map[string]any{}
	json.Unmarshal(params.Arguments, &args)
	argText, _ := json.Marshal(warden.RedactArgsCut(args, 200))
	text := "warden: the agent wants to call " + r.p.ToolName(params.Name) + " with " + string(argText) + ".\n" +
		"Why you are asked: " + strings.TrimSpace(strings.SplitN(v.Decision.Reason, " Approval ", 2)[0]) + "\n" +
		"Approve this one call (approval " + v.Approval + ")?"
	body, err := json.Marshal(map[string]any{
		"mode":    "form",
		"message": text,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Approve this call once", "default": false},
				"note":    map[string]any{"type": "string", "title": "Note for the agent (optional)"},
			},
			"required": []string{"approve"},
		},
	})
	if err != nil {
		return false, "", false
	}
	r.mu.Lock()
	r.nextID++
	id, _ := jsonrpc.MakeID(fmt.Sprintf("%selicit-%d", r.idPrefix, r.nextID))
	ch := make(chan *jsonrpc.Response, 1)
	r.waiters[idKey(id)] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiters, idKey(id))
		r.mu.Unlock()
	}()
	if err := r.client.Write(ctx, &jsonrpc.Request{ID: id, Method: "elicitation/create", Params: body}); err != nil {
		r.logf("elicitation: %v", err)
		if ctx.Err() == nil {
			r.cancel() // the client is gone
		}
		return false, "", false
	}
	timer := time.NewTimer(ElicitTimeout)
	defer timer.Stop()
	var resp *jsonrpc.Response
	select {
	case resp = <-ch:
	case <-timer.C:
		return false, "", false
	case <-ctx.Done():
		return false, "", false
	}
	if resp.Error != nil {
		r.logf("elicitation: the client answered with an error: %v", resp.Error)
		return false, "", false
	}
	var res struct {
		Action  string `json:"action"`
		Content struct {
			Approve bool   `json:"approve"`
			Note    string `json:"note"`
		} `json:"content"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return false, "", false
	}
	switch res.Action {
	case "accept":
		return res.Content.Approve, res.Content.Note, true
	case "decline":
		return false, "The user declined the call in the MCP client.", true
	}
	return false, "", false
}

// forward sends a client message that needs no answer upstream.
func (r *run) forward(ctx context.Context, msg jsonrpc.Message) {
	r.mu.Lock()
	gone := r.gone
	r.mu.Unlock()
	if gone != nil {
		return
	}
	if err := r.upstream.Write(ctx, msg); err != nil {
		r.upstreamGone(ctx, fmt.Errorf("write to the upstream server: %w", err))
	}
}

// decide decides a tools/call; stop reports that it must not go upstream,
// and d is then the decision to answer with. again names a second
// decision of the same request (after the user's answer), which gets a
// call id of its own.
func (r *run) decide(ctx context.Context, req *jsonrpc.Request, again string) (v Verdict, stop bool) {
	// The outcome of the call answered last goes into this decision.
	r.mu.Lock()
	recording := r.recording
	r.mu.Unlock()
	if recording != nil {
		select {
		case <-recording:
		case <-ctx.Done():
			return Verdict{Decision: warden.FailClosed(ctx.Err())}, true
		}
	}
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := onereading.Check(req.Params); err != nil {
		d := refusal("the parameters of the tools/call request can be read in more than one way ("+err.Error()+
			"), so warden cannot tell which call the server would run",
			"Send each key of the parameters and of the arguments once, spelled as the tool's schema spells it.")
		d.Code = warden.CodeBadInput
		return Verdict{Decision: d}, true
	}
	if err := json.Unmarshal(req.Params, &params); err != nil || params.Name == "" {
		return Verdict{Decision: refusal("the tools/call request has no tool name or its parameters are not valid JSON",
			"Send tools/call with params {\"name\": TOOL, \"arguments\": {...}}.")}, true
	}
	args := map[string]any{}
	if a := strings.TrimSpace(string(params.Arguments)); a != "" && a != "null" {
		if err := json.Unmarshal(params.Arguments, &args); err != nil {
			return Verdict{Decision: refusal("the arguments of "+params.Name+" are not a JSON object",
				"Pass the tool's arguments as a JSON object.")}, true
		}
	}
	sum := sha256.Sum256([]byte(idKey(req.ID) + "\x00" + again))
	ctx = withCallID(ctx, r.callPrefix+hex.EncodeToString(sum[:8]))
	v, err := r.p.Gate.Decide(ctx, warden.ToolCall{Tool: r.p.ToolName(params.Name), Args: args})
	if err != nil {
		r.logf("decide %s: %v", params.Name, err)
		if v.Decision.Decision == warden.Allow || v.Decision.Decision == "" {
			v.Decision = warden.FailClosed(err)
		}
	}
	return v, v.Decision.Decision != warden.Allow
}

// refusal is the deny for a request warden cannot read.
func refusal(reason, suggestion string) warden.Decision {
	return warden.Decision{Decision: warden.Deny, Code: warden.CodeUnknownTarget, Reason: reason,
		Suggestion: suggestion, Recoverable: true, Warnings: []string{}, Matched: []string{}}
}

// MetaKey is the key of warden's decision in the _meta of a tool error the
// proxy answers with.
const MetaKey = "run.warden/decision"

// toolError is the tools/call result for a call warden did not let through:
// an MCP tool error (isError), so the model reads why and what to do.
func toolError(d warden.Decision) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: Text(d)}}}
	res.Meta = mcp.Meta{MetaKey: d}
	return res
}

// Text is a decision as the model reads it in a tool error: plain text that
// says what happened, why, and what to do.
func Text(d warden.Decision) string {
	return strings.TrimSpace("warden " + strings.TrimPrefix(d.Text(), "## "))
}

// reply answers a client's request, with a result or an error.
func (r *run) reply(ctx context.Context, id jsonrpc.ID, result any, rerr error) {
	r.mu.Lock()
	delete(r.busy, idKey(id))
	r.mu.Unlock()
	resp := &jsonrpc.Response{ID: id, Error: rerr}
	if rerr == nil {
		data, err := json.Marshal(result)
		if err != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "warden: encode the answer: " + err.Error()}
		} else {
			resp.Result = data
		}
	}
	r.toClient(ctx, resp)
}

// failRequest answers a request the upstream cannot answer any more.
func (r *run) failRequest(ctx context.Context, id jsonrpc.ID, method string, why error) {
	if method == "tools/call" {
		r.reply(ctx, id, toolError(upstreamDown(r.p.Name, why)), nil)
		return
	}
	r.reply(ctx, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: "warden mcp proxy: the upstream MCP server " + r.p.Name + " is gone: " + why.Error()})
}

// upstreamDown is the deny for a call the upstream server cannot take.
func upstreamDown(name string, why error) warden.Decision {
	return warden.Decision{Decision: warden.Deny, Code: warden.CodePolicyError,
		Reason: "the MCP server " + name + " behind warden's proxy is gone (" + why.Error() +
			"); a call that was under way may or may not have run.",
		Suggestion:  "Tell the user that the MCP server " + name + " stopped; restart the client or the server, then check whether the call ran before retrying it.",
		Recoverable: false, Warnings: []string{}, Matched: []string{}}
}

// upstreamGone records that the upstream is gone and answers every request
// it still owed.
func (r *run) upstreamGone(ctx context.Context, why error) {
	r.mu.Lock()
	if r.gone != nil {
		r.mu.Unlock()
		return
	}
	r.gone = why
	var owed []pending
	for key := range r.inflight {
		q, _ := r.take(key)
		owed = append(owed, q)
	}
	r.mu.Unlock()
	r.logf("%v", why)
	for _, q := range owed {
		r.failRequest(ctx, q.id, q.method, why)
	}
}

// fromUpstream reads the upstream's messages and passes them to the
// client, filtering tools/list results.
func (r *run) fromUpstream(ctx context.Context) {
	for {
		msg, err := r.upstream.Read(ctx)
		var long *TooLongError
		if errors.As(err, &long) && ctx.Err() == nil {
			r.upstreamTooLong(ctx, long)
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("it closed the connection (the server exited)")
			}
			r.upstreamGone(ctx, err)
			return
		}
		var recorded chan struct{}
		var outTool string
		var outOK bool
		if req, ok := msg.(*jsonrpc.Request); ok && !req.ID.IsValid() && req.Method == "notifications/progress" {
			r.progressed(req.Params)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
			r.mu.Lock()
			key := idKey(resp.ID)
			q, mine := r.take(key)
			if mine {
				delete(r.busy, key)
			}
			late := !mine && r.late[key]
			delete(r.late, key)
			r.mu.Unlock()
			if late {
				r.logf("dropped the upstream's late answer to id %v: warden answered the request when the server did not answer in time", resp.ID.Raw())
				continue
			}
			if !mine {
				// The client sent no such request, or warden answers it
				// (a call it stopped, or is putting to the user): an
				// answer from the server would speak for warden.
				r.logf("dropped the upstream's answer to id %v: no request of the client with this id is waiting for the server", resp.ID.Raw())
				continue
			}
			if mine && q.method == "tools/list" && resp.Error == nil {
				resp.Result = r.filterTools(ctx, resp.Result)
			}
			if mine && q.tool != "" {
				// Announced before the client can see the answer, so
				// that no decision starts before the outcome is in.
				recorded = r.startRecording()
				outTool, outOK = q.tool, passed(resp)
			}
			if mine && q.method == "tools/call" && resp.Error == nil && len(q.warnings) > 0 {
				resp.Result = withGuidance(resp.Result, q.warnings)
			}
			if mine && q.method == "initialize" && resp.Error == nil {
				var res struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				json.Unmarshal(resp.Result, &res)
				r.mu.Lock()
				if r.initID == key {
					// From 2026-07-28 a server may not send elicitation/create.
					r.elicit = r.clientElicits && res.ProtocolVersion != "" && res.ProtocolVersion < "2026-07-28"
				}
				r.mu.Unlock()
			}
		}
		r.toClient(ctx, msg)
		if recorded != nil {
			r.outcome(ctx, outTool, outOK)
			close(recorded)
		}
	}
}

// take removes the request with the ID key from those in flight, with its
// timer and progress token, and returns it. The caller holds r.mu.
func (r *run) take(key string) (pending, bool) {
	q, ok := r.inflight[key]
	if !ok {
		return q, false
	}
	delete(r.inflight, key)
	if q.timer != nil {
		q.timer.Stop()
	}
	if q.progress != "" && r.progress[q.progress] == key {
		delete(r.progress, q.progress)
	}
	return q, true
}

// startRecording announces that the outcome of a call is being recorded:
// the next decision waits until the returned channel is closed, which the
// caller does once it is recorded. An earlier recording still under way
// is waited for first.
func (r *run) startRecording() chan struct{} {
	recorded := make(chan struct{})
	r.mu.Lock()
	prev := r.recording
	r.recording = recorded
	r.mu.Unlock()
	if prev == nil {
		return recorded
	}
	mine := make(chan struct{})
	go func() {
		<-mine
		<-prev
		close(recorded)
	}()
	return mine
}

// timedOut answers the request with the ID key, sent as seq, when the
// upstream has not answered it within CallTimeout: with a JSON-RPC error
// that says so; the upstream is asked to cancel it, and a failed outcome
// is recorded for a tools/call.
func (r *run) timedOut(ctx context.Context, key string, seq int) {
	if ctx.Err() != nil {
		return
	}
	r.mu.Lock()
	q, ok := r.inflight[key]
	if !ok || q.seq != seq || r.ending {
		r.mu.Unlock()
		return
	}
	r.take(key)
	r.late[key] = true
	r.timing.Add(1)
	defer r.timing.Done()
	r.mu.Unlock()
	var recorded chan struct{}
	if q.tool != "" {
		recorded = r.startRecording()
	}
	waited := time.Since(q.start).Round(time.Second)
	what := "the " + q.method + " request"
	if q.tool != "" {
		what = "the call of " + q.tool
	}
	r.logf("%s (id %v) got no answer from the upstream server in %v: answered with an error, and the server asked to cancel it", what, q.id.Raw(), waited)
	r.reply(ctx, q.id, nil, &jsonrpc.Error{Code: CodeRequestTimeout, Message: "warden mcp proxy: the MCP server " + r.p.Name +
		" did not answer " + what + " within " + waited.String() + " (the proxy's --call-timeout is " + r.p.CallTimeout.String() +
		"), so warden stopped waiting and asked the server to cancel it. It may or may not have run, and may still finish. " +
		"Check whether it took effect before you retry it; if the work is slow by nature, do it in smaller steps, or ask the user to raise --call-timeout."})
	if q.method != "initialize" { // the initialize request may not be cancelled
		params, _ := json.Marshal(map[string]any{"requestId": q.id.Raw(),
			"reason": "warden mcp proxy: no answer within " + r.p.CallTimeout.String() + " (--call-timeout); the client was answered with an error"})
		r.forward(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
	}
	if recorded != nil {
		r.outcome(ctx, q.tool, false)
		close(recorded)
	}
}

// progressToken is the progress token of a request's params, as a key
// ("" for none).
func progressToken(params json.RawMessage) string {
	if !bytes.Contains(params, []byte(`"progressToken"`)) {
		return "" // most requests: no second reading of the parameters
	}
	var p struct {
		Meta struct {
			Token any `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta.Token == nil {
		return ""
	}
	return fmt.Sprintf("%T:%v", p.Meta.Token, p.Meta.Token)
}

// progressed starts the wait for the request a progress notification of
// the upstream is about again: the server is at work on it. The wait is
// bounded by 10 times CallTimeout from the request.
func (r *run) progressed(params json.RawMessage) {
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) != nil || p.Token == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.inflight[r.progress[fmt.Sprintf("%T:%v", p.Token, p.Token)]]
	if !ok || q.timer == nil {
		return
	}
	if left := 10*r.p.CallTimeout - time.Since(q.start); left > 0 {
		q.timer.Reset(min(r.p.CallTimeout, left))
	}
}

// upstreamTooLong answers the request a message of the upstream over
// MaxLine answered, when its id could be read, with an error that says
// so; a failed outcome is recorded for a tools/call. The connection reads
// on.
func (r *run) upstreamTooLong(ctx context.Context, long *TooLongError) {
	var q pending
	var mine bool
	if long.ID.IsValid() {
		key := idKey(long.ID)
		r.mu.Lock()
		if q, mine = r.take(key); mine {
			delete(r.busy, key)
		} else {
			delete(r.late, key)
		}
		r.mu.Unlock()
	}
	if !mine {
		r.logf("dropped a message of the upstream server: %v; no request waiting for the server has its id", long)
		return
	}
	var recorded chan struct{}
	if q.tool != "" {
		recorded = r.startRecording()
	}
	what := "the " + q.method + " request"
	if q.tool != "" {
		what = "the call of " + q.tool
	}
	r.logf("the upstream's answer to %s (id %v) was dropped: %v", what, q.id.Raw(), long)
	r.reply(ctx, q.id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "warden mcp proxy: the MCP server " + r.p.Name +
		" answered " + what + " with " + long.Error() + ", so warden dropped the answer. The server did the work (or failed at it), but its answer cannot be passed on. " +
		"Ask for less in one call: a narrower query, a smaller range or page, or output written to a file instead of returned inline."})
	if recorded != nil {
		r.outcome(ctx, q.tool, false)
		close(recorded)
	}
}

// callTool is the tool a tools/call request calls, as calls are decided
// ("" for another request, or one without a tool name).
func (r *run) callTool(req *jsonrpc.Request) string {
	if req.Method != "tools/call" {
		return ""
	}
	var params struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(req.Params, &params) != nil || params.Name == "" {
		return ""
	}
	return r.p.ToolName(params.Name)
}

// passed reports that the upstream's answer to a tools/call is a success:
// neither a JSON-RPC error nor a tool error (isError).
func passed(resp *jsonrpc.Response) bool {
	var res struct {
		IsError bool `json:"isError"`
	}
	return resp.Error == nil && json.Unmarshal(resp.Result, &res) == nil && !res.IsError
}

// outcome gives the Gate, when it records outcomes, what a call did: also
// when the run is ending (the client may go right after it read the
// answer), and Run waits for it.
func (r *run) outcome(ctx context.Context, tool string, ok bool) {
	o, is := r.p.Gate.(Outcomer)
	if !is {
		return
	}
	if err := o.Outcome(context.WithoutCancel(ctx), tool, ok); err != nil {
		r.logf("record the outcome of %s: %v", tool, err)
	}
}

// withGuidance adds to a tool's result what the hooks add after a call
// that ran but broke a rule that only warns: the warnings, for the model.
// A result it cannot read is left as it is.
func withGuidance(result json.RawMessage, warnings []string) json.RawMessage {
	var res map[string]json.RawMessage
	var content []json.RawMessage
	if json.Unmarshal(result, &res) != nil || json.Unmarshal(res["content"], &content) != nil {
		return result
	}
	var b strings.Builder
	b.WriteString("warden GUIDANCE: the call you just made ran, but it broke the project's policy:\n")
	for _, w := range warnings {
		b.WriteString("- " + w + "\n")
	}
	b.WriteString("Follow the policy from now on.")
	text, err := json.Marshal(&mcp.TextContent{Text: b.String()})
	if err != nil {
		return result
	}
	res["content"], _ = json.Marshal(append(content, text))
	out, err := json.Marshal(res)
	if err != nil {
		return result
	}
	return out
}

// filterTools drops the hidden tools from a tools/list result, keeping
// everything else of it as the upstream sent it. A result it cannot read
// loses every tool.
func (r *run) filterTools(ctx context.Context, result json.RawMessage) json.RawMessage {
	var res map[string]json.RawMessage
	var tools []json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		r.logf("tools/list: unreadable result: %v", err)
		return json.RawMessage(`{"tools":[]}`)
	}
	if err := json.Unmarshal(res["tools"], &tools); err != nil {
		r.logf("tools/list: unreadable tools: %v", err)
		tools = nil
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		var tool struct {
			Name string `json:"name"`
		}
		json.Unmarshal(t, &tool)
		names[i] = r.p.ToolName(tool.Name)
	}
	hidden, err := r.p.Gate.Hidden(ctx, names)
	if err != nil {
		r.logf("tools/list: %v; every tool is hidden", err)
	}
	kept := make([]json.RawMessage, 0, len(tools))
	for i, t := range tools {
		if err == nil && !hidden[names[i]] {
			kept = append(kept, t)
		}
	}
	res["tools"], _ = json.Marshal(kept)
	out, merr := json.Marshal(res)
	if merr != nil {
		return json.RawMessage(`{"tools":[]}`)
	}
	return out
}
