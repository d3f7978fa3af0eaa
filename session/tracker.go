// Package session is warden's session layer: it remembers each agent
// session between tool calls (role, first tool, delegation depth, intent,
// violations), feeds that state to the engine, queues approvals for a human,
// honours and counts grants, writes the audit trail, and produces the
// governance text a host injects at each moment of a session (governance.go).
//
// A Tracker is safe for concurrent use, and so are several Trackers in
// different processes sharing one store: the store serialises the updates
// of a session.
package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
)

// Engine is what the tracker needs from a compiled policy;
// *engine.Engine implements it.
type Engine interface {
	// Decide decides a call (the hot path: no trace).
	Decide(call warden.ToolCall, s *engine.Session) engine.Result
	// Explain decides it with the full trace, for explain and for the
	// parts an approval names.
	Explain(call warden.ToolCall, s *engine.Session) *engine.Trace
	// NeedsHistory reports that the policy has sequence rules, which read
	// the session's earlier calls.
	NeedsHistory() bool
	// Intents lists the active intents of the policy's intents file.
	Intents() ([]policy.Intent, error)
	Policy() *policy.Policy
}

var _ Engine = (*engine.Engine)(nil)

// Store is what the tracker keeps its state in; every warden.Store is one.
// A decision reads its halt and grants in one query (HaltAndGrants) and
// writes the session, the history entry, the grant uses and the audit
// record in one transaction (WriteDecision).
type Store interface {
	warden.SessionStore
	warden.GrantStore
	warden.ApprovalStore
	warden.AuditLog
	warden.StateStore
	warden.HaltStore
	warden.DecisionReader
	warden.DecisionWriter
	// Now is the time on the store's clock: the one clock of the session
	// layer (records, grant expiry, the sequence rules' window, anchors).
	Now() time.Time
}

// Tracker tracks sessions and decides their calls. Its zero value is not
// usable: set Engine and Store (New does).
type Tracker struct {
	Engine Engine
	Store  Store
	// Poll is how often Decide looks for a human's answer while it waits
	// (default 200ms).
	Poll time.Duration
	// Agent is who sends the session events (Start, Prompt, ...): the
	// agent token's name for warden serve, "" for the local hooks. A
	// session such an event creates is the agent's, and another agent's
	// session is refused (*OwnerError). Decide takes Options.Agent.
	Agent string
}

// New returns a tracker for the engine and the store.
func New(eng Engine, store Store) *Tracker {
	return &Tracker{Engine: eng, Store: store}
}

// now is the time on the store's clock (Store.Now), which also stamps
// what the store writes.
func (t *Tracker) now() time.Time { return t.Store.Now().UTC() }

func (t *Tracker) policy() *policy.Policy { return t.Engine.Policy() }

// Options tune one Decide call. The zero value is: the host has no prompt of
// its own (an ask is queued as an approval) and the caller does not wait.
type Options struct {
	// HostPrompts reports that the host asks its user itself: an ask is
	// returned as it is and no approval is queued.
	HostPrompts bool
	// Wait is how long to wait for a human's answer to a queued approval.
	// Zero returns the ask at once (naming the approval, so that a retry
	// after the human answered goes through); when the wait runs out the
	// decision is an APPROVAL_TIMEOUT deny.
	Wait time.Duration
	// CallID identifies the host's call (see warden.AuditRecord.CallID).
	// A call whose id the store has a record of already is not decided
	// again. When the record is of the same call (same Agent, session,
	// tool and arguments: warden.AuditRecord.CallSum), Decide returns the
	// recorded decision (Result.Replayed) and spends no grant; any other
	// call with that id is denied with CallIDTaken, and that refusal is
	// recorded (without the id, which stays its first call's).
	CallID string
	// ToolUse is the host's own id for the call, where it gives one: the
	// host's post-tool event finds the call's record by it (CallOutcome).
	ToolUse string
	// Agent is who sent the call (warden.AuditRecord.Agent): warden serve
	// gives the name of the agent token it came with. It goes to the audit
	// record and to an approval the call queues.
	Agent string
	// AnswerAt is the address of the page where people answer approvals
	// (warden serve's), named in the model's instructions for a queued
	// approval. Empty: the instructions give the `warden approvals`
	// commands, which answer it in the project folder's store.
	AnswerAt string
	// Confine, when set, makes the confinement of a shell call's decision
	// final before it is recorded: the hook says there whether and how
	// the call runs confined (hook/handler/confine.go). It may run more
	// than once for a call (a retried transaction).
	Confine func(d *warden.Decision)

	sum string // CallSum of the call as Decide got it, for CallID
}

