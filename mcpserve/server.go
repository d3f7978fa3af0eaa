// Package mcpserve is warden's own MCP server (warden mcp serve): the
// intent handshake (select_active_intent; docs/policy.md, Intents), a check of whether a
// call would be allowed, a request for a human's approval ahead of a call,
// and the project's anchors.
//
// Every call of its tools is itself decided and audited by the session
// layer, as mcp__warden__TOOL, like any other call: the check and approval
// tools answer questions and queue work for a human, and grant nothing by
// themselves. On a host with hooks, the host's hook decides the same call
// first in the host's session (where the session layer selects the intent,
// see session.SelectsIntent); run without hooks, the server's own session
// keeps the intent.
//
// Stability: this package is internal to warden in spirit. Its API serves
// `warden mcp serve` and changes with it in any release.
package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

// Name is the server's name in the hosts' MCP configs (warden init): its
// tools are mcp__warden__TOOL to Claude Code and Codex, mcp_warden_TOOL to
// Gemini CLI and warden_TOOL to OpenCode.
const Name = "warden"

// The server's tools.
const (
	ToolSelectIntent    = "select_active_intent"
	ToolCheckCall       = "check_call"
	ToolRequestApproval = "request_approval"
	ToolListAnchors     = "list_anchors"
	ToolAddAnchor       = "add_anchor"
)

// Server serves warden's tools. Its fields are set before New.
type Server struct {
	// Gate decides the calls of the server's own tools, and gives the
	// tracker and the policy the tools work with. Its Session is the
	// session of a stdio client, and the prefix of each HTTP client's.
	Gate *mcpproxy.SessionGate
	// PerClient gives each MCP session (each HTTP client) a warden session
	// of its own: Gate.Session + "-" + the MCP session id.
	PerClient bool
	// Version is the server's version in the MCP handshake.
	Version string
}

