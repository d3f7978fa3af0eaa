// Package handler answers one hook event: decode -> session -> engine ->
// approval -> audit -> answer, under the hook deadline and a panic guard,
// failing closed. `warden hook` calls it in its own process; `warden
// hookd` (internal/hookd/server) calls it with a Runtime that keeps
// compiled policies and open stores between calls. Package hook describes
// the whole way of one event.
//
// Stability: this package is internal to warden in spirit. Its API serves
// warden hook, warden hookd and warden serve and changes with them in any
// release; a Go program uses package client or serve instead.
package handler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/internal/sqlstore"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/spawn"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

// Runtime is where a hook runs: in its own process (`warden hook`, see
// Local), or inside hookd for a warden-hook client, which keeps compiled
// policies and open stores between calls.
type Runtime struct {
	// Dir is the caller's working directory ("" is this process's).
	Dir string
	// Interactive reports whether the host that runs the hook can prompt
	// its user (only the hook's own process can look: hook.Host.Interactive).
	Interactive func(h hook.Host) bool
	// Engine finds, loads and compiles the policy for a project folder.
	Engine func(cwd, policyFile string) (*engine.Engine, error)
	// Store opens the store for a policy; release is called when done.
	Store func(ctx context.Context, policyFile, storeURL string) (st warden.Store, release func(), err error)
	// CallID identifies the call in the audit trail ("": a new one).
	CallID string
	// Spawn is the id of the follow-up session this host process was
	// started as ($WARDEN_SPAWN, package spawn): the session that starts
	// here is linked to its parent. Only a hook in the host's own process
	// environment knows it (warden starts follow-ups with hookd off).
	Spawn string
	// Agent is who sent the event (session.Options.Agent): the agent
	// token's name, for a remote hook.
	Agent string
	// AnswerAt is the page where people answer approvals
	// (session.Options.AnswerAt): warden serve's, for a remote hook.
	AnswerAt string
	// Stall, when set (by a test), runs before each decision: to make it
	// panic or hang.
	Stall func()
	// Work, when set (by a test), counts the decisions still running: one
	// abandoned at the timeout goes on in its goroutine until its store
	// call returns (a hook's process exits first; a test's does not).
	Work *sync.WaitGroup
}

// Local is the runtime of a hook in its own process: it loads the policy
// and opens the store for this one call.
func Local() *Runtime {
	return &Runtime{Interactive: hook.Host.Interactive, Engine: LoadEngine, Store: OpenStore}
}