// Result is a decision and what the session layer did around it.
type Result struct {
	Decision warden.Decision
	// Session is the session after the call (zero for a call without one).
	Session warden.Session
	// Grants are the ids of the grants the decision used (and counted).
	Grants []string
	// Approval is the approval that was queued, waited for or honoured.
	Approval *warden.Approval
	// Audit is the audit record written for the decision.
	Audit warden.AuditRecord
	// Replayed reports that the call was decided before (Options.CallID):
	// Decision and Audit are that decision's.
	Replayed bool
	// Notice is set when this call queued a new approval: one line for the
	// human who can answer it (a hook prints it on the host's stderr), and
	// NoticeErr why a notice the policy asked for was not sent (for the
	// log: a notice never changes the decision).
	Notice    string
	NoticeErr error
}

// Decide decides one tool call with its session's state. It loads or
// creates the session (call.Session; a call without one is decided with
// the grants that belong to no session and is not tracked), fills the
// call's role, depth, intent and intent id from the session where the call
// lacks them, asks the engine, records the first tool and violations,
// counts the grants the decision used, queues an approval for an ask (unless
// the host prompts itself) and waits for it as opt says, and writes exactly
// one audit record, with secrets redacted.
//
// Decide fails closed: when the store does not answer, the returned
// decision is a deny (warden.FailClosed) and the error says why.
func (t *Tracker) Decide(ctx context.Context, call warden.ToolCall, opt Options) (Result, error) {
	start := time.Now()
	if err := CheckID(call.Session); err != nil {
		return t.refused(ctx, call, opt, badSession(err))
	}
	given := call
	if opt.CallID != "" {
		opt.sum = CallSum(opt.CallID, call)
	}
	res, written, err := t.decide(ctx, &call, opt, start)
	for try := 1; staleRead(err) && try < maxStale; try++ {
		// Decided on halts and grants the store kept, or on the session's
		// records, which changed before the decision could be recorded:
		// nothing was; decide again on a fresh read (see staleRead). Each
		// time, another call of the session (or a change of the halts and
		// grants) was recorded first: calls of one session decided at
		// once are recorded one after the other, each on the records of
		// those before it.
		call = given
		res, written, err = t.decide(ctx, &call, opt, start)
	}
	if written {
		// The audit record went with the session update.
		return res, nil
	}
	if oe, ok := asOwnerError(err); ok {
		return t.refused(ctx, given, opt, notOwner(oe))
	}
	if errors.Is(err, warden.ErrConflict) && opt.CallID != "" {
		return t.replay(ctx, given, opt)
	}
	if err != nil {
		// The store failed, not the policy (STORE_UNAVAILABLE), or the
		// deadline ran out (DECISION_TIMEOUT).
		err = warden.StoreError(err)
		res.Decision = warden.FailClosed(err)
	}
	args := AuditArgs(call.Args)
	if opt.Confine != nil && err == nil {
		opt.Confine(&res.Decision)
	}
	rec := t.auditRecord(call, args, res, time.Since(start))
	rec.CallID, rec.ToolUse, rec.Agent, rec.CallSum = opt.CallID, opt.ToolUse, opt.Agent, opt.sum
	rec, aerr := t.Store.AppendAudit(ctx, rec)
	if errors.Is(aerr, warden.ErrConflict) && opt.CallID != "" {
		return t.replay(ctx, given, opt)
	}
	if aerr != nil {
		if err == nil {
			// The decision cannot be recorded: the answer is a deny that
			// says the store failed, and its record is that deny.
			err = warden.StoreError(fmt.Errorf("audit: %w", aerr))
			res.Decision = warden.FailClosed(err)
			rec = t.auditRecord(call, args, res, time.Since(start))
			rec.CallID, rec.ToolUse, rec.Agent = opt.CallID, opt.ToolUse, opt.Agent
		}
		// The record waits in the store's spool until the store answers
		// again: every answered call has its record.
		spool(t.Store, rec)
	}
	res.Audit = rec
	return res, err
}

