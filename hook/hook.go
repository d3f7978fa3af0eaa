// Package hook is warden's hook protocol in host-neutral terms: the Event a
// host's hook JSON means to warden, the Host interface each agent host's
// adapter implements (decode its input, render an answer or a failure in
// its wire format), the flags of `warden hook` and the hook deadline. The
// hosts themselves are packages under host/ (host/claude, host/codex,
// host/gemini, host/opencode), listed once by host.All.
//
// This package must stay light (no SQLite, no YAML, no policy engine): the
// small warden-hook client links it. The decision itself is made by
// package hook/handler.
//
// # One hook event, end to end
//
//  1. cmd/warden-hook runs for every event a host (Claude Code, Codex,
//     Gemini CLI, OpenCode) fires, with the hook JSON on stdin. It is a
//     hookd.Client (package internal/hookd): it forwards the event over a
//     Unix socket to the resident `warden hookd`, or, when none answers,
//     runs `warden hook HOST` itself (and starts hookd for next time).
//  2. `warden hookd` is package internal/hookd/server: it keeps compiled
//     policies and open stores between calls and answers each request
//     exactly as `warden hook` would, by calling the same command.
//  3. `warden hook HOST` (package internal/cli, file hook.go) parses the
//     Flags, reads stdin, looks the host up in host.All (host.Lookup) and hands the
//     input to handler.Run (package hook/handler).
//  4. handler.Run decodes the input with Host.Decode into an Event, then,
//     under the hook Deadline and a panic guard, loads and compiles the
//     policy (packages policy and engine), opens the store (package
//     client: package sqlite or postgres, both on internal/sqlstore) and
//     does what the event means through a session.Tracker (package
//     session), which alone writes sessions. A PreTool event goes to
//     Tracker.Decide: the engine decides the call in the session's
//     context, an ask waits for or queues an approval, and the call's
//     warden.AuditRecord is written to the store's audit log. A call that
//     gets no decision (timeout, crash, no policy) is recorded there too,
//     as the deny it is answered with. When the policy has a report
//     section, the session-start and post-compaction texts carry the
//     report instructions, and the end of a turn (Stop, SubagentStop,
//     AfterAgent, OpenCode's text.complete, turn.end and session.idle)
//     goes through the report gate (package reportgate), which may hold
//     the turn open: Answer.Block.
//  5. Host.Answer renders the decision or text in the host's JSON; the
//     command prints it (from hookd: the client prints what hookd sent).
//
// Stability: this package is internal to warden in spirit. Its API serves
// warden's own commands (warden hook, warden hookd, warden serve) and the
// host adapters, and changes with them in any release; a Go program governs
// its own agent loop with package client, and serves decisions with
// package serve.
package hook

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/wire"
)

// Deadline bounds one hook answer (the default of --timeout). Hosts give
// a hook 30 to 60 seconds and treat a timeout as "no objection", so warden
// answers deny well before. Every wait below it (the store's busy timeout)
// must be shorter.
const Deadline = 10 * time.Second

// TimeoutEnv names a variable that sets the default of --timeout (a Go
// duration such as 30s) for every hook of a machine or a test run: a loaded
// machine, or a CI runner, may need longer than Deadline. It must stay below
// the host's own hook timeout (60 s for Claude Code and Gemini CLI), or the
// host gives up first. A value that does not parse, or is not positive,
// leaves Deadline.
const TimeoutEnv = "WARDEN_HOOK_TIMEOUT"

// DefaultDeadline is the default of --timeout: $WARDEN_HOOK_TIMEOUT when it
// holds a positive duration, else Deadline.
func DefaultDeadline() time.Duration {
	if v := os.Getenv(TimeoutEnv); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return Deadline
}

// Kind is what a host event means to warden, whatever the host calls it.
type Kind int

const (
	Other Kind = iota
	SessionStart
	Prompt
	PreTool
	PostTool
	SubagentStart
	SubagentStop
	Compact
	Stop
	End
	System // OpenCode: the system prompt is being built
	// Model: a main-chat model request that lacks warden's governance
	// text (Gemini CLI's BeforeModel); the other requests are Other.
	Model
)