// OpenStore opens the store for one call (client.OpenStore).
func OpenStore(ctx context.Context, policyFile, storeURL string) (warden.Store, func(), error) {
	st, err := client.OpenStore(ctx, policyFile, storeURL)
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

// abs makes a path relative to the caller's directory absolute.
func (rt *Runtime) abs(path string) string {
	if path == "" || rt.Dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(rt.Dir, path)
}

// absStore makes a store URL's relative SQLite path absolute.
func (rt *Runtime) absStore(u string) string {
	for _, prefix := range []string{"sqlite://", "sqlite:", "file://", "file:", ""} {
		if rest, ok := strings.CutPrefix(u, prefix); ok && (prefix != "" || !strings.Contains(u, "://")) {
			if rest == "" {
				return u
			}
			return prefix + rt.abs(rest)
		}
	}
	return u
}

// Reply is what the hook command prints: Stdout for the host, Stderr for
// its log (never for the model), and the exit code.
type Reply struct {
	Stdout []byte
	Stderr string
	Code   int
}

func (r *Reply) logf(format string, args ...any) { r.Stderr += fmt.Sprintf(format, args...) }

// Fatal answers input warden could not even decode: a deny in the host's
// JSON, the reason for the log, and exit code 2, which every host reads as
// "block" whatever the event was; at the end of a turn, exit code 0 and no
// block (hook.Host.EndOfTurn). event is the host's event name, or "".
func Fatal(h hook.Host, event string, err error) Reply {
	d := warden.FailClosed(err)
	return Reply{Stdout: h.Failure(event, d), Stderr: d.ModelText() + "\n", Code: hook.FailCode(h, event)}
}

// Run answers the host's hook input data under the flags f. It never
// fails open: any failure is answered as one (deny before a tool).
func Run(ctx context.Context, rt *Runtime, h hook.Host, data []byte, f hook.Flags) Reply {
	ev, err := h.Decode(data)
	if err != nil {
		return Fatal(h, hook.EventName(data), warden.Errorf(warden.CodeBadInput, "hook input from %s: %v", h.Name(), err))
	}

	// Decide in a goroutine so that a panic or a hang still gets a deny
	// answer: the hosts treat a crash or timeout as "no objection".
	type result struct {
		out   []byte
		err   error
		stack string // of a panic: for stderr, not for the model
	}
	done := make(chan result, 1)
	// The decision has the deadline less a reserve in which a failure is
	// recorded before the answer (see failureAnswer): the answer, record
	// included, comes within --timeout.
	reserve := min(2*time.Second, f.Timeout/5)
	ctx, cancel := context.WithTimeout(ctx, f.Timeout+f.Wait-reserve)
	defer cancel()
	// The goroutine works on its own copy of the event: on a timeout this
	// goroutine answers from ev while the decision may still be running.
	gev := ev
	if gev.Call.Role == "" && gev.Call.Depth == 0 {
		gev.Call.Role = f.Role
	}
	if ev.Cwd == "" {
		ev.Cwd, gev.Cwd = rt.Dir, rt.Dir
	}
	callID := rt.CallID
	if callID == "" {
		callID = hook.NewCallID()
	}
	var notice string
	opt := options{policy: rt.abs(f.Policy), store: rt.absStore(f.Store), role: f.Role, wait: f.Wait,
		stateless: f.Stateless, prompts: ev.Kind == hook.PreTool && rt.Interactive(h), rt: rt, callID: callID, notice: &notice}
	stall := rt.Stall
	if rt.Work != nil {
		rt.Work.Add(1)
	}
	go func() {
		if rt.Work != nil {
			defer rt.Work.Done()
		}
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("internal error (panic: %v)", r), stack: PanicStack()}
			}
		}()
		if stall != nil {
			stall()
		}
		out, err := handle(ctx, h, gev, opt)
		done <- result{out: out, err: err}
	}()
	var reply Reply
	// fail answers a failure before a tool with a record of it in the
	// audit trail (one record per answer; see failureAnswer).
	fail := func(err error) Reply {
		if ev.Kind == hook.PreTool && !f.Stateless {
			call := ev.Call
			if call.Role == "" && call.Depth == 0 {
				call.Role = f.Role
			}
			out, rerr := failureAnswer(h, ev, call, opt, err, reserve)
			if rerr == nil {
				reply.logf("warden hook %s: %v\n", h.Name(), err)
				reply.Stdout = out
				return reply
			}
			reply.logf("warden hook %s: no audit record of this failure: %v\n", h.Name(), rerr)
		}
		return failure(reply, h, ev, err)
	}
	select {
	case r := <-done:
		if r.stack != "" {
			reply.logf("%s\n", r.stack)
		}
		if r.err != nil {
			return fail(r.err)
		}
		reply.Stdout = r.out
		if notice != "" {
			reply.logf("%s\n", notice)
		}
		if f.Role != "" && ev.Kind == hook.SessionStart {
			// The operator's --role under a policy without roles: the
			// model is not told (it did nothing wrong); the person who
			// reads the hook's output is.
			if eng, err := rt.Engine(ev.Cwd, opt.policy); err == nil && len(eng.Policy().Roles) == 0 {
				reply.logf("warden hook %s: --role %s: %s defines no roles, so calls are decided without role restrictions; define the role under roles:, or remove --role from the hook command\n",
					h.Name(), f.Role, filepath.Base(eng.Policy().File))
			}
		}
		return reply
	case <-ctx.Done():
		return fail(warden.Errorf(warden.CodeTimeout, "no decision within %s (%v)", f.Timeout+f.Wait, context.Cause(ctx)))
	}
}