// spool keeps r in st's spool, when st has one, and reports whether it
// did.
func spool(st any, r warden.AuditRecord) bool {
	sp, ok := st.(warden.Spooler)
	if !ok {
		return false
	}
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	r.ID = 0
	return sp.Spool(r) == nil
}

// decide makes the decision and writes the session. written reports that
// the audit record (and the violation's history entry) went into the same
// transaction as the session: the decision is final inside it (no
// approval to queue), which it is for every call of a session but an ask
// warden queues an approval for.
//
// One loop decides the call and stores it, and decides again without a
// grant another call used up or revoked meanwhile: a grant is counted in
// the session's transaction (WriteDecision fails with a
// GrantUnusableError), or, for a call outside a session or an ask to
// queue, by UseGrant after it.
func (t *Tracker) decide(ctx context.Context, call *warden.ToolCall, opt Options, start time.Time) (res Result, written bool, err error) {
	if call.Args == nil {
		call.Args = map[string]any{}
	}
	// An emergency halt (warden halt) stops the call before anything else.
	h, halted, grants, err := t.Store.HaltAndGrants(ctx, call.Session, opt.Agent)
	if err != nil {
		return res, false, err
	} else if halted {
		res.Decision = Halted(h)
		// The record goes to the session only when it is the caller's:
		// another agent's calls never land in its history.
		if call.Session != "" {
			if sess, err := t.Store.Session(ctx, call.Session); err == nil && sess.Agent != opt.Agent {
				call.Session = ""
			}
		}
		return res, false, nil
	}
	if call.Session == "" {
		grants = slices.DeleteFunc(grants, func(g warden.Grant) bool { return g.Session != "" })
	}
	// Redacted before the session's transaction: redacting a large
	// argument takes time that must not hold the store's write lock.
	args := AuditArgs(call.Args)
	// es is what the engine knows of the session; update fills in its
	// first-tool state, history and time inside the transaction.
	es := engine.Session{Grants: grants}
	read := false // es.History was read: the write checks it is current
	var r engine.Result
	var parent *warden.Session
	if call.Session != "" {
		es.Now = t.now()
		if es.History, err = t.recentCalls(ctx, call.Session); err != nil {
			return res, false, err
		}
		read = t.Engine.NeedsHistory()
		// A subagent's session (PARENT/AGENT, as the hooks name it) that
		// starts without a role of its own takes its parent's role and
		// lies one level deeper.
		if i := strings.LastIndexByte(call.Session, '/'); i > 0 {
			if p, err := t.Store.Session(ctx, call.Session[:i]); err == nil {
				if err := ownParent(p, call.Session, opt.Agent); err != nil {
					return res, false, err
				}
				parent = &p
			} else if !errors.Is(err, warden.ErrNotFound) {
				return res, false, err
			}
		}
	}
	update := func(s *warden.Session, created bool) (*warden.DecisionRecord, error) {
		if err := own(s, created, opt.Agent); err != nil {
			return nil, err
		}
		if created {
			s.StartedAt, s.Status = es.Now, warden.SessionActive
			s.Host, s.Role, s.Depth = call.Host, call.Role, call.Depth
			if parent != nil {
				s.Parent = parent.ID
				if s.Role == "" {
					s.Role = parent.Role
				}
				s.Depth = max(s.Depth, parent.Depth+1)
			}
		}
		fillCall(call, s)
		if call.Role == "" {
			// roles.default: the call (and its record) takes the policy's
			// default role; the session keeps none, so a role the host
			// names later (OpenCode's agent) still becomes its own.
			call.Role = t.policy().DefaultRole
		}
		es.First = !s.FirstToolUsed()
		r = t.Engine.Decide(*call, &es)
		if id := t.selectIntent(call, &r); id != "" {
			s.IntentID = id // the intent handshake: the session's next calls have this intent
		}
		record(s, call, r, es.Now)
		if r.Decision.Decision == warden.Ask && !opt.HostPrompts {
			return nil, nil // more to do after the session is stored
		}
		if opt.Confine != nil {
			opt.Confine(&r.Decision)
		}
		dr := &warden.DecisionRecord{Audit: t.auditRecord(*call, args, Result{Decision: r.Decision, Grants: r.Grants}, time.Since(start)),
			UseGrants: r.Grants, HistoryRead: read}
		if n := len(es.History); n > 0 {
			dr.HistoryThrough = es.History[n-1].ID
		}
		dr.Audit.CallID, dr.Audit.ToolUse, dr.Audit.Agent, dr.Audit.CallSum = opt.CallID, opt.ToolUse, opt.Agent, opt.sum
		if r.Decision.Decision == warden.Deny || violated(r) {
			hs := violations(call, r)
			for i := range hs {
				hs[i].Time = es.Now
			}
			dr.History, dr.MoreHistory, dr.HistoryKeep = &hs[0], hs[1:], Limits(t.policy()).HistoryMax
		}
		return dr, nil
	}
	orig := *call
	stored := false // the session is stored; what is left is decided outside it
	for try := 1; ; try++ {
		if try == maxTries {
			// The last try uses no grant: none can be lost meanwhile.
			grants, es.Grants = nil, nil
		}
		lost := ""
		if call.Session != "" && !stored {
			*call = orig
			var rec warden.AuditRecord
			res.Session, rec, err = t.Store.WriteDecision(ctx, call.Session, update)
			var gu *warden.GrantUnusableError
			switch {
			case errors.As(err, &gu):
				lost = gu.ID
			case err != nil:
				return res, false, err
			case rec.ID != 0:
				res.Decision, res.Grants, res.Audit = r.Decision, r.Grants, rec
				// The decision is stored: a failure to consume the answer
				// leaves it for one more identical call, no more.
				t.deliver(ctx, r.Grants, grants)
				return res, true, nil
			default:
				stored = true
			}
		} else {
			// A call outside a session (whose unknown intent is denied:
			// there is no session to keep one), or an ask decided again
			// after its session was stored.
			r = t.Engine.Decide(*call, &es)
			t.selectIntent(call, &r)
		}
		if lost == "" {
			// The grants of a decision its session's transaction did not
			// store are counted now.
			for _, id := range r.Grants {
				ok, err := t.Store.UseGrant(ctx, id)
				if err != nil && !errors.Is(err, warden.ErrNotFound) {
					return res, false, err
				}
				if !ok {
					lost = id
					break
				}
			}
		}
		if lost == "" {
			break
		}
		grants = slices.DeleteFunc(grants, func(g warden.Grant) bool { return g.ID == lost })
		es.Grants, es.Now = grants, t.now()
	}
	if err := t.deliver(ctx, r.Grants, grants); err != nil {
		return res, false, err
	}
	res.Decision, res.Grants = r.Decision, r.Grants
	if res.Decision.Decision == warden.Deny || violated(r) {
		for _, h := range violations(call, r) {
			if err := t.history(ctx, call, h); err != nil {
				return res, false, err
			}
		}
	}
	if res.Decision.Decision == warden.Ask && !opt.HostPrompts {
		if err := t.approval(ctx, call, opt, &res); err != nil {
			return res, false, err
		}
	}
	return res, false, nil
}

