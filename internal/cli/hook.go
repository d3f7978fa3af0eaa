package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/claudecode"
	"github.com/warden-run/warden/codex"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/geminicli"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/opencode"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
)

func init() {
	register("hook", "answer an agent host's hook on stdin: warden hook claude|codex|gemini|opencode", runHook)
}

// hookDeadline bounds one hook answer. Hosts give a hook 30 to 60 seconds
// and treat a timeout as "no objection", so warden answers deny well before.
const hookDeadline = 10 * time.Second

// hookTestStall, when set by a test, runs before each decision (to make it
// panic or hang).
var hookTestStall func()

// eventKind is what a host event means to warden, whatever the host calls it.
type eventKind int

const (
	evOther eventKind = iota
	evSessionStart
	evPrompt
	evPreTool
	evPostTool
	evSubagentStart
	evSubagentStop
	evCompact
	evStop
	evEnd
	evSystem // OpenCode: the system prompt is being built
	// evModel: a main-chat model request that lacks warden's governance
	// text (Gemini CLI's BeforeModel); the other requests are evOther.
	evModel
)

// hookEvent is a host event decoded into warden's terms.
type hookEvent struct {
	kind    eventKind
	name    string // the host's event name, for the answer
	session string
	cwd     string
	source  string // session start: startup, resume, clear, compact
	prompt  string
	call    warden.ToolCall
	output  string // after a tool: its result text
	failed  bool
	// agentType and agentID name a subagent; parent is the parent session.
	agentType, agentID, parent string
	// llm is the model request of an evModel event.
	llm *geminicli.LLMRequest
	// stopActive: Claude Code's stop_hook_active, the host already
	// continues because of a Stop hook. warden's answer is then empty.
	stopActive bool
}

// hookAnswer is what warden has to say about an event.
type hookAnswer struct {
	decision *warden.Decision // before a tool
	context  string           // text for the model
}

// render says how to render a decision: audit mode (an allow is left
// unsaid) and whether the host can prompt its user right now.
type render struct {
	audit, prompts bool
}

func never(*hookRuntime) bool { return false }

// hookRuntime is where a hook runs: in its own process (`warden hook`), or
// inside hookd for a warden-hook client, which keeps compiled policies and
// open stores between calls.
type hookRuntime struct {
	// dir is the caller's working directory ("" is this process's).
	dir string
	// interactive reports whether the host (claude, gemini) that runs the
	// hook can prompt its user (only the hook's own process can look).
	interactive func(host string) bool
	// engine finds, loads and compiles the policy for a project folder.
	engine func(cwd, policyFile string) (*engine.Engine, error)
	// store opens the store for a policy; release is called when done.
	store func(ctx context.Context, policyFile, storeURL string) (st warden.Store, release func(), err error)
	// callID identifies the call in the audit trail ("": a new one).
	callID string
}

// localRuntime runs a hook in its own process: it loads the policy and
// opens the store for this one call.
var localRuntime = &hookRuntime{
	interactive: hookd.HostInteractive,
	engine:      loadHookEngine,
	store: func(ctx context.Context, policyFile, storeURL string) (warden.Store, func(), error) {
		st, err := openStore(ctx, policyFile, storeURL)
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	},
}

// abs makes a path relative to the caller's directory absolute.
func (rt *hookRuntime) abs(path string) string {
	if path == "" || rt.dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(rt.dir, path)
}

