// Package codex is the Codex CLI as a unit: its hook wire format, its
// hook.Host (Adapter), how it reports a call's outcome, and its trust and
// app-server protocol (trust.go). Codex reads hooks from
// $CODEX_HOME/hooks.json in the shape Claude Code uses and reports its
// shell tool as Bash with {"command": ...}; this package keeps its own copy
// of that shape, because Codex differs: it has no permission prompt a hook
// can trigger (an ask goes to warden's approval queue, or is denied), a
// hook's "allow" is not needed (Codex's own approval_policy then applies),
// it sends no PostToolUseFailure, and a call's outcome is in its response.
package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/internal/wire"
)

// Host is the host name recorded in tool calls and audit records.
const Host = "codex"

// Hook event names (hook_event_name).
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	SubagentStart    = "SubagentStart"
	SubagentStop     = "SubagentStop"
	PreCompact       = "PreCompact"
	Stop             = "Stop"
	SessionEnd       = "SessionEnd"
)

// Events lists the events `warden init codex` wires.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, SubagentStart, SubagentStop,
	PreCompact, Stop, SessionEnd}

// contextEvents are the events whose output may carry additionalContext
// (not Stop and SubagentStop: context there asks the model again).
var contextEvents = map[string]bool{SessionStart: true, UserPromptSubmit: true, PreToolUse: true,
	PostToolUse: true, SubagentStart: true}

// EndOfTurn reports whether event ends a turn (Stop, SubagentStop).
func EndOfTurn(event string) bool { return event == Stop || event == SubagentStop }

// Input is what a Codex hook reads on stdin.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	Model          string          `json:"model,omitempty"`
	TurnID         string          `json:"turn_id,omitempty"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      map[string]any  `json:"tool_input,omitempty"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	Source         string          `json:"source,omitempty"`
	AgentID        string          `json:"agent_id,omitempty"`
	AgentType      string          `json:"agent_type,omitempty"`
	// Stop, SubagentStop.
	StopHookActive       bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
}

// ParseInput decodes a Codex hook's stdin. Unknown fields are accepted; a
// missing hook_event_name, or a tool event without tool_name, is an error.
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
	if (in.HookEventName == PreToolUse || in.HookEventName == PostToolUse) && in.ToolName == "" {
		return nil, fmt.Errorf(`hook input: %s without field "tool_name"`, in.HookEventName)
	}
	return &in, nil
}

// ToolCall returns the call a tool event is about.
func (in *Input) ToolCall() warden.ToolCall {
	args := in.ToolInput
	if args == nil {
		args = map[string]any{}
	}
	return warden.ToolCall{Tool: in.ToolName, Args: args, Session: in.SessionID, Cwd: in.Cwd, Host: Host}
}

// ResponseText returns the tool's response as text: a JSON string as is,
// anything else as compact JSON.
func (in *Input) ResponseText() string {
	var s string
	if json.Unmarshal(in.ToolResponse, &s) == nil {
		return s
	}
	return string(in.ToolResponse)
}

// Outcome is a call's outcome after PostToolUse: known when the response
// carries the command's exit code (a field, or a line of its text).
func (in *Input) Outcome() string {
	var r struct {
		ExitCode *int `json:"exit_code"`
	}
	if json.Unmarshal(in.ToolResponse, &r) == nil && r.ExitCode != nil {
		return wire.ExitOutcome(*r.ExitCode)
	}
	if code, ok := wire.ExitCode(in.ResponseText()); ok {
		return wire.ExitOutcome(code)
	}
	return ""
}

// Output is what a hook writes on stdout.
type Output struct {
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision "block" with Reason holds a turn open at Stop.
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
	// UpdatedInput replaces the tool's input: an allowed shell command
	// rewritten to run confined (Codex 0.131 and later run it when it
	// comes with permissionDecision "allow"; docs/sandbox.md).
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
}

// Limits of the text a hook answers with (as Claude Code's).
const (
	maxReason  = 2000
	maxContext = 8000
)

// Decide renders a PreToolUse decision for Codex: a deny (and an ask, which
// Codex cannot prompt for, and anything unknown) blocks with the reason; an
// allow says nothing. Warnings reach the model as additional context.
func Decide(d warden.Decision) Output {
	hs := &HookSpecific{HookEventName: PreToolUse}
	if d.Decision != warden.Allow {
		hs.PermissionDecision = "deny"
		hs.PermissionDecisionReason = wire.Cut(d.ModelText(), maxReason)
	}
	if len(d.Warnings) > 0 {
		hs.AdditionalContext = wire.Cut("warden: "+strings.Join(d.Warnings, "\nwarden: "), maxContext)
	}
	if hs.PermissionDecision == "" && hs.AdditionalContext == "" {
		return Output{}
	}
	return Output{HookSpecificOutput: hs}
}

// Context renders text for the model at event; events that cannot carry
// context get a systemMessage for the user instead.
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

// Failure renders an infrastructure failure at event: a deny before a
// tool, the reason as context where the model can be told, and a message
// for the user everywhere (only that at the end of a turn).
func Failure(event string, d warden.Decision) Output {
	text := d.ModelText()
	switch {
	case event == PreToolUse || event == "":
		return Decide(d)
	case EndOfTurn(event):
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

// DecideInput is Decide for an allow whose tool input is to be replaced
// (the shell command rewritten to run confined): Codex 0.131 and later run
// updatedInput when it comes with permissionDecision "allow". Any other
// decision, or no input, is Decide's answer.
func DecideInput(d warden.Decision, input map[string]any) Output {
	out := Decide(d)
	if input == nil || d.Decision != warden.Allow {
		return out
	}
	hs := out.HookSpecificOutput
	if hs == nil {
		hs = &HookSpecific{HookEventName: PreToolUse}
		out.HookSpecificOutput = hs
	}
	reason := "warden: allowed, runs confined"
	if d.Rule != "" {
		reason = "warden: allowed by rule " + d.Rule + ", runs confined"
	}
	hs.PermissionDecision, hs.PermissionDecisionReason, hs.UpdatedInput = "allow", wire.Cut(reason, maxReason), input
	return out
}