// maxStale bounds how often a call is decided again because what it was
// decided on changed before it was recorded (staleRead): past it, the
// store's error is the answer (a deny). Calls of one session decided at
// once take a try each before the last of them is recorded.
const maxStale = 64

// maxTries bounds how often a call is decided because a grant it used was
// used up or revoked meanwhile; the last try uses no grant.
const maxTries = 4

// HaltAndGrants reads the halt in force for a session and an agent
// ("": none) and, when there is none, the session's grants, in one query
// (warden.DecisionReader).
//
// Deprecated: call st.HaltAndGrants; every Store has it.
func HaltAndGrants(ctx context.Context, st Store, session, agent string) (warden.Halt, bool, []warden.Grant, error) {
	return st.HaltAndGrants(ctx, session, agent)
}

// fillCall completes the call from the session, and the session from the
// call: what the host reports wins over what the session remembers.
//
// The session's role and depth win over what a call reports: a call can
// name a role only for a session that has none, and can only deepen the
// depth, never lessen it (a subagent is never wider than its session).
func fillCall(call *warden.ToolCall, s *warden.Session) {
	if s.Role != "" {
		call.Role = s.Role
	} else {
		s.Role = call.Role
	}
	if call.Depth < s.Depth {
		call.Depth = s.Depth
	} else {
		s.Depth = call.Depth
	}
	if call.Intent == "" {
		call.Intent = s.Intent
	}
	if call.IntentID == "" {
		call.IntentID = s.IntentID
	} else {
		s.IntentID = call.IntentID
	}
	if call.Host == "" {
		call.Host = s.Host
	} else if s.Host == "" {
		s.Host = call.Host
	}
}