// absStore makes a store URL's relative SQLite path absolute.
func (rt *hookRuntime) absStore(u string) string {
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

// hookHost is one host's adapter, as the hook command uses it.
type hookHost struct {
	key  string // claude, codex, gemini, opencode
	name string
	// prompts reports whether the host can ask the user itself now (an
	// ask is then passed through); hosts without one get warden's queue.
	prompts func(rt *hookRuntime) bool
	decode  func(data []byte) (hookEvent, error)
	answer  func(ev hookEvent, a hookAnswer, r render) []byte
}

var hookHosts = map[string]*hookHost{
	"claude": {
		// claude -p has nobody to prompt: its asks use warden's queue.
		key: "claude", name: claudecode.Host, prompts: func(rt *hookRuntime) bool { return rt.interactive("claude") },
		decode: func(data []byte) (hookEvent, error) { return decodeClaude(data, claudecode.Host) },
		answer: func(ev hookEvent, a hookAnswer, r render) []byte {
			if a.decision != nil {
				return claudecode.Decide(*a.decision, claudecode.Options{NoAllow: r.audit, NoAsk: !r.prompts}).Marshal()
			}
			return claudecode.Context(ev.name, a.context).Marshal()
		},
	},
	"codex": {
		key: "codex", name: codex.Host, prompts: never,
		decode: func(data []byte) (hookEvent, error) { return decodeClaude(data, codex.Host) },
		answer: func(ev hookEvent, a hookAnswer, r render) []byte {
			if a.decision != nil {
				return codex.Decide(*a.decision).Marshal()
			}
			return codex.Context(ev.name, a.context).Marshal()
		},
	},
	"gemini": {
		key: "gemini", name: geminicli.Host, prompts: func(rt *hookRuntime) bool { return rt.interactive("gemini") },
		decode: decodeGemini,
		answer: func(ev hookEvent, a hookAnswer, r render) []byte {
			if a.decision != nil {
				return geminicli.Decide(*a.decision, geminicli.Options{NoAllow: r.audit, NoAsk: !r.prompts}).Marshal()
			}
			if ev.kind == evModel {
				return geminicli.ModelContext(ev.llm, a.context).Marshal()
			}
			return geminicli.Context(ev.name, a.context).Marshal()
		},
	},
	"opencode": {
		key: "opencode", name: opencode.Host, prompts: never,
		decode: decodeOpenCode,
		answer: func(ev hookEvent, a hookAnswer, r render) []byte {
			if a.decision != nil {
				return opencode.Decide(*a.decision).Marshal()
			}
			return opencode.Context(ev.name, a.context).Marshal()
		},
	},
}

func decodeClaude(data []byte, host string) (hookEvent, error) {
	in, err := claudecode.ParseInput(data)
	if err != nil {
		return hookEvent{}, err
	}
	ev := hookEvent{name: in.HookEventName, session: in.SessionID, cwd: in.Cwd, source: in.Source,
		prompt: in.Prompt, agentType: in.AgentType, agentID: in.AgentID, stopActive: in.StopHookActive}
	switch in.HookEventName {
	case claudecode.SessionStart:
		ev.kind = evSessionStart
	case claudecode.UserPromptSubmit:
		ev.kind = evPrompt
	case claudecode.PreToolUse:
		ev.kind = evPreTool
	case claudecode.PostToolUse, claudecode.PostToolUseFailure:
		ev.kind = evPostTool
		ev.output = in.ResponseText()
		ev.failed = in.HookEventName == claudecode.PostToolUseFailure
	case claudecode.SubagentStart:
		ev.kind = evSubagentStart
	case claudecode.SubagentStop:
		ev.kind = evSubagentStop
	case claudecode.PreCompact:
		ev.kind = evCompact
	case claudecode.Stop:
		ev.kind = evStop
	case claudecode.SessionEnd:
		ev.kind = evEnd
	}
	if in.ToolName != "" {
		ev.call = in.ToolCall(host)
		// Inside a subagent the role is the subagent's type and the depth
		// at least 1 (the session layer tracks deeper nesting).
		if in.AgentID != "" {
			ev.call.Role, ev.call.Depth = in.AgentType, 1
			if ev.call.Session != "" {
				ev.call.Session += "/" + in.AgentID
			}
		}
	}
	return ev, nil
}

func decodeGemini(data []byte) (hookEvent, error) {
	in, err := geminicli.ParseInput(data)
	if err != nil {
		return hookEvent{}, err
	}
	ev := hookEvent{name: in.HookEventName, session: in.SessionID, cwd: in.Cwd, source: in.Source, prompt: in.Prompt}
	switch in.HookEventName {
	case geminicli.SessionStart:
		ev.kind = evSessionStart
	case geminicli.BeforeAgent:
		ev.kind = evPrompt
	case geminicli.BeforeTool:
		ev.kind = evPreTool
	case geminicli.AfterTool:
		ev.kind = evPostTool
		ev.output = in.ResponseText()
		ev.failed = in.Failed()
	case geminicli.BeforeModel:
		// Gemini CLI fires BeforeModel before every model request, its
		// subagents' too, and keeps in its history the governance text
		// warden gave at SessionStart or BeforeAgent until it compresses
		// the history: only a main-chat request without that text is
		// warden's business (see modelText). The others are answered
		// without loading anything.
		if in.LLMRequest.MainChat() && !carriesMarker(in.LLMRequest) {
			ev.kind, ev.llm = evModel, in.LLMRequest
		}
	case geminicli.PreCompress:
		// Left evOther: Gemini CLI fires PreCompress before every model
		// turn, before it decides whether to compress, so it is no sign of
		// a compaction (`warden init` no longer wires it); BeforeModel
		// shows one.
	case geminicli.AfterAgent:
		ev.kind = evStop
	case geminicli.SessionEnd:
		ev.kind = evEnd
	}
	if in.ToolName != "" {
		ev.call = in.ToolCall()
	}
	return ev, nil
}

func decodeOpenCode(data []byte) (hookEvent, error) {
	in, err := opencode.ParseInput(data)
	if err != nil {
		return hookEvent{}, err
	}
	ev := hookEvent{name: in.Event, session: in.SessionID, cwd: in.Directory, prompt: in.Prompt,
		output: in.Output, agentType: in.Agent, parent: in.ParentID}
	switch in.Event {
	case opencode.SessionCreated:
		ev.kind, ev.source = evSessionStart, "startup"
		if in.ParentID != "" {
			ev.kind = evSubagentStart
		}
	case opencode.ChatMessage:
		ev.kind = evPrompt
	case opencode.ToolBefore:
		ev.kind = evPreTool
	case opencode.ToolAfter:
		ev.kind = evPostTool
	case opencode.SystemTransform:
		ev.kind = evSystem
	case opencode.SessionCompacted:
		ev.kind = evCompact
	case opencode.SessionIdle:
		ev.kind = evStop
	case opencode.SessionDeleted:
		ev.kind = evEnd
	}
	if in.Tool != "" {
		ev.call = in.ToolCall()
	}
	return ev, nil
}

func runHook(ctx context.Context, env *Env) int {
	rt := *localRuntime
	// warden-hook gives the id of a call hookd may have taken already.
	rt.callID = os.Getenv(hookd.CallIDEnv)
	return runHookWith(ctx, env, &rt)
}

// runHookWith is `warden hook` in the given runtime.
func runHookWith(ctx context.Context, env *Env, rt *hookRuntime) int {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	policyFile := fs.String("policy", "", "policy `file` (default: warden.yaml in the directory the host reports, or a parent)")
	timeout := fs.Duration("timeout", hookDeadline, "answer deny if no decision is made within this `duration`")
	role := fs.String("role", "", "`role` of the top-level agent (subagents take their type as role)")
	store := fs.String("store", "", "store `URL`: a SQLite file or postgres://... (default: .warden/warden.db next to the policy)")
	stateless := fs.Bool("stateless", false, "decide with the policy alone: no store, no session state, approvals or audit trail")
	wait := fs.Duration("wait", 0, "for hosts that cannot ask the user (codex, opencode): wait this `long` for a human to answer a queued approval")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: warden hook claude|codex|gemini|opencode [--policy FILE]\n\n"+
			"Reads the host's hook JSON on stdin and answers in the host's JSON on stdout.\n"+
			"`warden init HOST` wires it into the host's configuration.")
		fs.PrintDefaults()
	}
	if len(env.Args) == 0 {
		fs.Usage()
		return ExitError
	}
	if isHelp(env.Args[0]) {
		fs.Usage()
		return ExitOK
	}
	// The input first (unless help is asked for): the event it names
	// decides how a failure is said.
	var data []byte
	var inErr error
	if !slices.ContainsFunc(env.Args[1:], isHelp) {
		data, inErr = warden.ReadInput(env.Stdin)
	}
	event := hookd.EventName(data)
	h, ok := hookHosts[env.Args[0]]
	if !ok {
		// Answer in Claude Code's shape (Codex and Gemini CLI read it too)
		// and exit 2, which every host reads as "block".
		return hookFatal(env, hookHosts["claude"], event, fmt.Errorf("warden hook: unknown host %q (want claude, codex, gemini or opencode)", env.Args[0]))
	}
	if err := fs.Parse(env.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		// A mistake in the hook's command line must not turn into "no
		// objection": answer deny.
		return hookFatal(env, h, event, fmt.Errorf("warden hook %s: bad command line %q: %v", env.Args[0], env.Args[1:], err))
	}
	if inErr != nil {
		return hookFatal(env, h, event, fmt.Errorf("hook input from %s: %w", h.name, inErr))
	}
	ev, err := h.decode(data)
	if err != nil {
		return hookFatal(env, h, event, warden.Errorf(warden.CodeBadInput, "hook input from %s: %v", h.name, err))
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
	reserve := min(2*time.Second, (*timeout)/5)
	ctx, cancel := context.WithTimeout(ctx, *timeout+*wait-reserve)
	defer cancel()
	// The goroutine works on its own copy of the event: on a timeout this
	// goroutine answers from ev while the decision may still be running.
	gev := ev
	if gev.call.Role == "" && gev.call.Depth == 0 {
		gev.call.Role = *role
	}
	if ev.cwd == "" {
		ev.cwd, gev.cwd = rt.dir, rt.dir
	}
	callID := rt.callID
	if callID == "" {
		callID = hookd.NewCallID()
	}
	opt := hookOptions{policy: rt.abs(*policyFile), store: rt.absStore(*store), role: *role, wait: *wait,
		stateless: *stateless, host: h.name, prompts: ev.kind == evPreTool && h.prompts(rt), stall: hookTestStall, rt: rt,
		callID: callID}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("internal error (panic: %v)", r), stack: firstLines(string(debug.Stack()), 12)}
			}
		}()
		out, err := handleHook(ctx, h, gev, opt)
		done <- result{out: out, err: err}
	}()
	// fail answers a failure before a tool with a record of it in the
	// audit trail (one record per answer; see failureAnswer).
	fail := func(err error) int {
		if ev.kind == evPreTool && !*stateless {
			call := ev.call
			if call.Role == "" && call.Depth == 0 {
				call.Role = *role
			}
			out, rerr := failureAnswer(h, ev, call, opt, err, reserve)
			if rerr == nil {
				fmt.Fprintf(env.Stderr, "warden hook %s: %v\n", h.name, err)
				env.Stdout.Write(out)
				return ExitOK
			}
			fmt.Fprintf(env.Stderr, "warden hook %s: no audit record of this failure: %v\n", h.name, rerr)
		}
		return hookFailure(env, h, ev, err)
	}
	select {
	case r := <-done:
		if r.stack != "" {
			fmt.Fprintln(env.Stderr, r.stack)
		}
		if r.err != nil {
			return fail(r.err)
		}
		env.Stdout.Write(r.out)
		return ExitOK
	case <-ctx.Done():
		return fail(warden.Errorf(warden.CodeTimeout, "no decision within %s (%v)", *timeout+*wait, context.Cause(ctx)))
	}
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
func failureAnswer(h *hookHost, ev hookEvent, call warden.ToolCall, opt hookOptions, cause error, reserve time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), max(reserve/2, 100*time.Millisecond))
	defer cancel()
	file := opt.policy
	if file == "" {
		f, err := policy.Find(ev.cwd)
		if err != nil {
			return nil, err
		}
		file = f
	}
	call.Host = h.name
	fail := warden.FailClosed(cause)
	res, err := func() (session.Result, error) {
		st, release, err := opt.rt.store(ctx, file, opt.store)
		if err != nil {
			return session.Result{}, err
		}
		defer release()
		return session.RecordFailure(ctx, st, call, opt.callID, fail)
	}()
	if err != nil {
		// A SQLite store too busy to take the record in time (many hook
		// processes at once): the record waits, synced, in the store's
		// spool file, and joins the audit trail when the store is next
		// opened.
		db := sqliteFile(opt.store)
		if opt.store == "" {
			db = DefaultStorePath(file)
		}
		if db == "" || sqlite.Spool(db, session.FailureRecord(call, opt.callID, fail)) != nil {
			return nil, err
		}
		res = session.Result{Decision: fail}
	}
	d := res.Decision
	if d.Decision == warden.Ask && !opt.prompts {
		d = askWithoutPrompt(d, h.name)
	}
	return h.answer(ev, hookAnswer{decision: &d}, render{audit: d.Mode == "audit", prompts: opt.prompts}), nil
}

