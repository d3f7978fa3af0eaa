// Package claude is Claude Code as a unit: its hook wire format (decode the
// JSON a hook receives on stdin into a warden.ToolCall, render a
// warden.Decision or governance text in the JSON Claude Code reads from the
// hook's stdout), its hook.Host (Adapter), how it reports a call's outcome
// and whether it can prompt its user. Codex's hooks take the same shape
// (package codex keeps its own copy, which differs where Codex does).
//
// Claude Code treats a hook that crashes, times out or exits non-zero
// (other than 2) as "no objection", so a caller must always write an Output.
package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/internal/wire"
)

// Host is the host name recorded in tool calls and audit records.
const Host = "claude"

// Hook event names (hook_event_name).
const (
	SessionStart       = "SessionStart"
	UserPromptSubmit   = "UserPromptSubmit"
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	SubagentStart      = "SubagentStart"
	SubagentStop       = "SubagentStop"
	PreCompact         = "PreCompact"
	Stop               = "Stop"
	SessionEnd         = "SessionEnd"
	Notification       = "Notification"
)

// Events lists the events `warden init claude` wires, in order.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure,
	SubagentStart, SubagentStop, PreCompact, Stop, SessionEnd}

// ContextEvents are the events whose output may carry additionalContext.
// Stop and SubagentStop are not among them: context there makes Claude
// Code ask the model again, and an answer at every stop loops.
var contextEvents = map[string]bool{SessionStart: true, UserPromptSubmit: true, PreToolUse: true,
	PostToolUse: true, PostToolUseFailure: true, SubagentStart: true}

// EndOfTurn reports whether event ends a turn (Stop, SubagentStop): there
// warden never blocks or adds context, so that an answer cannot make the
// host run the model again, failures included.
func EndOfTurn(event string) bool { return event == Stop || event == SubagentStop }

// Input is what a command hook reads on stdin. Fields a given event does
// not carry are empty.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Tool events.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    map[string]any  `json:"tool_input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	Error        string          `json:"error,omitempty"`
	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`
	// SessionStart: startup, resume, clear, compact.
	Source string `json:"source,omitempty"`
	// Set inside subagents, and on SubagentStart/SubagentStop.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// SessionEnd reason; PreCompact trigger (manual, auto).
	Reason  string `json:"reason,omitempty"`
	Trigger string `json:"trigger,omitempty"`
	// Stop, SubagentStop.
	StopHookActive       bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	// Codex extras.
	Model  string `json:"model,omitempty"`
	TurnID string `json:"turn_id,omitempty"`
}

// ParseInput decodes a hook's stdin. Unknown fields are accepted (hosts add
// fields between versions); a missing hook_event_name, or a tool event
// without tool_name, is an error.
func ParseInput(data []byte) (*Input, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("hook input is empty: the host sent nothing on stdin")
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("hook input is not the expected JSON object: %w", err)
	}
	if in.HookEventName == "" {
		return nil, fmt.Errorf(`hook input: field "hook_event_name" is missing`)
	}
	switch in.HookEventName {
	case PreToolUse, PostToolUse, PostToolUseFailure:
		if in.ToolName == "" {
			return nil, fmt.Errorf(`hook input: %s without field "tool_name"`, in.HookEventName)
		}
	}
	return &in, nil
}

// ToolCall returns the call a tool event is about, for the given host name
// (claude, or codex for Codex's hooks).
func (in *Input) ToolCall(host string) warden.ToolCall {
	args := in.ToolInput
	if args == nil {
		args = map[string]any{}
	}
	return warden.ToolCall{Tool: in.ToolName, Args: args, Session: in.SessionID, Cwd: in.Cwd, Host: host}
}

// ResponseText returns the tool's response as text (for audit and
// guidance): a JSON string as is, anything else as compact JSON.
func (in *Input) ResponseText() string {
	if in.Error != "" {
		return in.Error
	}
	var s string
	if json.Unmarshal(in.ToolResponse, &s) == nil {
		return s
	}
	return string(in.ToolResponse)
}

// Output is what a hook writes on stdout.
type Output struct {
	Continue      *bool  `json:"continue,omitempty"`
	StopReason    string `json:"stopReason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision "block" with Reason: PostToolUse feeds the reason to the
	// model; UserPromptSubmit refuses the prompt.
	Decision           string        `json:"decision,omitempty"`
	Reason             string        `json:"reason,omitempty"`
	HookSpecificOutput *HookSpecific `json:"hookSpecificOutput,omitempty"`
}