// failure answers a failure at a known event: deny before a tool, a
// message elsewhere, always in the host's JSON.
//
// At the end of a turn (hook.Host.EndOfTurn) it neither blocks nor gives
// the model context, so that a failure cannot make the host ask the model
// again; with stop_hook_active it says nothing at all.
func failure(reply Reply, h hook.Host, ev hook.Event, err error) Reply {
	d := warden.FailClosed(err)
	if ev.StopActive && h.EndOfTurn(ev.Name) {
		reply.Stdout = []byte("{}\n")
	} else {
		reply.Stdout = h.Failure(ev.Name, d)
	}
	reply.logf("warden hook %s: %v\n", h.Name(), err)
	return reply
}

// failureAnswer records a call that got no decision (a timeout, a crash,
// a policy that does not load) and renders the answer: the deny for the
// failure, or, when the call has a record already (the decision finished
// after all, or recorded the failure itself), the decision on record, so
// that the audit trail says what the host was told. It opens the store
// afresh.
//
// The store gets half of reserve; a SQLite store too busy to answer by
// then gets the record through its spool file.
func failureAnswer(h hook.Host, ev hook.Event, call warden.ToolCall, opt options, cause error, reserve time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), max(reserve/2, 100*time.Millisecond))
	defer cancel()
	file := opt.policy
	if file == "" {
		f, err := FindPolicy(ev.Cwd)
		if err != nil {
			return nil, err
		}
		file = f
	}
	call.Host = h.Name()
	// The gate records the failure (package gate): in the store, else,
	// when the store cannot take it in time (a SQLite file too busy, many
	// hook processes at once; PostgreSQL down), synced in the store's
	// spool file, which joins the audit trail when the store answers
	// again.
	g := &gate.Gate{Spool: func(rec warden.AuditRecord) error {
		sp := client.SpoolFile(file, opt.store)
		if sp == "" {
			return errors.New("the store has no spool file")
		}
		return sqlstore.SpoolRecord(sp, rec)
	}}
	st, release, err := opt.rt.Store(ctx, file, opt.store)
	if err == nil {
		defer release()
		g.Store = st
	}
	res, err := g.Fail(ctx, call, session.Options{CallID: opt.callID, Agent: opt.rt.Agent}, cause)
	if errors.Is(err, gate.ErrUnrecorded) {
		return nil, err
	}
	d := res.Decision
	if d.Decision == warden.Ask && !opt.prompts {
		d = hook.AskWithoutPrompt(d, h.Name())
	}
	a := hook.Answer{Decision: &d}
	confineOnRecord(ev, &a, file, opt.prompts, remoteRuntime(opt.rt))
	return h.Answer(ev, a, hook.Render{Audit: d.Mode == "audit", Prompts: opt.prompts}), nil
}

// options are the hook's flags as one decision uses them.
type options struct {
	policy string
	store  string
	role   string
	wait   time.Duration
	// stateless decides with the engine alone (no store).
	stateless bool
	// prompts reports whether the host can ask its user now.
	prompts bool
	rt      *Runtime
	// callID identifies the call in the audit trail.
	callID string
	// notice receives the line for the human when the call queued an
	// approval (session.Result.Notice): Run prints it on the hook's
	// stderr, which the hosts show their user (and log).
	notice *string
	// confine prepares a shell call's confinement before it is recorded
	// (confine.go).
	confine func(*warden.Decision)
}