// hookOptions are the hook command's flags.
type hookOptions struct {
	policy string
	store  string
	role   string
	wait   time.Duration
	// stateless decides with the engine alone (no store).
	stateless bool
	// host is the host's name; prompts whether it can ask its user now.
	host    string
	prompts bool
	// stall is hookTestStall, read once before the decision starts.
	stall func()
	rt    *hookRuntime
	// callID identifies the call in the audit trail.
	callID string
}

// handleHook decides one event with the session layer and renders the
// host's answer. Any error is answered as a failure (deny before a tool).
func handleHook(ctx context.Context, h *hookHost, ev hookEvent, opt hookOptions) ([]byte, error) {
	if opt.stall != nil {
		opt.stall()
	}
	if ev.kind == evOther {
		return h.answer(ev, hookAnswer{}, render{}), nil
	}
	eng, err := opt.rt.engine(ev.cwd, opt.policy)
	if err != nil {
		return nil, err
	}
	pol := eng.Policy()
	if r := ev.call.Role; r != "" && ev.call.Depth > 0 && pol.Roles[r] == nil {
		// A host's own subagent type (general-purpose, Explore, ...) that
		// the policy does not name as a role: no role restrictions.
		ev.call.Role = ""
	}
	if ev.agentType != "" && pol.Roles[ev.agentType] == nil {
		ev.agentType = ""
	}
	if opt.stateless {
		return h.answer(ev, statelessAnswer(eng, ev, opt), render{audit: pol.Mode == "audit", prompts: opt.prompts}), ctx.Err()
	}
	st, release, err := opt.rt.store(ctx, pol.File, opt.store)
	if err != nil {
		return nil, fmt.Errorf("open the warden store: %w", err)
	}
	defer release()
	tr := session.New(eng, st)
	a, audit, err := hookEventAnswer(ctx, tr, st, h, ev, opt)
	if err != nil {
		return nil, err
	}
	return h.answer(ev, a, render{audit: audit || pol.Mode == "audit", prompts: opt.prompts}), ctx.Err()
}