// HookSpecific is the event-specific part of an Output.
type HookSpecific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	// UpdatedInput replaces the tool's input (an allowed shell command
	// rewritten to run confined; docs/sandbox.md).
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
}

// Limits Claude Code applies (longer text is cut by the host).
const (
	maxReason  = 2000
	maxContext = 8000
)

// Options changes how a decision is rendered.
type Options struct {
	// NoAllow leaves an allow unsaid (no permissionDecision), so the host's
	// own permission rules apply; used in audit mode, where warden only
	// observes, and for hosts that reject "allow".
	NoAllow bool
	// NoAsk turns an ask into a deny, for hosts without a prompt of their
	// own; the caller has already put the reason in the decision.
	NoAsk bool
	// Input, for an allow or an ask, is the tool's input to run instead
	// (updatedInput): the shell command rewritten to run confined. An
	// allow with an input is said even under NoAllow (the host runs the
	// input only with "allow").
	Input map[string]any
}

// Decide renders a PreToolUse decision. A deny blocks the call and the
// reason (with the suggestion) reaches the model; an ask shows the host's
// permission prompt; an allow lets the call run without a prompt. Warnings
// reach the model as additional context.
func Decide(d warden.Decision, opt Options) Output {
	hs := &HookSpecific{HookEventName: PreToolUse}
	switch {
	case d.Decision == warden.Allow:
		if !opt.NoAllow {
			hs.PermissionDecision = "allow"
			hs.PermissionDecisionReason = wire.Cut(allowReason(d), maxReason)
		}
	case d.Decision == warden.Ask && !opt.NoAsk:
		hs.PermissionDecision = "ask"
		hs.PermissionDecisionReason = wire.Cut(d.ModelText(), maxReason)
	default: // deny, an ask without a prompt, and anything unknown
		hs.PermissionDecision = "deny"
		hs.PermissionDecisionReason = wire.Cut(d.ModelText(), maxReason)
	}
	if opt.Input != nil && (hs.PermissionDecision == "ask" || d.Decision == warden.Allow) {
		if hs.PermissionDecision == "" {
			hs.PermissionDecision = "allow"
			hs.PermissionDecisionReason = wire.Cut(allowReason(d), maxReason)
		}
		hs.UpdatedInput = opt.Input
	}
	if len(d.Warnings) > 0 {
		hs.AdditionalContext = wire.Cut("warden: "+strings.Join(d.Warnings, "\nwarden: "), maxContext)
	}
	if hs.PermissionDecision == "" && hs.AdditionalContext == "" {
		return Output{}
	}
	return Output{HookSpecificOutput: hs}
}

func allowReason(d warden.Decision) string {
	if d.Rule != "" {
		return "warden: allowed by rule " + d.Rule
	}
	return "warden: allowed (" + string(d.Code) + ")"
}

// Context renders text the model should read at event (SessionStart,
// UserPromptSubmit, PostToolUse, SubagentStart, ...). Events that cannot
// carry context get a systemMessage for the user instead; empty text gives
// an empty Output.
func Context(event, text string) Output {
	text = strings.TrimSpace(text)
	if text == "" {
		return Output{}
	}
	if !contextEvents[event] {
		return Output{SystemMessage: wire.Cut(text, maxContext)}
	}
	return Output{HookSpecificOutput: &HookSpecific{HookEventName: event, AdditionalContext: wire.Cut(text, maxContext)}}
}

// Failure renders an infrastructure failure for any event: at PreToolUse a
// deny; where the model can be told (SessionStart, UserPromptSubmit, ...)
// the reason as context, so it can explain why its tools are refused; and
// a message for the user everywhere. d is warden.FailClosed(err).
func Failure(event string, d warden.Decision) Output {
	text := d.ModelText()
	switch {
	case event == PreToolUse || event == "":
		return Decide(d, Options{})
	case EndOfTurn(event):
		// For the user only: the model would be asked again.
		return Output{SystemMessage: wire.Cut(text, maxContext)}
	case contextEvents[event]:
		o := Context(event, text+"\nUntil this is fixed, warden refuses every tool call in this session.")
		o.SystemMessage = wire.Cut(text, maxContext)
		return o
	}
	return Output{SystemMessage: wire.Cut(text, maxContext)}
}

// Marshal encodes an Output as one line of JSON. An empty Output is "{}".
func (o Output) Marshal() []byte {
	js, err := json.Marshal(o)
	if err != nil { // cannot happen: only strings and bools
		return []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"warden: internal error encoding the hook answer"}}`)
	}
	return append(js, '\n')
}
