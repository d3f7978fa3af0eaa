package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/claudecode"
	"github.com/warden-run/warden/codex"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/geminicli"
	"github.com/warden-run/warden/opencode"
	"github.com/warden-run/warden/policy"
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
}

// hookAnswer is what warden has to say about an event.
type hookAnswer struct {
	decision *warden.Decision // before a tool
	context  string           // text for the model
}

// hookHost is one host's adapter, as the hook command uses it.
type hookHost struct {
	name string
	// prompt reports whether the host can ask the user itself (an ask
	// is then passed through); hosts without one get warden's queue.
	prompt  bool
	decode  func(data []byte) (hookEvent, error)
	answer  func(ev hookEvent, a hookAnswer, audit bool) []byte
	failure func(event string, d warden.Decision) []byte
}

var hookHosts = map[string]*hookHost{
	"claude": {
		name: claudecode.Host, prompt: true,
		decode: func(data []byte) (hookEvent, error) { return decodeClaude(data, claudecode.Host) },
		answer: func(ev hookEvent, a hookAnswer, audit bool) []byte {
			if a.decision != nil {
				return claudecode.Decide(*a.decision, claudecode.Options{NoAllow: audit}).Marshal()
			}
			return claudecode.Context(ev.name, a.context).Marshal()
		},
		failure: func(event string, d warden.Decision) []byte { return claudecode.Failure(event, d).Marshal() },
	},
	"codex": {
		name:   codex.Host,
		decode: func(data []byte) (hookEvent, error) { return decodeClaude(data, codex.Host) },
		answer: func(ev hookEvent, a hookAnswer, audit bool) []byte {
			if a.decision != nil {
				return codex.Decide(*a.decision).Marshal()
			}
			return codex.Context(ev.name, a.context).Marshal()
		},
		failure: func(event string, d warden.Decision) []byte { return codex.Failure(event, d).Marshal() },
	},
	"gemini": {
		name: geminicli.Host, prompt: true,
		decode: decodeGemini,
		answer: func(ev hookEvent, a hookAnswer, audit bool) []byte {
			if a.decision != nil {
				return geminicli.Decide(*a.decision, geminicli.Options{NoAllow: audit}).Marshal()
			}
			return geminicli.Context(ev.name, a.context).Marshal()
		},
		failure: func(event string, d warden.Decision) []byte { return geminicli.Failure(event, d).Marshal() },
	},
	"opencode": {
		name:   opencode.Host,
		decode: decodeOpenCode,
		answer: func(ev hookEvent, a hookAnswer, audit bool) []byte {
			if a.decision != nil {
				return opencode.Decide(*a.decision).Marshal()
			}
			return opencode.Context(ev.name, a.context).Marshal()
		},
		failure: func(event string, d warden.Decision) []byte { return opencode.Failure(event, d).Marshal() },
	},
}

func decodeClaude(data []byte, host string) (hookEvent, error) {
	in, err := claudecode.ParseInput(data)
	if err != nil {
		return hookEvent{}, err
	}
	ev := hookEvent{name: in.HookEventName, session: in.SessionID, cwd: in.Cwd, source: in.Source,
		prompt: in.Prompt, agentType: in.AgentType, agentID: in.AgentID}
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
	case geminicli.PreCompress:
		ev.kind = evCompact
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
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	policyFile := fs.String("policy", "", "policy `file` (default: warden.yaml in the directory the host reports, or a parent)")
	timeout := fs.Duration("timeout", hookDeadline, "answer deny if no decision is made within this `duration`")
	role := fs.String("role", "", "`role` of the top-level agent (subagents take their type as role)")
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
	h, ok := hookHosts[env.Args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "warden hook: unknown host %q (want claude, codex, gemini or opencode)\n", env.Args[0])
		return ExitError
	}
	if err := fs.Parse(env.Args[1:]); err != nil {
		return ExitError
	}
	data, err := io.ReadAll(io.LimitReader(env.Stdin, 32<<20))
	if err != nil {
		return hookFatal(env, h, "", fmt.Errorf("read hook input: %w", err))
	}
	ev, err := h.decode(data)
	if err != nil {
		return hookFatal(env, h, "", err)
	}

	// Decide in a goroutine so that a panic or a hang still gets a deny
	// answer: the hosts treat a crash or timeout as "no objection".
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("internal error (panic: %v)\n%s", r, firstLines(string(debug.Stack()), 12))}
			}
		}()
		if ev.call.Role == "" && ev.call.Depth == 0 {
			ev.call.Role = *role
		}
		out, err := handleHook(ctx, h, ev, *policyFile)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return hookFailure(env, h, ev, r.err)
		}
		env.Stdout.Write(r.out)
		return ExitOK
	case <-ctx.Done():
		return hookFailure(env, h, ev, fmt.Errorf("no decision within %s (%v)", *timeout, context.Cause(ctx)))
	}
}

// handleHook decides one event and renders the host's answer.
func handleHook(ctx context.Context, h *hookHost, ev hookEvent, policyFile string) ([]byte, error) {
	if hookTestStall != nil {
		hookTestStall()
	}
	if ev.kind == evOther {
		return h.answer(ev, hookAnswer{}, false), nil
	}
	eng, err := loadHookEngine(ev.cwd, policyFile)
	if err != nil {
		return nil, err
	}
	pol := eng.Policy()
	audit := pol.Mode == "audit"
	var a hookAnswer
	if r := ev.call.Role; r != "" && ev.call.Depth > 0 && pol.Roles[r] == nil {
		// A host's own subagent type (general-purpose, Explore, ...) that
		// the policy does not name as a role: no role restrictions.
		ev.call.Role = ""
	}
	switch ev.kind {
	case evPreTool:
		d := eng.Decide(ev.call)
		if d.Decision == warden.Ask && !h.prompt {
			d = askWithoutPrompt(d, h.name)
		}
		if d.Mode == "audit" {
			audit = true
		}
		a.decision = &d
	case evSessionStart, evSystem:
		a.context = governanceText(pol, ev)
	}
	return h.answer(ev, a, audit), ctx.Err()
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
	pol, err := policy.Load(policyFile)
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

// governanceText is the text given to the model at session start: which
// policy governs the session and how refusals look.
func governanceText(pol *policy.Policy, ev hookEvent) string {
	var b strings.Builder
	b.WriteString("This project is governed by warden (policy " + pol.File + ").\n")
	b.WriteString("Every tool call is checked against that policy before it runs. A call the policy does not allow\n")
	b.WriteString("is blocked with a reason and a suggestion: follow the suggestion, do not retry the same call\n")
	b.WriteString("another way, and ask the user when a call needs approval.\n")
	if ev.source == "compact" {
		b.WriteString("The conversation was compacted; these rules still apply.\n")
	}
	return b.String()
}

// hookFailure answers a failure at a known event: deny before a tool, a
// message elsewhere, always in the host's JSON.
func hookFailure(env *Env, h *hookHost, ev hookEvent, err error) int {
	d := warden.FailClosed(err)
	env.Stdout.Write(h.failure(ev.name, d))
	fmt.Fprintf(env.Stderr, "warden hook %s: %v\n", h.name, err)
	return ExitOK
}

// hookFatal answers input warden could not even decode: a deny in JSON on
// stdout, the reason on stderr, and exit code 2, which every host reads
// as "block" whatever the event was.
func hookFatal(env *Env, h *hookHost, event string, err error) int {
	d := warden.FailClosed(err)
	env.Stdout.Write(h.failure(event, d))
	fmt.Fprintln(env.Stderr, claudecode.ModelText(d))
	return ExitDeny
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