// handle decides one event with the session layer and renders the host's
// answer. Any error is answered as a failure (deny before a tool).
func handle(ctx context.Context, h hook.Host, ev hook.Event, opt options) ([]byte, error) {
	if ev.Kind == hook.Other {
		return h.Answer(ev, hook.Answer{}, hook.Render{}), nil
	}
	eng, err := opt.rt.Engine(ev.Cwd, opt.policy)
	if err != nil {
		return nil, err
	}
	pol := eng.Policy()
	if r := ev.Call.Role; r != "" && ev.Call.Depth > 0 && pol.Roles[r] == nil {
		// A host's own subagent type (general-purpose, Explore, ...) that
		// the policy does not name as a role: no role restrictions.
		ev.Call.Role = ""
	}
	if ev.AgentType != "" && pol.Roles[ev.AgentType] == nil {
		ev.AgentType = ""
	}
	if opt.stateless {
		a := statelessAnswer(eng, h, ev, opt)
		confineAnswer(ev, &a, pol, opt.prompts)
		return h.Answer(ev, a, hook.Render{Audit: pol.Mode == "audit", Prompts: opt.prompts}), ctx.Err()
	}
	st, release, err := opt.rt.Store(ctx, pol.File, opt.store)
	if err != nil {
		return nil, warden.StoreError(fmt.Errorf("open the warden store: %w", err))
	}
	defer release()
	tr := session.New(eng, st)
	tr.Agent = opt.rt.Agent // a session the event opens is the agent's (warden serve's token)
	cf := &confiner{ev: ev, pol: pol, prompts: opt.prompts, remote: remoteRuntime(opt.rt)}
	opt.confine = cf.confine
	a, audit, err := eventAnswer(ctx, tr, st, h, ev, opt)
	if err != nil {
		return nil, err
	}
	cf.answer(&a)
	return h.Answer(ev, a, hook.Render{Audit: audit || pol.Mode == "audit", Prompts: opt.prompts}), ctx.Err()
}