// record updates the session's counters after a decision.
func record(s *warden.Session, call *warden.ToolCall, r engine.Result, now time.Time) {
	s.Calls++
	s.LastSeen = now
	if s.Status != warden.SessionActive {
		s.Status, s.EndedAt = warden.SessionActive, time.Time{}
	}
	if r.Decision.Decision == warden.Deny || violated(r) {
		s.Violations++
	}
	// The first tool counts once a call was not denied: under
	// first_enforce: deny the session must still start right.
	if s.FirstTool == "" && r.Decision.Decision != warden.Deny {
		s.FirstTool = call.Tool
	}
}

// violated reports a broken session rule (first tool, depth), also when it
// only warned.
func violated(r engine.Result) bool {
	return r.Violation != ""
}

// violations are the history entries of a deny or a broken session rule,
// one for each rule the call broke (as seed 000 records a first-tool
// violation and the deny of the same call apart): the session rule (first
// tool, depth), then the deny's own code when it is another. Each is a
// fail when the call was denied, a warn when it was let through.
func violations(call *warden.ToolCall, r engine.Result) []warden.HistoryEntry {
	result := "fail"
	if r.Decision.Decision != warden.Deny {
		result = "warn"
	}
	entry := func(code warden.Code) warden.HistoryEntry {
		return warden.HistoryEntry{Session: call.Session, Agent: call.Role, Result: result,
			Action: "violation:" + strings.ToLower(string(code)) + ":" + call.Tool}
	}
	var out []warden.HistoryEntry
	if r.Violation != "" {
		out = append(out, entry(r.Violation))
	}
	if r.Decision.Decision == warden.Deny && r.Decision.Code != r.Violation {
		out = append(out, entry(r.Decision.Code))
	}
	if r.Decision.Decision == warden.Deny {
		// The other rules it broke: a first-tool deny that settled the
		// call does not hide a deny rule the same call met.
		for _, c := range r.Denied {
			if c != r.Violation && c != r.Decision.Code {
				out = append(out, entry(c))
			}
		}
	}
	return out
}