// New returns the MCP server with warden's tools.
func (s *Server) New() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "warden", Version: s.Version}, &mcp.ServerOptions{
		Instructions: "warden governs this agent's tool calls. Before writing files, select the intent you work on " +
			"with select_active_intent (call it without intent_id to list them). check_call tells whether a call " +
			"would be allowed without making it; request_approval asks a human ahead of a call the policy asks about.",
	})
	yes := true
	mcp.AddTool(srv, &mcp.Tool{Name: ToolSelectIntent, Title: "Select the active intent",
		Description: "Without intent_id: lists the active intents (id, name, status, owned scope). With intent_id: makes that " +
			"intent this session's active intent and returns its context: name, owned scope (the only paths you may write), " +
			"constraints and acceptance criteria. Writes outside the owned scope are refused.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false)}}, s.selectIntent)
	mcp.AddTool(srv, &mcp.Tool{Name: ToolCheckCall, Title: "Check a tool call",
		Description: "Asks warden whether a tool call would be allowed now, without making it and without using any grant: " +
			"returns the decision (allow, ask or deny), its code, reason and suggestion. Name the tool as you call it (Write, " +
			"run_shell_command, mcp__github__create_issue, ...) and give its arguments.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}}, s.checkCall)
	mcp.AddTool(srv, &mcp.Tool{Name: ToolRequestApproval, Title: "Request a human approval",
		Description: "Queues a human approval for a tool call the policy asks about, before you make it, and returns the " +
			"approval's id and the commands a person answers it with. It grants nothing by itself: once a person approved, " +
			"make exactly the same call. A call the policy denies cannot be approved this way.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false)}}, s.requestApproval)
	mcp.AddTool(srv, &mcp.Tool{Name: ToolListAnchors, Title: "List anchors",
		Description: "Lists the project's anchors: facts that survive context compaction, most important first.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}}, s.listAnchors)
	mcp.AddTool(srv, &mcp.Tool{Name: ToolAddAnchor, Title: "Add an anchor",
		Description: "Adds an anchor: a fact about the project that must survive context compaction (priority critical, " +
			"high, normal or low; default normal).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, s.addAnchor)
	return srv
}

// ToolName is a tool of this server as the policy and the audit trail name
// it.
func ToolName(tool string) string { return "mcp__" + Name + "__" + tool }

// gate is the gate for the request's warden session.
func (s *Server) gate(req *mcp.CallToolRequest) *mcpproxy.SessionGate {
	g := *s.Gate
	if s.PerClient && req != nil && req.Session != nil && req.Session.ID() != "" {
		g.Session = s.Gate.Session + "-" + req.Session.ID()
	}
	return &g
}

// own decides the call of one of the server's tools. A refusal is the
// tool's error result.
func (s *Server) own(ctx context.Context, g *mcpproxy.SessionGate, tool string, args map[string]any) *mcp.CallToolResult {
	v, err := g.Decide(ctx, warden.ToolCall{Tool: ToolName(tool), Args: args})
	if err != nil || v.Decision.Decision != warden.Allow {
		return errorResult(mcpproxy.Text(v.Decision))
	}
	return nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: warden.TerminalSafe(text)}}}
}

func errorResult(text string) *mcp.CallToolResult {
	r := textResult(text)
	r.IsError = true
	return r
}

// SelectIntentIn is select_active_intent's input.
type SelectIntentIn struct {
	IntentID string `json:"intent_id,omitempty" jsonschema:"the id of the intent to work on, such as INT-001; leave it out to list the intents"`
}

func (s *Server) selectIntent(ctx context.Context, req *mcp.CallToolRequest, in SelectIntentIn) (*mcp.CallToolResult, any, error) {
	g := s.gate(req)
	args := map[string]any{}
	if in.IntentID != "" {
		args[session.IntentArg] = in.IntentID
	}
	if r := s.own(ctx, g, ToolSelectIntent, args); r != nil {
		return r, nil, nil
	}
	tr, err := g.Current()
	if err != nil {
		return errorResult("warden cannot load the policy: " + err.Error()), nil, nil
	}
	p := tr.Engine.Policy()
	if p.Intents == nil {
		return errorResult("This project's warden policy has no intents section, so there is no intent to select. " +
			"Go on without one, or ask the user to add `intents:` to the policy (docs/policy.md, Intents)."), nil, nil
	}
	list, _, err := policy.ReadIntents(p.Intents.File)
	if err != nil {
		return errorResult("warden cannot read the intents file: " + err.Error() + ". Ask the user to fix it (warden lint names the line)."), nil, nil
	}
	if in.IntentID == "" {
		return textResult(listIntents(list, p.Intents.File)), nil, nil
	}
	for _, it := range list {
		if it.ID == in.IntentID {
			return textResult(IntentContext(it)), nil, nil
		}
	}
	// The session layer denies an id the file does not hold; the file
	// changed between its decision and this read.
	return errorResult(fmt.Sprintf("Intent %q is not in %s. Select one of: %s.", in.IntentID, p.Intents.File, policy.IntentList(list))), nil, nil
}

func listIntents(list []policy.Intent, file string) string {
	if len(list) == 0 {
		return "There are no active intents (" + file + " lists none). Ask the user to add the intent you need."
	}
	var b strings.Builder
	b.WriteString("Active intents (select one with select_active_intent and its intent_id):\n")
	for _, in := range list {
		b.WriteString("- " + in.ID)
		if in.Name != "" {
			b.WriteString(": " + in.Name)
		}
		if in.Status != "" {
			b.WriteString(" [" + in.Status + "]")
		}
		b.WriteString("\n  owned scope: " + scopeText(in.OwnedScope) + "\n")
	}
	return b.String()
}

func scopeText(scope []string) string {
	if len(scope) == 0 {
		return "none (this intent owns no path: every write under it is out of scope)"
	}
	return strings.Join(scope, ", ")
}

// IntentContext is the text the model gets when it selects an intent:
// what it may change and the conditions of the work (docs/policy.md, Intents).
func IntentContext(in policy.Intent) string {
	var b strings.Builder
	b.WriteString("Intent " + in.ID + " is now the active intent of this session.\n\n")
	b.WriteString("id: " + in.ID + "\n")
	if in.Name != "" {
		b.WriteString("name: " + in.Name + "\n")
	}
	if in.Status != "" {
		b.WriteString("status: " + in.Status + "\n")
	}
	b.WriteString("owned scope: " + scopeText(in.OwnedScope) + "\n")
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString(title + ":\n")
		for _, s := range items {
			b.WriteString("- " + s + "\n")
		}
	}
	list("constraints", in.Constraints)
	list("acceptance criteria", in.AcceptanceCriteria)
	b.WriteString("\nWrite only inside the owned scope (patterns starting with ! are excluded); writes elsewhere are refused " +
		"with SCOPE_VIOLATION. To work on something else, select another intent.")
	return b.String()
}

// CallIn is the call check_call and request_approval are about.
type CallIn struct {
	Tool string         `json:"tool" jsonschema:"the tool's name as you call it"`
	Args map[string]any `json:"args,omitempty" jsonschema:"the call's arguments"`
}

func (in CallIn) args() map[string]any {
	return map[string]any{"tool": in.Tool, "args": in.Args}
}

// call is the call the input describes, in the gate's session.
func (in CallIn) call(g *mcpproxy.SessionGate) (warden.ToolCall, error) {
	if strings.TrimSpace(in.Tool) == "" {
		return warden.ToolCall{}, errors.New("give the tool's name in tool, and its arguments in args")
	}
	args := in.Args
	if args == nil {
		args = map[string]any{}
	}
	return warden.ToolCall{Tool: in.Tool, Args: args, Session: g.Session, Role: g.Role, Cwd: g.Cwd, Host: mcpproxy.Host}, nil
}

// about decides the call of tool (check_call, request_approval) and
// returns the call it is about, and the tracker to look at it with; or the
// tool's error result.
func (s *Server) about(ctx context.Context, req *mcp.CallToolRequest, tool string, in CallIn) (*session.Tracker, warden.ToolCall, *mcp.CallToolResult) {
	g := s.gate(req)
	if r := s.own(ctx, g, tool, in.args()); r != nil {
		return nil, warden.ToolCall{}, r
	}
	call, err := in.call(g)
	if err != nil {
		return nil, call, errorResult(tool + ": " + err.Error() + ".")
	}
	tr, err := g.Current()
	if err != nil {
		return nil, call, errorResult("warden cannot load the policy: " + err.Error())
	}
	return tr, call, nil
}

func (s *Server) checkCall(ctx context.Context, req *mcp.CallToolRequest, in CallIn) (*mcp.CallToolResult, any, error) {
	tr, call, r := s.about(ctx, req, ToolCheckCall, in)
	if r != nil {
		return r, nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, mcpproxy.DecideTimeout)
	defer cancel()
	trace, _, _, err := tr.Explain(ctx, call)
	if err != nil {
		return errorResult("warden cannot check the call: " + err.Error()), nil, nil
	}
	d := trace.Decision
	var b strings.Builder
	fmt.Fprintf(&b, "decision: %s\ncode: %s\n", d.Decision, d.Code)
	if d.Reason != "" {
		b.WriteString("reason: " + d.Reason + "\n")
	}
	if d.Rule != "" {
		b.WriteString("rule: " + d.Rule + "\n")
	}
	if d.Suggestion != "" {
		b.WriteString("suggestion: " + d.Suggestion + "\n")
	}
	for _, w := range d.Warnings {
		b.WriteString("warning: " + w + "\n")
	}
	b.WriteString("\nThis was a check: nothing ran and no grant was used.")
	if d.Decision == warden.Ask {
		b.WriteString(" To ask a person ahead of the call, use request_approval with the same tool and args.")
	}
	return textResult(b.String()), nil, nil
}

func (s *Server) requestApproval(ctx context.Context, req *mcp.CallToolRequest, in CallIn) (*mcp.CallToolResult, any, error) {
	tr, call, r := s.about(ctx, req, ToolRequestApproval, in)
	if r != nil {
		return r, nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, mcpproxy.DecideTimeout)
	defer cancel()
	res, err := tr.RequestApproval(ctx, call)
	if err != nil {
		return errorResult("warden cannot queue the approval: " + err.Error()), nil, nil
	}
	d := res.Decision
	switch {
	case d.Decision == warden.Allow:
		return textResult("No approval is needed: the policy allows this call now (" + string(d.Code) + "). Make the call."), nil, nil
	case d.Decision == warden.Deny:
		return errorResult("No approval was queued: the policy denies this call, and an approval cannot change a deny.\n\n" + mcpproxy.Text(d)), nil, nil
	case res.Approval == nil:
		return errorResult(mcpproxy.Text(d)), nil, nil
	case res.Approval.Status != warden.ApprovalPending:
		return textResult(fmt.Sprintf("Approval %s for this call was answered already (%s). Make exactly the same call: the answer reaches it.",
			res.Approval.ID, res.Approval.Status)), nil, nil
	}
	return textResult(fmt.Sprintf("approval: %s\nstatus: pending\n\nA person answers it from the project folder with one of: %s.\n"+
		"Nothing is granted until they do. Once approved, make exactly the same call.",
		res.Approval.ID, session.AnswerCommands(res.Approval.ID))), nil, nil
}

func (s *Server) listAnchors(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	g := s.gate(req)
	if r := s.own(ctx, g, ToolListAnchors, map[string]any{}); r != nil {
		return r, nil, nil
	}
	st, err := g.Tracker.Store.State(ctx)
	if err != nil {
		return errorResult("warden cannot read the anchors: " + err.Error()), nil, nil
	}
	if len(st.Anchors) == 0 {
		return textResult("There are no anchors."), nil, nil
	}
	var b strings.Builder
	for _, a := range st.Anchors {
		fmt.Fprintf(&b, "%s [%s] %s\n", a.ID, strings.ToUpper(string(a.Priority)), a.Content)
	}
	return textResult(b.String()), nil, nil
}

// AnchorIn is add_anchor's input.
type AnchorIn struct {
	Text     string `json:"text" jsonschema:"the fact to keep"`
	Priority string `json:"priority,omitempty" jsonschema:"critical, high, normal (default) or low"`
}

func (s *Server) addAnchor(ctx context.Context, req *mcp.CallToolRequest, in AnchorIn) (*mcp.CallToolResult, any, error) {
	g := s.gate(req)
	args := map[string]any{"text": in.Text}
	if in.Priority != "" {
		args["priority"] = in.Priority
	}
	if r := s.own(ctx, g, ToolAddAnchor, args); r != nil {
		return r, nil, nil
	}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return errorResult("add_anchor: give the fact to keep in text."), nil, nil
	}
	prio := in.Priority
	if prio == "" {
		prio = "normal"
	}
	p, err := warden.ParsePriority(prio)
	if err != nil {
		return errorResult("add_anchor: priority: " + err.Error() + "."), nil, nil
	}
	tr, err := g.Current()
	if err != nil {
		return errorResult("warden cannot load the policy: " + err.Error()), nil, nil
	}
	a, err := session.AddAnchor(ctx, tr.Store, warden.Anchor{Priority: p, Content: warden.RedactString(text)}, session.Limits(tr.Engine.Policy()), time.Now())
	if err != nil {
		return errorResult("add_anchor: " + err.Error()), nil, nil
	}
	return textResult(fmt.Sprintf("Added anchor %s [%s] %s", a.ID, strings.ToUpper(string(a.Priority)), a.Content)), nil, nil
}