// hookEventAnswer does what an event means for the session and returns
// what to tell the host. audit reports a decision made in audit mode.
func hookEventAnswer(ctx context.Context, tr *session.Tracker, st warden.Store, h *hookHost, ev hookEvent, opt hookOptions) (a hookAnswer, audit bool, err error) {
	sid := ev.session
	switch ev.kind {
	case evPreTool:
		res, err := tr.Decide(ctx, ev.call, session.Options{HostPrompts: opt.prompts, Wait: opt.wait, CallID: opt.callID})
		if err != nil {
			return a, false, err
		}
		d := res.Decision
		if d.Decision == warden.Ask && !opt.prompts && res.Approval == nil {
			d = askWithoutPrompt(d, h.name)
		}
		return hookAnswer{decision: &d}, d.Mode == "audit", nil
	case evSessionStart:
		if sid == "" {
			return a, false, nil
		}
		switch ev.source {
		case "resume":
			a.context, err = tr.Resume(ctx, sid)
		case "compact":
			if _, err = tr.Compact(ctx, sid); err == nil {
				a.context, err = tr.Governance(ctx, sid)
			}
		default: // startup, clear
			_, a.context, err = tr.Start(ctx, session.StartOptions{ID: sid, Role: opt.role, Host: h.name})
		}
	case evSubagentStart:
		// Claude Code and Codex report a subagent inside its parent's
		// session; OpenCode gives it a session of its own.
		child, parent := sid, ev.parent
		if ev.agentID != "" {
			child, parent = sid+"/"+ev.agentID, sid
		}
		if child != "" {
			_, a.context, err = tr.Start(ctx, session.StartOptions{ID: child, Parent: parent, Role: ev.agentType, Host: h.name})
		}
	case evSubagentStop:
		if ev.agentID != "" && sid != "" {
			err = ignoreNotFound(tr.End(ctx, sid+"/"+ev.agentID, session.Ended))
		}
	case evPrompt:
		if sid != "" && ev.agentType != "" {
			// OpenCode names the agent of each message (build, plan, or a
			// subagent): when the policy has that role, the session takes it.
			_, err = st.UpdateSession(ctx, sid, func(s *warden.Session, created bool) error {
				if created {
					s.StartedAt, s.Status = time.Now().UTC(), warden.SessionActive
				}
				if s.Role == "" {
					s.Role = ev.agentType
				}
				return nil
			})
		}
		if err == nil && sid != "" && strings.TrimSpace(ev.prompt) != "" {
			if _, err = tr.Prompt(ctx, sid, ev.prompt); err == nil {
				a.context, err = tr.Governance(ctx, sid)
			}
		}
	case evSystem:
		// OpenCode rebuilds the system prompt for every request, so the
		// governance text goes into each one.
		if sid != "" {
			a.context, err = systemText(ctx, tr, st, sid, h.name, opt.role)
		}
	case evCompact:
		if sid != "" {
			_, err = tr.Compact(ctx, sid)
		}
	case evModel:
		if sid != "" {
			a.context, err = modelText(ctx, tr, st, sid, ev.llm)
		}
	case evStop:
		if sid != "" {
			err = ignoreNotFound(tr.End(ctx, sid, session.Idle))
		}
	case evEnd:
		if sid != "" {
			err = ignoreNotFound(tr.End(ctx, sid, session.Ended))
		}
	case evPostTool:
		if ev.call.Session != "" && ev.call.Tool != "" {
			if err = tr.Outcome(ctx, ev.call.Session, ev.call.Tool, !ev.failed, ev.output); err != nil {
				return a, false, err
			}
		}
		a.context, err = guidance(ctx, st, ev)
	}
	return a, false, err
}