// history appends an entry and archives what is over the limit.
func (t *Tracker) history(ctx context.Context, call *warden.ToolCall, h warden.HistoryEntry) error {
	h.Time = t.now()
	if err := t.Store.AddHistory(ctx, h); err != nil {
		return err
	}
	_, err := t.Store.ArchiveHistory(ctx, Limits(t.policy()).HistoryMax)
	return err
}

// auditRecord is the audit record of a decision. args are the call's
// arguments as AuditArgs made them.
func (t *Tracker) auditRecord(call warden.ToolCall, args map[string]any, res Result, latency time.Duration) warden.AuditRecord {
	d := res.Decision
	mode := d.Mode
	if mode == "" {
		mode = "enforce"
	}
	r := warden.AuditRecord{
		Time: t.now(), Session: call.Session, Role: call.Role, Host: call.Host, Tool: call.Tool, Depth: call.Depth,
		Args: args, Decision: d.Decision, Code: d.Code, Rule: d.Rule,
		Reason: warden.RedactString(d.Reason), Matched: d.Matched, Warnings: d.Warnings, Mode: mode, Latency: latency,
		Sandbox: d.Sandbox,
	}
	if d.Enforced != nil {
		r.Enforced = *d.Enforced
	}
	if d.Rule != "" {
		if p := t.policy(); p != nil {
			for _, pr := range p.Rules {
				if pr.ID == d.Rule {
					r.Source = pr.Source
					break
				}
			}
		}
	}
	r.Grants = res.Grants
	if res.Approval != nil {
		r.Approval = res.Approval.ID
	}
	return r
}

// MaxAuditString is the longest string argument the audit trail keeps
// whole (a file's content, a long command).
const MaxAuditString = warden.MaxAuditString

// AuditArgs are a call's arguments as the audit trail keeps them: secrets
// redacted, and strings longer than MaxAuditString cut (warden.RedactArgsCut).
func AuditArgs(args map[string]any) map[string]any {
	return warden.RedactArgsCut(args, MaxAuditString)
}