// Event is a host event decoded into warden's terms.
type Event struct {
	Kind    Kind
	Name    string // the host's event name, for the answer
	Session string
	Cwd     string
	Source  string // session start: startup, resume, clear, compact
	Prompt  string
	Call    warden.ToolCall
	Output  string // after a tool: its result text
	Failed  bool
	// ToolUse is the host's id for the call, where it gives one (Claude
	// Code's and Codex's tool_use_id, OpenCode's call id): the post-tool
	// event's outcome goes to the audit record of the call with that id.
	ToolUse string
	// Outcome is what a call did, after a tool: warden.OutcomeOK or
	// OutcomeFail where the host tells, "" where it does not (see
	// docs/policy.md, "Outcomes").
	Outcome string
	// AgentType and AgentID name a subagent; Parent is the parent session.
	AgentType, AgentID, Parent string
	// LLM is the model request of a Model event.
	LLM ModelRequest
	// StopActive: Claude Code's stop_hook_active, the host already
	// continues because of a Stop hook. warden's answer is then empty.
	StopActive bool
	// Message is the last assistant message at the end of a turn, as the
	// host reports it; Transcript the host's transcript file.
	Message, Transcript string
	// NoRewrite: the host cannot replace the call's input (an OpenCode
	// plugin written before warden rewrote calls to run confined).
	NoRewrite bool
	// ReportOnly, at a Stop: the host reports the turn's final text while
	// it can still hold the turn (OpenCode's plugin, as the text
	// completes): the report gate checks it and may hold the turn, and the
	// session is not marked idle (its idle event follows). ReportChecked:
	// the turn's final text was checked so already; the session is marked
	// idle without another check.
	ReportOnly, ReportChecked bool
}

// Answer is what warden has to say about an event.
type Answer struct {
	Decision *warden.Decision // before a tool
	// Input, before a tool, is the tool input to run instead of the
	// call's: an allowed shell command rewritten to run confined
	// (handler/confine.go).
	Input   map[string]any
	Context string // text for the model
	// Block, at the end of a turn, holds the turn open with this retry
	// text for the model (the report gate, package reportgate).
	Block string
}

// Render says how to render a decision: audit mode (an allow is left
// unsaid) and whether the host can prompt its user right now.
type Render struct {
	Audit, Prompts bool
}

// Host is one agent host's adapter to the hook protocol.
type Host interface {
	// Name is the host's name: the argument of `warden hook`, and the
	// host in the audit trail (claude, codex, gemini, opencode).
	Name() string
	// Decode reads the host's hook JSON.
	Decode(data []byte) (Event, error)
	// Answer renders warden's answer to an event in the host's JSON.
	Answer(ev Event, a Answer, r Render) []byte
	// Failure renders the answer when no decision could be made: a deny
	// before a tool, a message elsewhere. event is the host's event name
	// ("" when unknown: the deny shape).
	Failure(event string, d warden.Decision) []byte
	// EndOfTurn reports whether an event ends a turn (Claude Code's and
	// Codex's Stop and SubagentStop, Gemini CLI's AfterAgent, OpenCode's
	// session.idle, text.complete and turn.end). A failure there is answered without context, without
	// a block and with exit code 0: anything else makes the host ask the
	// model again, at every stop.
	EndOfTurn(event string) bool
	// Interactive reports whether the host that runs this process can show
	// its own confirmation prompt for an ask now. Hosts that never can
	// (Codex, OpenCode) get warden's approval queue instead.
	Interactive() bool
}

// ModelRequest is a model request a host lets a hook change (Gemini CLI's
// BeforeModel): warden adds its governance text to a main-chat request
// that lacks it.
type ModelRequest interface {
	// Carries reports whether the request already holds the text text
	// (by its first line).
	Carries(text string) bool
	// Answered reports whether the request holds a message of the model's:
	// a history the host compressed always does (the summary is followed
	// by the model's acknowledgement), the session's first request never.
	Answered() bool
}

// Carries reports whether the event's model request holds text; false
// when there is none.
func (ev Event) Carries(text string) bool { return ev.LLM != nil && ev.LLM.Carries(text) }