// statelessAnswer decides a call with the policy alone, and gives the
// session-start text of a session without state.
func statelessAnswer(eng *engine.Engine, ev hookEvent, opt hookOptions) hookAnswer {
	switch ev.kind {
	case evPreTool:
		d := eng.Decide(ev.call)
		if d.Decision == warden.Ask && !opt.prompts {
			d = askWithoutPrompt(d, opt.host)
		}
		return hookAnswer{decision: &d}
	case evSessionStart, evSystem, evSubagentStart, evModel:
		s := warden.Session{ID: ev.session, Role: opt.role}
		if ev.kind == evSubagentStart {
			s.Role, s.Depth = ev.agentType, 1
		}
		text, err := session.Prefix(eng.Policy(), s, warden.ProjectState{})
		if err != nil {
			text = claudecode.ModelText(warden.FailClosed(err))
		} else if ev.kind == evModel && carries(ev.llm, text) {
			// A role's own prompt, without warden's markers, is there.
			text = ""
		}
		return hookAnswer{context: text}
	}
	return hookAnswer{}
}

func ignoreNotFound(_ warden.Session, err error) error {
	if errors.Is(err, warden.ErrNotFound) {
		return nil
	}
	return err
}

// systemText is the governance text for a system prompt: the session-start
// prefix, or the post-compaction reminder once the session was compacted.
func systemText(ctx context.Context, tr *session.Tracker, st warden.Store, sid, host, role string) (string, error) {
	s, ps, err := sessionState(ctx, st, sid)
	if errors.Is(err, warden.ErrNotFound) {
		_, text, err := tr.Start(ctx, session.StartOptions{ID: sid, Role: role, Host: host})
		return text, err
	}
	if err != nil {
		return "", err
	}
	pol := tr.Engine.Policy()
	if s.Compactions > 0 {
		return session.Reminder(pol, s, ps)
	}
	return session.Prefix(pol, s, ps)
}

