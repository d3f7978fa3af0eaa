package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/session"
)

// Host is the host name the proxy's calls carry into sessions and audit
// records.
const Host = "mcp"

// DecideTimeout bounds one decision: a store that does not answer within
// it gives a deny.
const DecideTimeout = 10 * time.Second

// SessionGate decides calls with warden's session layer, as the hooks do:
// the session's state, grants, approvals (an ask is queued for a human and
// answered with how to approve it) and one audit record per call.
// It is safe for concurrent use.
type SessionGate struct {
	Tracker *session.Tracker
	// Engine, when set, returns the compiled policy to decide with, for
	// each call and each tools/list (so that a policy edited while the
	// proxy runs takes effect); it replaces Tracker.Engine. An error is a
	// deny (and hides every tool).
	Engine func() (session.Engine, error)
	// Session is the session the calls belong to.
	Session string
	// Role is the role of a new session (a stored session keeps its own).
	Role string
	// Cwd is what relative paths in the arguments are resolved against
	// ("": the policy's workspace root).
	Cwd string
	// Agent is who sends the calls (session.Options.Agent): "" locally.
	Agent string
}

// Decide implements Gate. An ask queues an approval (or meets a human's
// answer to an identical call) and comes back as an ask that names the
// approval and the commands that answer it.
func (g *SessionGate) Decide(ctx context.Context, call warden.ToolCall) (Verdict, error) {
	call.Session, call.Cwd, call.Host = g.Session, g.Cwd, Host
	if call.Role == "" {
		call.Role = g.Role
	}
	ctx, cancel := context.WithTimeout(ctx, DecideTimeout)
	defer cancel()
	// The gate decides, fails closed and records: a policy that stopped
	// loading, a store that failed or a decision that ran out of time is
	// a deny on record, and a request retried under its id (CallID) gets
	// the decision on record.
	res, err := g.gate().Decide(ctx, call, session.Options{CallID: CallID(ctx), Agent: g.Agent})
	v := Verdict{Decision: res.Decision}
	if err == nil && res.Decision.Decision == warden.Ask && res.Approval != nil && res.Approval.Status == warden.ApprovalPending {
		v.Approval = res.Approval.ID
	}
	return v, err
}

// gate is the gate of the calls: the policy as Engine (or Tracker.Engine)
// gives it, decided by a copy of Tracker with it.
func (g *SessionGate) gate() *gate.Gate {
	pol := gate.Policy(gate.Fixed{Eng: g.Tracker.Engine})
	if g.Engine != nil {
		pol = gate.PolicyFunc(g.Engine)
	}
	return &gate.Gate{Policy: pol, Store: g.Tracker.Store, Tracker: func(eng session.Engine, _ session.Store) gate.Decider {
		tr := *g.Tracker
		tr.Engine = eng
		return &tr
	}}
}

// Outcome implements Outcomer: the outcome goes to the session's latest
// call of the tool that ran (docs/policy.md, "Outcomes").
func (g *SessionGate) Outcome(ctx context.Context, tool string, ok bool) error {
	ctx, cancel := context.WithTimeout(ctx, DecideTimeout)
	defer cancel()
	tr, err := g.tracker()
	if err != nil {
		return err
	}
	return tr.CallOutcome(ctx, warden.Outcome{Session: g.Session, Tool: tool, OK: ok})
}

// Hidden implements Gate: a tool is hidden when the session's role may not
// use it at all (ROLE_TOOL_DENIED whatever its arguments).
func (g *SessionGate) Hidden(ctx context.Context, tools []string) (map[string]bool, error) {
	trk, err := g.tracker()
	if err != nil {
		return nil, err
	}
	role := g.Role
	if g.Session != "" {
		s, err := trk.Store.Session(ctx, g.Session)
		switch {
		case err == nil && s.Role != "":
			role = s.Role
		case err != nil && !errors.Is(err, warden.ErrNotFound):
			return nil, fmt.Errorf("read session %s: %w", g.Session, err)
		}
	}
	hidden := map[string]bool{}
	if role == "" {
		return hidden, nil
	}
	for _, t := range tools {
		// A role that may not use a tool decides every call of it before
		// its arguments are looked at; in audit mode nothing is hidden.
		tr := trk.Engine.Explain(warden.ToolCall{Tool: t, Args: map[string]any{}, Role: role, Cwd: g.Cwd}, &engine.Session{})
		if d := tr.Decision; d.Decision == warden.Deny && (d.Code == warden.CodeRoleToolDenied || d.Code == warden.CodeRoleUnknown) {
			hidden[t] = true
		}
	}
	return hidden, nil
}

// ElicitedBy is who answered an approval through MCP elicitation, as
// approvals record it.
const ElicitedBy = "user (MCP elicitation)"

// Answer implements Answerer: the user's answer in the MCP client
// approves the call once, or rejects it with their note.
func (g *SessionGate) Answer(ctx context.Context, approval string, approve bool, message string) error {
	if approve {
		_, err := session.Approve(ctx, g.Tracker.Store, approval, session.Answer{Scope: warden.ScopeOnce, Message: message, By: ElicitedBy}, g.Tracker.Store.Now())
		return err
	}
	if message == "" {
		message = "The user did not approve the call in the MCP client."
	}
	_, err := session.Reject(ctx, g.Tracker.Store, approval, message, ElicitedBy)
	return err
}

// Current returns the tracker with the policy as it is now (see Engine).
func (g *SessionGate) Current() (*session.Tracker, error) { return g.tracker() }

// tracker is the tracker with the current engine.
func (g *SessionGate) tracker() (*session.Tracker, error) {
	if g.Engine == nil {
		return g.Tracker, nil
	}
	eng, err := g.Engine()
	if err != nil {
		return nil, err
	}
	tr := *g.Tracker
	tr.Engine = eng
	return &tr, nil
}

// Interface guards.
var (
	_ Gate     = (*SessionGate)(nil)
	_ Answerer = (*SessionGate)(nil)
)