// Answered reports whether the event's model request holds a message of
// the model's; false when there is none.
func (ev Event) Answered() bool { return ev.LLM != nil && ev.LLM.Answered() }

// UnknownToolEvent is the error for an event warden does not know that
// carries a tool call: it may be the host's gate for that call (an event
// renamed or added by a new version of the host, a hook wired by hand),
// and answering it with nothing would let the call through unseen.
func UnknownToolEvent(event, tool string) error {
	return fmt.Errorf("unknown hook event %q with a call of tool %q: warden cannot tell what it asks, so it does not let the call through (wire warden with `warden init`, which uses only the events it knows)", event, tool)
}

// EventName reads the event name from a host's hook JSON, or "".
func EventName(data []byte) string {
	var in struct {
		Hook  string `json:"hook_event_name"`
		Event string `json:"event"`
	}
	if json.Unmarshal(data, &in) != nil {
		return ""
	}
	if in.Hook != "" {
		return in.Hook
	}
	return in.Event
}

// Flags are the flags of `warden hook HOST` (and of warden-hook).
type Flags struct {
	Policy    string
	Store     string
	Role      string
	Timeout   time.Duration
	Wait      time.Duration
	Stateless bool
	// Serve is the URL of a `warden serve` that decides and audits the
	// events instead of this machine (see package internal/hookd).
	Serve string
}

// FlagSet returns a flag set that parses the hook's flags into f.
func (f *Flags) FlagSet(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.Policy, "policy", "", "policy `file` (default: warden.yaml in the directory the host reports, or a parent)")
	fs.DurationVar(&f.Timeout, "timeout", DefaultDeadline(), "answer deny if no decision is made within this `duration`")
	fs.StringVar(&f.Role, "role", "", "`role` of the top-level agent (subagents take their type as role)")
	fs.StringVar(&f.Store, "store", "", "store `URL`: a SQLite file or postgres://... (default: .warden/warden.db next to the policy)")
	fs.BoolVar(&f.Stateless, "stateless", false, "decide with the policy alone: no store, no session state, approvals or audit trail")
	fs.StringVar(&f.Serve, "serve", "", "send the event to the warden service at this `URL` (warden serve), with the agent token in $WARDEN_SERVE_TOKEN; an unreachable service denies")
	fs.DurationVar(&f.Wait, "wait", 0, "for hosts that cannot ask the user (codex, opencode): wait this `long` for a human to answer a queued approval")
	return fs
}

// CallDeadline is the longest a hook call may take given its flags (the
// arguments after the host): its --timeout plus its --wait. Flags that do
// not parse give Deadline: the hook answers such a call at once.
func CallDeadline(args []string) time.Duration {
	if len(args) == 0 {
		return DefaultDeadline() // the usual case, without building a flag set
	}
	var f Flags
	if err := f.FlagSet(io.Discard).Parse(args); err != nil || f.Timeout < 0 || f.Wait < 0 {
		return DefaultDeadline()
	}
	return f.Timeout + f.Wait
}

// AskWithoutPrompt turns an ask into a deny for a host that cannot ask the
// user itself, keeping the reason and saying how to get the call approved.
func AskWithoutPrompt(d warden.Decision, host string) warden.Decision {
	d.Decision = warden.Deny
	d.Reason = strings.TrimSpace(d.Reason + " This call needs a human's approval, and " + host +
		" cannot ask the user from here.")
	if d.Suggestion == "" {
		d.Suggestion = "Ask the user to approve it, or do something the policy allows."
	}
	d.Recoverable = true
	return d
}

// NewCallID returns a new id for a call in the audit trail (see
// session.Options.CallID): "c-", the time (wire.OrderedID) and 96 random
// bits ("" if the system's random source failed).
func NewCallID() string {
	var b [12]byte
	if err := wire.RandomBytes(b[:]); err != nil {
		return ""
	}
	return wire.OrderedID("c-", time.Now(), b[:])
}

// FailCode is the exit code of h's failure answer at event: 2 (block), or
// 0 at the end of a turn (see Host.EndOfTurn).
func FailCode(h Host, event string) int {
	if h.EndOfTurn(event) {
		return 0
	}
	return 2
}
