// Package client is warden for Go programs that run their own agent loop
// (docs/client.md): it decides each tool
// call against a policy file before the program's executor runs it, with
// the same session tracking, approvals and audit trail as the host hooks.
//
//	c, err := client.Open(ctx, client.Options{Policy: "warden.yaml", Session: "run-1"})
//	...
//	defer c.Close()
//	exec := c.Wrap(myExecutor)       // func(ctx, warden.ToolCall) (any, error)
//	result, err := exec(ctx, call)   // a denied call never reaches myExecutor
//
// A call the policy denies, or one that needs a human's approval that did
// not come, returns a *DecisionError carrying the decision: its Error text
// is what the model should be told (why, and what to do instead), and
// ModelError is the same as structured JSON.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

// Options configure a Client. The zero value finds warden.yaml from the
// working folder and keeps state in SQLite next to it.
type Options struct {
	// Policy is the policy file; "" finds warden.yaml in the working
	// folder or the nearest parent that has one (none is an error).
	Policy string
	// Store is a store URL as `warden --store` takes it ("" is
	// .warden/warden.db next to the policy; postgres://... a PostgreSQL
	// database). StoreImpl, when set, is used instead.
	Store     string
	StoreImpl warden.Store
	// Session, Role and Host fill the calls that do not name their own:
	// the session tracks first tool, depth, grants and the audit trail.
	Session string
	Role    string
	Host    string
	// Wait is how long a call that needs approval waits for a human's
	// answer (warden approvals approve|reject, or another front end). Zero
	// returns at once with the approval queued: a retry after the answer
	// goes through.
	Wait time.Duration
}

// Client decides tool calls. It is safe for concurrent use.
type Client struct {
	opt   Options
	gate  *gate.Gate
	store warden.Store
	own   bool // the client opened the store and closes it
}

// Open loads and compiles the policy and opens the store. A policy that
// does not load is an error: a Client never decides on a broken policy.
// The policy is compiled again when it changes while the program runs (as
// every front end does it: package gate); one that stops loading denies
// every call, on record, until it loads again.
func Open(ctx context.Context, opt Options) (*Client, error) {
	file := opt.Policy
	if file == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		if file, err = policy.Find(wd); err != nil {
			return nil, err
		}
	}
	// The policy as every front end keeps it (gate.Source): only a
	// whole, settled file, compiled again when it changes while the
	// program runs.
	src, err := gate.NewSource(file)
	if err != nil {
		return nil, err
	}
	eng, err := src.Engine()
	if err != nil {
		return nil, err
	}
	c := &Client{opt: opt, store: opt.StoreImpl}
	if c.store == nil {
		if c.store, err = OpenStore(ctx, eng.Policy().File, opt.Store); err != nil {
			return nil, err
		}
		c.own = true
	}
	c.gate = &gate.Gate{Policy: src, Store: c.store}
	return c, nil
}

// Close closes the store the client opened.
func (c *Client) Close() error {
	if c.own {
		return c.store.Close()
	}
	return nil
}

// Store returns the client's store (for approvals, grants and the audit).
func (c *Client) Store() warden.Store { return c.store }

// Decide decides one call: the session is updated and one audit record is
// written. The error is for infrastructure (the policy stopped loading,
// the store failed, ctx ended first); the decision is then a deny, and
// that deny is on record. A call that needs approval waits as
// Options.Wait says.
func (c *Client) Decide(ctx context.Context, call warden.ToolCall) (warden.Decision, error) {
	return c.DecideID(ctx, call, "")
}

// DecideID is Decide for a call with an id of the caller's (callID, see
// session.Options.CallID): the same call decided again under its id (a
// retry after a crash) gets the decision on record and is not decided
// twice; another call under a used id is denied.
func (c *Client) DecideID(ctx context.Context, call warden.ToolCall, callID string) (warden.Decision, error) {
	c.fill(&call)
	res, err := c.gate.Decide(ctx, call, session.Options{Wait: c.opt.Wait, CallID: callID})
	if err != nil && res.Decision.Decision != warden.Deny {
		res.Decision = warden.FailClosed(err)
	}
	return res.Decision, err
}

func (c *Client) fill(call *warden.ToolCall) {
	if call.Session == "" {
		call.Session = c.opt.Session
	}
	if call.Role == "" {
		call.Role = c.opt.Role
	}
	if call.Host == "" {
		call.Host = c.opt.Host
	}
	if call.Args == nil {
		call.Args = map[string]any{}
	}
}

// Executor runs a tool call and returns its result.
type Executor func(ctx context.Context, call warden.ToolCall) (any, error)

// Wrap returns an executor that decides every call first: an allowed call
// runs next; any other returns a *DecisionError and next is not called.
func (c *Client) Wrap(next Executor) Executor {
	return func(ctx context.Context, call warden.ToolCall) (any, error) {
		d, err := c.Decide(ctx, call)
		if err != nil {
			return nil, &DecisionError{Decision: d, Err: err}
		}
		if d.Decision != warden.Allow {
			return nil, &DecisionError{Decision: d}
		}
		return next(ctx, call)
	}
}

// DecisionError is a call warden did not allow.
type DecisionError struct {
	Decision warden.Decision
	// Err is the infrastructure failure behind a fail-closed deny, if any.
	Err error
}

// Error is the text to give the model: what happened, why, and what to do
// instead.
func (e *DecisionError) Error() string { return e.Decision.Text() }

// Unwrap returns the infrastructure failure, if any.
func (e *DecisionError) Unwrap() error { return e.Err }

// ModelError is the decision as the structured error hosts give a
// model (docs/policy.md, "What the model reads"): {error, reason, suggestion, recoverable}.
func (e *DecisionError) ModelError() json.RawMessage {
	data, _ := json.Marshal(e.Decision.ModelError())
	return data
}

// IsDenied reports whether err is a call warden did not allow.
func IsDenied(err error) bool {
	var de *DecisionError
	return errors.As(err, &de)
}
