// Package gate is the one decision path of every front end: the hooks
// (`warden hook` and `warden hookd`), `warden serve` (POST /v1/decide and
// /v1/hook), the MCP proxy and the Go client each hand a tool call to a
// Gate, and the Gate owns what they must all do alike:
//
//   - decide with the policy as it is now (Source: one reload rule);
//   - fail closed: an error is a deny that says why, never an allow;
//   - record a call that got no decision (a policy that does not load, a
//     store that failed, a caller that stopped waiting) exactly once, in
//     the audit trail or, when the store cannot take it, in its spool;
//   - record under a context of its own when the caller's context ends,
//     so that the answer the caller may still have seen is on record;
//   - replay by call id: a call retried under its id gets the decision on
//     record and is not decided twice (session.Options.CallID).
//
// A front end keeps its own wire (hook JSON, HTTP, JSON-RPC) and its own
// way of saying a decision; it adds no decision logic of its own.
package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// Policy gives the compiled policy to decide with: a *Source, Fixed, or
// a PolicyFunc.
type Policy interface {
	Current() (session.Engine, error)
}

// Fixed is a Policy compiled once (a hook in its own process, which lives
// for one call).
type Fixed struct{ Eng session.Engine }

// Current implements Policy.
func (f Fixed) Current() (session.Engine, error) { return f.Eng, nil }

// PolicyFunc is a function as a Policy.
type PolicyFunc func() (session.Engine, error)

// Current implements Policy.
func (f PolicyFunc) Current() (session.Engine, error) { return f() }

// Decider is what the gate needs of the session layer: session.Tracker.
type Decider interface {
	Decide(ctx context.Context, call warden.ToolCall, opt session.Options) (session.Result, error)
}

// Gate decides tool calls (see the package comment). Set Policy and
// Store; the zero value of the other fields means the defaults. It is
// safe for concurrent use.
type Gate struct {
	Policy Policy
	Store  session.Store
	// Tracker makes the session layer's decider for a compiled policy
	// (nil: session.New).
	Tracker func(eng session.Engine, st session.Store) Decider
	// Spool keeps the record of a failure the store could not take, when
	// the store has no spool of its own (nil: none; the error says so).
	Spool func(warden.AuditRecord) error
	// Grace bounds the recording of a failure after the caller's context
	// ended (0: DefaultGrace).
	Grace time.Duration
}

// DefaultGrace is Gate.Grace's default.
const DefaultGrace = 5 * time.Second

// Decide decides one call and records it, once. The error says why the
// call got no decision (the policy does not load, the store failed, ctx
// ended first); the decision is then a deny that says so (or, when the
// call was decided and recorded before its failure, that decision:
// Result.Replayed). It never returns an allow with an error.
//
// A call without opt.CallID is given one, so that whatever records it
// (the decision, a failure, a spooled record joining later) records it
// once.
func (g *Gate) Decide(ctx context.Context, call warden.ToolCall, opt session.Options) (session.Result, error) {
	if opt.CallID == "" {
		opt.CallID = NewCallID()
	}
	if ctx.Err() != nil {
		return g.Fail(ctx, call, opt, stopped(ctx))
	}
	eng, err := g.Policy.Current()
	if err != nil {
		return g.Fail(ctx, call, opt, err)
	}
	res, err := g.decider(eng).Decide(ctx, call, opt)
	if err != nil && ctx.Err() != nil {
		// The caller stopped waiting (a deadline, a service stopping):
		// the deny goes on record under a context of its own.
		return g.Fail(ctx, call, opt, stopped(ctx))
	}
	if err != nil && res.Decision.Decision != warden.Deny {
		res.Decision = warden.FailClosed(err)
	}
	return res, err
}

// stopped is the error of a call whose caller stopped waiting.
func stopped(ctx context.Context) error {
	return warden.Errorf(warden.CodeTimeout, "no decision before the caller stopped waiting (%v); retry the call", context.Cause(ctx))
}

func (g *Gate) decider(eng session.Engine) Decider {
	if g.Tracker != nil {
		return g.Tracker(eng, g.Store)
	}
	return session.New(eng, g.Store)
}

// Fail records that a call got no decision (cause: a policy that does not
// load, a store that failed, a timeout, a crash) and returns what the
// caller is to be told: the deny for cause (warden.FailClosed), or, when
// the call has a record already under opt.CallID (it was decided after
// all), the decision on record, so that the audit trail says what the
// caller was told. When ctx has ended the record is written under a
// context of its own (Gate.Grace). The error is cause, or, when the call
// was decided before, nil; a record that could be neither written nor
// spooled is said in it too.
//
// A failure is recorded in the call's session only when the session is
// opt.Agent's (a call in another agent's session gets no record there).
func (g *Gate) Fail(ctx context.Context, call warden.ToolCall, opt session.Options, cause error) (session.Result, error) {
	if ctx.Err() != nil {
		grace := g.Grace
		if grace <= 0 {
			grace = DefaultGrace
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), grace)
		defer cancel()
	}
	d := warden.FailClosed(cause)
	if g.Store == nil {
		return g.spool(session.Result{Decision: d}, call, opt, d, cause, errors.New("no store"))
	}
	if call.Session != "" && opt.Agent != "" {
		if s, err := g.Store.Session(ctx, call.Session); err != nil && !errors.Is(err, warden.ErrNotFound) || err == nil && s.Agent != opt.Agent {
			call.Session = ""
		}
	}
	res, err := session.RecordFailure(ctx, g.Store, call, opt, d)
	if res.Decision.Decision == "" || res.Decision.Decision == warden.Allow && !res.Replayed {
		res.Decision = d
	}
	if err != nil {
		return g.spool(res, call, opt, d, cause, err)
	}
	if res.Replayed {
		return res, nil
	}
	return res, cause
}

// spool keeps a failure's record in Gate.Spool when the store did not
// take it (rerr).
func (g *Gate) spool(res session.Result, call warden.ToolCall, opt session.Options, d warden.Decision, cause, rerr error) (session.Result, error) {
	res.Decision = d
	if g.Spool != nil {
		rec := session.FailureRecord(call, opt, d)
		if rec.Time.IsZero() {
			rec.Time = time.Now().UTC()
		}
		if g.Spool(rec) == nil {
			res.Audit = rec
			return res, cause
		}
	}
	return res, fmt.Errorf("%w (%w: %v)", cause, ErrUnrecorded, rerr)
}

// ErrUnrecorded is in the error of a failure that could be neither
// recorded nor spooled (Gate.Fail).
var ErrUnrecorded = errors.New("no audit record of it")