// sessionState reads a session (an error wrapping warden.ErrNotFound when
// there is none) and the project state its governance text is made from.
func sessionState(ctx context.Context, st warden.Store, sid string) (warden.Session, warden.ProjectState, error) {
	s, err := st.Session(ctx, sid)
	if err != nil {
		return s, warden.ProjectState{}, err
	}
	ps, err := st.State(ctx)
	return s, ps, err
}

// governanceMarkers head warden's built-in session-start text and
// post-compaction reminder (session.Prefix, session.Reminder).
var governanceMarkers = []string{"WARDEN GOVERNANCE", "WARDEN REMINDER"}

// carriesMarker reports whether a model request carries warden's built-in
// governance text.
func carriesMarker(r *geminicli.LLMRequest) bool {
	for _, m := range governanceMarkers {
		if r.Contains(m) {
			return true
		}
	}
	return false
}

// carries reports whether a model request carries the governance text
// text, by its first line (escaped as Gemini CLI escapes hook text). This
// finds a role's own prompt or reminder from the policy, which need not
// have the built-in markers; a first line that changes with the state
// (the phase, say) is not found once it changed.
func carries(r *geminicli.LLMRequest, text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return r.Contains(geminicli.Escape(line))
		}
	}
	return false
}

// modelText is the governance text to add to a Gemini CLI model request
// that lacks warden's text. Gemini CLI keeps what SessionStart and
// BeforeAgent give in its history, so a session that was given its text
// has lost it: its history was compressed (or otherwise cut). That is
// recorded as a compaction, and the request gets the post-compaction
// reminder. A text added to a request is not kept in the history, so the
// reminder, now due (Tracker.Governance), goes into every request until
// the next prompt's BeforeAgent puts it into the history. A session warden
// does not know gets nothing here (SessionStart and BeforeAgent come first).
func modelText(ctx context.Context, tr *session.Tracker, st warden.Store, sid string, llm *geminicli.LLMRequest) (string, error) {
	s, ps, err := sessionState(ctx, st, sid)
	if errors.Is(err, warden.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	pol := tr.Engine.Policy()
	prefix, err := session.Prefix(pol, s, ps)
	if err != nil {
		return "", err
	}
	reminder, err := session.Reminder(pol, s, ps)
	if err != nil {
		return "", err
	}
	if carries(llm, prefix) || carries(llm, reminder) {
		return "", nil
	}
	if s.GovernanceInjected {
		if s, err = tr.Compact(ctx, sid); err != nil {
			return "", err
		}
	}
	if s.Compactions > 0 {
		return reminder, nil
	}
	// Never given its text (a failed SessionStart, say): the prefix is due.
	return prefix, nil
}

// guidance is the text added to a tool's result after the call broke a
// rule of the policy but was allowed to run (a warn rule, a first-tool
// violation in warn mode): the warnings of the call's audit record.
func guidance(ctx context.Context, st warden.Store, ev hookEvent) (string, error) {
	if ev.session == "" || ev.call.Tool == "" {
		return "", nil
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{Session: ev.call.Session, Tool: ev.call.Tool, Limit: 1})
	if err != nil || len(recs) == 0 || len(recs[0].Warnings) == 0 {
		return "", err
	}
	var b strings.Builder
	b.WriteString("## WARDEN GUIDANCE\n\nThe call you just made ran, but it broke the project's policy:\n")
	for _, w := range recs[0].Warnings {
		b.WriteString("- " + w + "\n")
	}
	b.WriteString("Follow the policy from now on; the governance text at the start of this session lists its rules.\n")
	return session.Plain(b.String()), nil
}

// loadHookEngine finds, loads and compiles the policy for the directory the
// host reports. No policy is an error, never an allow.
func loadHookEngine(cwd, policyFile string) (*engine.Engine, error) {
	if policyFile == "" {
		dir := cwd
		if dir == "" {
			var err error
			if dir, err = os.Getwd(); err != nil {
				return nil, fmt.Errorf("find policy: %w", err)
			}
		}
		f, err := policy.Find(dir)
		if err != nil {
			return nil, err
		}
		policyFile = f
	}
	pol, err := policy.LoadStable(policyFile)
	if err != nil {
		return nil, err
	}
	eng, err := engine.Compile(pol)
	if err != nil {
		return nil, fmt.Errorf("compile policy %s: %w", pol.File, err)
	}
	return eng, nil
}

// askWithoutPrompt turns an ask into a deny for a host that cannot ask the
// user itself, keeping the reason and saying how to get the call approved.
func askWithoutPrompt(d warden.Decision, host string) warden.Decision {
	d.Decision = warden.Deny
	d.Reason = strings.TrimSpace(d.Reason + " This call needs a human's approval, and " + host +
		" cannot ask the user from here.")
	if d.Suggestion == "" {
		d.Suggestion = "Ask the user to approve it, or do something the policy allows."
	}
	d.Recoverable = true
	return d
}

// hookFailure answers a failure at a known event: deny before a tool, a
// message elsewhere, always in the host's JSON.
//
// At the end of a turn (hookd.EndOfTurn) it neither blocks nor gives the
// model context, so that a failure cannot make the host ask the model
// again; with stop_hook_active it says nothing at all.
func hookFailure(env *Env, h *hookHost, ev hookEvent, err error) int {
	d := warden.FailClosed(err)
	if ev.stopActive && hookd.EndOfTurn(h.key, ev.name) {
		env.Stdout.Write([]byte("{}\n"))
	} else {
		env.Stdout.Write(hookd.Failure(h.key, ev.name, d))
	}
	fmt.Fprintf(env.Stderr, "warden hook %s: %v\n", h.name, err)
	return ExitOK
}

// hookFatal answers input warden could not even decode: a deny in JSON on
// stdout, the reason on stderr, and exit code 2, which every host reads
// as "block" whatever the event was; at the end of a turn, exit code 0
// and no block (hookd.EndOfTurn).
func hookFatal(env *Env, h *hookHost, event string, err error) int {
	d := warden.FailClosed(err)
	env.Stdout.Write(hookd.Failure(h.key, event, d))
	fmt.Fprintln(env.Stderr, claudecode.ModelText(d))
	return hookd.FailCode(h.key, event)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
