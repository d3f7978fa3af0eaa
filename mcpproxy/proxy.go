// Package mcpproxy is warden's governing MCP proxy: an MCP server to its
// client and an MCP client to one upstream server. It passes every message
// through as it is, except two: each tools/call is decided by a Gate first
// (a deny or an ask is answered by the proxy as an MCP tool error, and the
// upstream never sees the call), and each tools/list result loses the tools
// the Gate hides. Resources, prompts, notifications, cancellation, progress
// and the server's own requests to the client (roots, sampling,
// elicitation) pass through untouched.
//
// The proxy works on JSON-RPC messages over the MCP Go SDK's transports
// (mcp.Connection), so it needs to understand nothing else of the protocol,
// and any protocol version the two ends agree on passes through it.
package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warden-run/warden"
)

// Gate decides the tool calls that pass through the proxy.
//
// Implementations must be safe for concurrent use.
type Gate interface {
	// Decide decides one call. A non-nil error is an infrastructure
	// failure (the store did not answer); the decision returned with it
	// must then be a deny that says so (warden.FailClosed). The call is
	// forwarded only on an allow.
	Decide(ctx context.Context, call warden.ToolCall) (warden.Decision, error)
	// Hidden returns the subset of the tools (named as in calls,
	// mcp__SERVER__TOOL) that the client must not see in tools/list: the
	// tools its role may not use. An error hides every tool.
	Hidden(ctx context.Context, tools []string) (map[string]bool, error)
}

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
}

// ToolName is the name a call of the upstream tool tool is decided as.
func (p *Proxy) ToolName(tool string) string { return "mcp__" + p.Name + "__" + tool }

// pending is a client request forwarded upstream.
type pending struct {
	id     jsonrpc.ID
	method string
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
	// gone is why the upstream is gone (nil while it is up).
	gone error
}

// Run proxies between client and upstream until the client goes away (it
// returns nil on a clean end of input) or ctx is done. It closes both
// connections before it returns.
//
// When the upstream goes away first, every request it has not answered is
// answered with the reason (a tools/call as a tool error), and so is every
// later request, until the client goes away: a failure is never an allow.
func (p *Proxy) Run(ctx context.Context, client, upstream mcp.Connection) error {
	if p.Gate == nil {
		panic("mcpproxy: Proxy.Gate is nil")
	}
	r := &run{p: p, client: client, upstream: upstream, inflight: map[string]pending{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		client.Close()
		upstream.Close()
	}()
	upDone := make(chan struct{})
	go func() {
		defer close(upDone)
		r.fromUpstream(ctx)
	}()
	err := r.fromClient(ctx)
	cancel()
	<-upDone
	return err
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
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read from client: %w", err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			// A response to the upstream's request, or a notification
			// (initialized, cancelled, progress, roots changed).
			r.forward(ctx, msg)
			continue
		}
		if req.Method == "tools/call" {
			if d, stop := r.decide(ctx, req); stop {
				r.reply(ctx, req.ID, toolError(d), nil)
				continue
			}
		}
		r.mu.Lock()
		gone := r.gone
		if gone == nil {
			r.inflight[idKey(req.ID)] = pending{req.ID, req.Method}
		}
		r.mu.Unlock()
		if gone != nil {
			r.failRequest(ctx, req.ID, req.Method, gone)
			continue
		}
		if err := r.upstream.Write(ctx, req); err != nil {
			r.upstreamGone(ctx, fmt.Errorf("write to the upstream server: %w", err))
		}
	}
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
// and d is then the decision to answer with.
func (r *run) decide(ctx context.Context, req *jsonrpc.Request) (d warden.Decision, stop bool) {
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &params); err != nil || params.Name == "" {
		return refusal("the tools/call request has no tool name or its parameters are not valid JSON",
			"Send tools/call with params {\"name\": TOOL, \"arguments\": {...}}."), true
	}
	args := map[string]any{}
	if a := strings.TrimSpace(string(params.Arguments)); a != "" && a != "null" {
		if err := json.Unmarshal(params.Arguments, &args); err != nil {
			return refusal("the arguments of "+params.Name+" are not a JSON object",
				"Pass the tool's arguments as a JSON object."), true
		}
	}
	d, err := r.p.Gate.Decide(ctx, warden.ToolCall{Tool: r.p.ToolName(params.Name), Args: args})
	if err != nil {
		r.logf("decide %s: %v", params.Name, err)
		if d.Decision == warden.Allow || d.Decision == "" {
			d = warden.FailClosed(err)
		}
	}
	return d, d.Decision != warden.Allow
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
	resp := &jsonrpc.Response{ID: id, Error: rerr}
	if rerr == nil {
		data, err := json.Marshal(result)
		if err != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "warden: encode the answer: " + err.Error()}
		} else {
			resp.Result = data
		}
	}
	if err := r.client.Write(ctx, resp); err != nil {
		r.logf("write to client: %v", err)
	}
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
	owed := r.inflight
	r.inflight = map[string]pending{}
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
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
			r.mu.Lock()
			key := idKey(resp.ID)
			q, mine := r.inflight[key]
			delete(r.inflight, key)
			r.mu.Unlock()
			if mine && q.method == "tools/list" && resp.Error == nil {
				resp.Result = r.filterTools(ctx, resp.Result)
			}
		}
		if err := r.client.Write(ctx, msg); err != nil {
			r.logf("write to client: %v", err)
		}
	}
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
