package remote

import (
	"context"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/wire"
)

// MCPGate is the gate of `warden mcp proxy --serve URL`: the service
// decides every tools/call of the session (and records it, also when it
// cannot decide it) and says which tools its role may not see.
type MCPGate struct {
	Client             *Client
	Session, Role, Cwd string
}

// Decide implements mcpproxy.Gate. A call the proxy gave an id
// (mcpproxy.CallID) is sent with it: a retried request is not decided
// twice.
func (g *MCPGate) Decide(ctx context.Context, call warden.ToolCall) (mcpproxy.Verdict, error) {
	call.Session, call.Cwd, call.Host = g.Session, g.Cwd, mcpproxy.Host
	if call.Role == "" {
		call.Role = g.Role
	}
	ctx, cancel := context.WithTimeout(ctx, mcpproxy.DecideTimeout)
	defer cancel()
	resp, err := g.Client.DecideWith(ctx, call, wire.DecideRequest{CallID: mcpproxy.CallID(ctx)})
	v := mcpproxy.Verdict{Decision: resp.Decision}
	if err == nil && resp.Decision.Decision == warden.Ask && resp.Approval != nil && resp.Approval.Status == warden.ApprovalPending {
		v.Approval = resp.Approval.ID
	}
	return v, err
}

// Hidden implements mcpproxy.Gate (an error hides every tool).
func (g *MCPGate) Hidden(ctx context.Context, tools []string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, mcpproxy.DecideTimeout)
	defer cancel()
	list, err := g.Client.Hidden(ctx, wire.HiddenRequest{Tools: tools, Role: g.Role, Session: g.Session, Cwd: g.Cwd})
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, t := range list {
		m[t] = true
	}
	return m, nil
}

var _ mcpproxy.Gate = (*MCPGate)(nil)