// Fingerprint identifies a call for its approval: role, tool, the folder
// it runs in (Trace.Dir) and the normalised call. A shell call is
// normalised to the simple commands and written paths it would run and
// write, and its arguments other than the command and the ones that only
// describe it (so wording a description differently is the same call, and
// another shell program or sandbox setting is not); any other call is its
// arguments. The session is not part of it: an answer reaches the same
// call from a new session of the project.
func Fingerprint(call warden.ToolCall, tr *engine.Trace) string {
	h := sha256.New()
	for _, s := range []string{call.Role, call.Tool} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	// The folder the call runs in: the same arguments in another folder
	// (make deploy, a relative file_path) are another call.
	if tr != nil && tr.Dir != "" {
		h.Write([]byte("dir\x00" + tr.Dir + "\x00"))
	}
	norm := false
	if tr != nil && tr.Kind == "shell" {
		for _, p := range tr.Parts {
			if p.Subject == warden.SubjectCommand || p.Subject == warden.SubjectPath {
				norm = true
				h.Write([]byte(p.Subject + "\x00" + p.GrantValue() + "\x00"))
			}
		}
	}
	args := call.Args
	if norm {
		args = make(map[string]any, len(call.Args))
		for k, v := range call.Args {
			if !describes[k] {
				args[k] = v
			}
		}
	}
	data, _ := json.Marshal(args) // map keys are sorted
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// describes are the arguments of the hosts' shell tools that do not change
// what the command does (the command itself is in the parts): a model
// retrying a call may word or tune them differently.
var describes = map[string]bool{"command": true, "cmd": true, "chars": true, "description": true, "justification": true,
	"timeout": true, "yield_time_ms": true, "max_output_tokens": true, "delay_ms": true, "prefix_rule": true}

// Limits returns the state limits of a policy, defaults filled in.
func Limits(p *policy.Policy) warden.StateLimits {
	if p == nil {
		return warden.StateLimits{}.WithDefaults()
	}
	return warden.StateLimits{
		AnchorsMax: p.State.AnchorsMax, AnchorDemoteAfter: p.State.AnchorDemoteAfter,
		HistoryMax: p.State.HistoryMax, SessionMaxAge: p.State.SessionMaxAge,
		AuditRetention: p.Audit.Retention, ApprovalLifetime: p.Approvals.Expires,
	}.WithDefaults()
}

// Explain shows how Decide would decide a call in its session, without
// changing anything: the call is completed from the session (role, depth,
// intent) as Decide does, and decided with the session's first-tool state
// and the grants that apply. A session the store does not know is
// explained as a new one. It returns the trace, the call as completed, and
// the session as stored (zero for a new one).
func (t *Tracker) Explain(ctx context.Context, call warden.ToolCall) (*engine.Trace, warden.ToolCall, warden.Session, error) {
	if call.Args == nil {
		call.Args = map[string]any{}
	}
	grants, err := t.Store.Grants(ctx, warden.GrantFilter{Session: call.Session})
	if err != nil {
		return nil, call, warden.Session{}, err
	}
	if call.Session == "" {
		grants = slices.DeleteFunc(grants, func(g warden.Grant) bool { return g.Session != "" })
		return t.Engine.Explain(call, &engine.Session{Grants: grants}), call, warden.Session{}, nil
	}
	s, err := t.Store.Session(ctx, call.Session)
	if err != nil && !errors.Is(err, warden.ErrNotFound) {
		return nil, call, s, err
	}
	fillCall(&call, &s)
	hist, err := t.recentCalls(ctx, call.Session)
	if err != nil {
		return nil, call, s, err
	}
	return t.Engine.Explain(call, &engine.Session{First: !s.FirstToolUsed(), Grants: grants, History: hist, Now: t.now()}), call, s, nil
}

// Halted is the decision for a call a halt stops.
func Halted(h warden.Halt) warden.Decision {
	what := "This session was halted"
	switch {
	case h.Agent != "":
		what = "Every call of the agent token " + h.Agent + " was halted, in any session"
	case h.Session == "":
		what = "Every session of this project was halted"
	}
	if h.By != "" {
		what += " by " + h.By
	}
	reason := what + "."
	if strings.TrimSpace(h.Message) != "" {
		reason += " " + warden.TerminalSafe(strings.TrimSpace(h.Message))
	}
	return warden.Decision{Decision: warden.Deny, Code: warden.CodeHalted, Reason: reason,
		Suggestion:  "Stop here: make no more tool calls, and report to the user what you were doing and what is left. A person resumes the work with warden resume.",
		Recoverable: false, Warnings: []string{}, Matched: []string{}}
}

// maxHistory bounds the earlier calls the sequence rules look at.
const maxHistory = 500

// recentCalls returns the session's latest calls, oldest first, when the
// policy has sequence rules (after:, repeat:, rate:); nil otherwise.
func (t *Tracker) recentCalls(ctx context.Context, sid string) ([]warden.AuditRecord, error) {
	if !t.Engine.NeedsHistory() || sid == "" {
		return nil, nil
	}
	recs, err := t.Store.Recent(ctx, sid, maxHistory)
	if err != nil {
		return nil, fmt.Errorf("read the session's history: %w", err)
	}
	return recs, nil
}

// deliver consumes the approvals whose grants the decision used: a grant
// from a human's answer delivers the answer, and does not let one more
// identical call through elsewhere.
func (t *Tracker) deliver(ctx context.Context, used []string, grants []warden.Grant) error {
	for _, id := range used {
		for _, g := range grants {
			if g.ID == id && g.Approval != "" {
				if _, err := t.Store.ConsumeApproval(ctx, g.Approval); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// replay returns the recorded decision of a call decided before under
// opt.CallID, when the record is of this call (sameCall); any other call
// is refused (CallIDTaken), and the refusal recorded.
func (t *Tracker) replay(ctx context.Context, call warden.ToolCall, opt Options) (Result, error) {
	recs, err := t.Store.Audit(ctx, warden.AuditFilter{CallID: opt.CallID})
	if err != nil || len(recs) == 0 {
		if err == nil {
			err = fmt.Errorf("call %s: its record is gone", opt.CallID)
		}
		err = warden.StoreError(err)
		return Result{Decision: warden.FailClosed(err)}, err
	}
	if !sameCall(recs[0], call.Session, opt) {
		return t.refused(ctx, call, opt, CallIDTaken(opt.CallID))
	}
	return Result{Decision: Recorded(recs[0]), Audit: recs[0], Replayed: true}, nil
}

// Recorded is the decision an audit record holds. A record keeps no
// suggestion: a deny or an ask gets one saying the call was decided
// already.
func Recorded(r warden.AuditRecord) warden.Decision {
	d := warden.Decision{Decision: r.Decision, Code: r.Code, Rule: r.Rule, Reason: r.Reason,
		Warnings: r.Warnings, Matched: r.Matched, Recoverable: r.Decision != warden.Allow, Sandbox: r.Sandbox}
	if d.Warnings == nil {
		d.Warnings = []string{}
	}
	if d.Matched == nil {
		d.Matched = []string{}
	}
	if r.Mode == "audit" {
		d.Mode = "audit"
		e := r.Enforced
		d.Enforced = &e
	}
	if d.Decision != warden.Allow {
		d.Suggestion = "This call was decided already (audit record " + fmt.Sprint(r.ID) +
			"); the answer stands. Do what the policy allows instead, or ask the user."
	}
	return d
}

// FailureRecord is the audit record of a call that got no decision (see
// RecordFailure), secrets redacted; of opt it takes CallID and Agent.
func FailureRecord(call warden.ToolCall, opt Options, d warden.Decision) warden.AuditRecord {
	r := warden.FailureRecord(call, opt.CallID, opt.Agent, d)
	if opt.CallID != "" {
		r.CallSum = CallSum(opt.CallID, call)
	}
	return r
}

// RecordFailure records that a call got no decision (d, a deny from
// warden.FailClosed: a timeout, a crash, a policy that does not load)
// under its call id, and returns what the host is to be told. A decision
// stored first for the call wins: then that decision is returned
// (Replayed), so that the audit trail always says what the host was told.
func RecordFailure(ctx context.Context, st warden.AuditLog, call warden.ToolCall, opt Options, d warden.Decision) (Result, error) {
	callID := opt.CallID
	if CheckID(call.Session) != nil {
		call.Session = "" // a session id no session can have (Decide refuses it)
	}
	r := FailureRecord(call, opt, d)
	r.Time = time.Time{} // the store stamps it on its clock
	rec, err := st.AppendAudit(ctx, r)
	if err != nil && !errors.Is(err, warden.ErrConflict) && spool(st, FailureRecord(call, opt, d)) {
		// The store is down: the record waits in its spool.
		return Result{Decision: d, Audit: r}, nil
	}
	if errors.Is(err, warden.ErrConflict) && callID != "" {
		recs, rerr := st.Audit(ctx, warden.AuditFilter{CallID: callID})
		if rerr == nil && len(recs) > 0 {
			if opt.sum = r.CallSum; !sameCall(recs[0], call.Session, opt) {
				// Another call's id: refused, and the refusal recorded
				// (without the id, and in no session).
				d := CallIDTaken(callID)
				call.Session = ""
				rec, err := st.AppendAudit(ctx, FailureRecord(call, Options{Agent: opt.Agent}, d))
				return Result{Decision: d, Audit: rec}, err
			}
			if r := recs[0]; r.Decision == d.Decision && r.Code == d.Code {
				// The failure was recorded already (Decide records a store
				// failure itself): the answer is the failure's own.
				return Result{Decision: d, Audit: r}, nil
			}
			return Result{Decision: Recorded(recs[0]), Audit: recs[0], Replayed: true}, nil
		}
	}
	return Result{Decision: d, Audit: rec}, err
}