// eventAnswer does what an event means for the session and returns what
// to tell the host. audit reports a decision made in audit mode.
func eventAnswer(ctx context.Context, tr *session.Tracker, st warden.Store, h hook.Host, ev hook.Event, opt options) (a hook.Answer, audit bool, err error) {
	sid := ev.Session
	switch ev.Kind {
	case hook.PreTool:
		// The gate decides, fails closed and records, as for every front
		// end; a failure comes back here as an error, and Run answers it.
		g := &gate.Gate{Policy: gate.Fixed{Eng: tr.Engine}, Store: st, Tracker: func(session.Engine, session.Store) gate.Decider { return tr }}
		res, err := g.Decide(ctx, ev.Call, session.Options{HostPrompts: opt.prompts, Wait: opt.wait, CallID: opt.callID, ToolUse: ev.ToolUse, AnswerAt: opt.rt.AnswerAt, Agent: opt.rt.Agent, Confine: opt.confine})
		if err != nil {
			return a, false, err
		}
		if res.NoticeErr != nil && res.Notice != "" {
			res.Notice += " (not sent: " + res.NoticeErr.Error() + ")"
		}
		if opt.notice != nil {
			*opt.notice = res.Notice
		}
		d := res.Decision
		if d.Decision == warden.Ask && !opt.prompts && res.Approval == nil {
			d = hook.AskWithoutPrompt(d, h.Name())
		}
		return hook.Answer{Decision: &d}, d.Mode == "audit", nil
	case hook.SessionStart:
		if sid == "" {
			return a, false, nil
		}
		switch ev.Source {
		case "resume":
			a.Context, err = tr.Resume(ctx, sid)
		case "compact":
			if _, err = tr.Compact(ctx, sid); err == nil {
				a.Context, err = tr.Governance(ctx, sid)
			}
		default: // startup, clear
			o := session.StartOptions{ID: sid, Role: opt.role, Host: h.Name()}
			if opt.rt.Spawn != "" {
				// A follow-up session a plugin asked for: its parent is the
				// session that completed, its role the one it was asked
				// with (or the parent's).
				var linked bool
				var parent, role string
				if parent, role, linked, err = spawn.Link(ctx, st, opt.rt.Spawn, sid, h.Name()); err != nil {
					return a, false, err
				}
				if linked {
					o.Parent, o.Role = parent, role
				}
			}
			_, a.Context, err = tr.Start(ctx, o)
		}
		if err == nil && ev.Source != "resume" {
			a.Context, err = withReport(ctx, tr, st, sid, a.Context)
		}
	case hook.SubagentStart:
		// Claude Code and Codex report a subagent inside its parent's
		// session; OpenCode gives it a session of its own.
		child, parent := sid, ev.Parent
		if ev.AgentID != "" {
			// The host names the main session only: the subagent may be
			// a subagent's (session.Tracker.Delegator).
			child = sid + "/" + ev.AgentID
			if parent, err = tr.Delegator(ctx, sid); err != nil {
				return a, false, err
			}
		}
		if child != "" {
			_, a.Context, err = tr.Start(ctx, session.StartOptions{ID: child, Parent: parent, Role: ev.AgentType, Host: h.Name()})
			if err == nil {
				a.Context, err = withReport(ctx, tr, st, child, a.Context)
			}
		}
	case hook.SubagentStop:
		if ev.AgentID != "" && sid != "" {
			if a.Block, err = reportStop(ctx, tr, st, h, ev, opt, sid+"/"+ev.AgentID); err == nil && a.Block == "" {
				err = ignoreNotFound(tr.End(ctx, sid+"/"+ev.AgentID, session.Ended))
			}
		}
	case hook.Prompt:
		if sid != "" && ev.AgentType != "" {
			// OpenCode names the agent of each message (build, plan, or a
			// subagent): when the policy has that role, the session takes it.
			_, err = tr.TakeRole(ctx, sid, ev.AgentType)
		}
		if err == nil && sid != "" && strings.TrimSpace(ev.Prompt) != "" {
			if _, err = tr.Prompt(ctx, sid, ev.Prompt); err == nil {
				// The request is recorded for the report's completion, and
				// an identical request's report in the response cache
				// answers it (report.cache): the prompt is refused with it.
				var cerr error
				if a.Block, cerr = reportPrompt(ctx, tr, st, h, ev, opt, sid); cerr != nil {
					// The record and the cache only serve the report: a
					// failure leaves the prompt to the model.
					fmt.Fprintf(os.Stderr, "warden hook %s: report request: %v\n", h.Name(), cerr)
				}
				if a.Block == "" {
					a.Context, err = tr.Governance(ctx, sid)
				}
			}
		}
	case hook.System:
		// OpenCode rebuilds the system prompt for every request, so the
		// governance text goes into each one.
		if sid != "" {
			if a.Context, err = systemText(ctx, tr, sid, h.Name(), opt.role); err == nil {
				a.Context, err = withReport(ctx, tr, st, sid, a.Context)
			}
		}
	case hook.Compact:
		if sid != "" {
			_, err = tr.Compact(ctx, sid)
		}
	case hook.Model:
		if sid != "" {
			if a.Context, err = modelText(ctx, tr, sid, ev); err == nil && a.Context != "" {
				a.Context, err = withReport(ctx, tr, st, sid, a.Context)
			}
		}
	case hook.Stop:
		if sid != "" {
			if !ev.ReportChecked {
				a.Block, err = reportStop(ctx, tr, st, h, ev, opt, sid)
			}
			if err == nil && a.Block == "" && !ev.ReportOnly {
				err = ignoreNotFound(tr.End(ctx, sid, session.Idle))
			}
		}
	case hook.End:
		if sid != "" {
			err = ignoreNotFound(tr.End(ctx, sid, session.Ended))
		}
	case hook.PostTool:
		if ev.Call.Session != "" && ev.Call.Tool != "" {
			// The history says what the host told: pass, fail, or unknown
			// (never a pass for an outcome the host did not give).
			outcome := ev.Outcome
			if ev.Failed {
				outcome = warden.OutcomeFail
			}
			if err = tr.RecordOutcome(ctx, ev.Call.Session, ev.Call.Tool, outcome, ev.Output); err != nil {
				return a, false, err
			}
			if ev.Outcome != "" {
				o := warden.Outcome{Session: ev.Call.Session, Tool: ev.Call.Tool, ToolUse: ev.ToolUse, OK: ev.Outcome == warden.OutcomeOK}
				if err = tr.CallOutcome(ctx, o); err != nil {
					return a, false, err
				}
			}
		}
		a.Context, err = guidance(ctx, tr.Store, ev)
		a.Context = confinedAfter(ev, tr.Engine.Policy(), a.Context)
	}
	return a, false, err
}

// statelessAnswer decides a call with the policy alone, and gives the
// session-start text of a session without state.
func statelessAnswer(eng *engine.Engine, h hook.Host, ev hook.Event, opt options) hook.Answer {
	switch ev.Kind {
	case hook.PreTool:
		d := eng.Decide(ev.Call, nil).Decision
		if d.Decision == warden.Ask && !opt.prompts {
			d = hook.AskWithoutPrompt(d, h.Name())
		}
		return hook.Answer{Decision: &d}
	case hook.SessionStart, hook.System, hook.SubagentStart, hook.Model:
		s := warden.Session{ID: ev.Session, Role: opt.role}
		if ev.Kind == hook.SubagentStart {
			s.Role, s.Depth = ev.AgentType, 1
		}
		text, err := session.Prefix(eng.Policy(), s, warden.ProjectState{})
		if err != nil {
			text = warden.FailClosed(err).ModelText()
		} else if ev.Kind == hook.Model && ev.Carries(text) {
			// A role's own prompt, without warden's markers, is there.
			text = ""
		}
		return hook.Answer{Context: text}
	}
	return hook.Answer{}
}

func ignoreNotFound(_ warden.Session, err error) error {
	if errors.Is(err, warden.ErrNotFound) {
		return nil
	}
	return err
}

// LoadEngine finds, loads and compiles the policy for the directory the
// host reports, with a view of the workspace built for this one call. No
// policy is an error, never an allow.
func LoadEngine(cwd, policyFile string) (*engine.Engine, error) {
	if policyFile == "" {
		dir := cwd
		if dir == "" {
			var err error
			if dir, err = os.Getwd(); err != nil {
				return nil, fmt.Errorf("find policy: %w", err)
			}
		}
		f, err := FindPolicy(dir)
		if err != nil {
			return nil, err
		}
		policyFile = f
	}
	pol, err := policy.LoadStable(policyFile)
	if err != nil {
		return nil, err
	}
	eng, err := engine.Compile(pol, workspace.New())
	if err != nil {
		return nil, fmt.Errorf("compile policy %s: %w", pol.File, err)
	}
	return eng, nil
}

// PanicStack is the head of the stack of a panic being recovered: for a
// log, never for the model.
func PanicStack() string { return firstLines(string(debug.Stack()), 14) }

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// FindPolicy finds the policy for a project folder (policy.Find), and
// refuses one found above a folder that was governed by a policy of its
// own: a folder on the way up with warden's store (.warden/warden.db) or
// a policy entry that cannot be read (a broken link) lost its policy, and
// a policy further up, perhaps a permissive one, must not take over its
// calls in silence.
func FindPolicy(dir string) (string, error) {
	file, err := policy.Find(dir)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find policy: %w", err)
	}
	top := filepath.Dir(file)
	// (A policy file that is there but cannot be read, a broken link,
	// policy.Find reports itself.)
	for d := abs; d != top; {
		store := filepath.Join(d, filepath.FromSlash(sqlite.DefaultFile))
		if st, err := os.Stat(store); err == nil && !st.IsDir() {
			return "", fmt.Errorf("the policy of %s is gone: %s holds its store, but there is no %s next to it; warden does not let %s govern %s instead "+
				"(restore %s, or remove %s if that folder is no longer governed on its own)",
				d, store, policy.FileName, file, d, filepath.Join(d, policy.FileName), filepath.Dir(store))
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return file, nil
}
