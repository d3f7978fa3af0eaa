// Package geminicli adapts Gemini CLI's command hooks to warden: it decodes
// the JSON a hook receives on stdin into a warden.ToolCall and renders a
// warden.Decision or governance text as the JSON Gemini CLI reads back
// ({"decision":"deny","reason":...} blocks a tool and the reason reaches the
// model; hookSpecificOutput.additionalContext adds text to its context).
package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/claudecode"
)

// Host is the host name recorded in tool calls and audit records.
const Host = "gemini"

// Hook event names (hook_event_name).
const (
	SessionStart = "SessionStart"
	BeforeAgent  = "BeforeAgent"
	BeforeTool   = "BeforeTool"
	AfterTool    = "AfterTool"
	PreCompress  = "PreCompress"
	AfterAgent   = "AfterAgent"
	SessionEnd   = "SessionEnd"
)

// Events lists the events `warden init gemini` wires, in order.
var Events = []string{SessionStart, BeforeAgent, BeforeTool, AfterTool, PreCompress, AfterAgent, SessionEnd}

// contextEvents are the events whose additionalContext Gemini CLI reads.
var contextEvents = map[string]bool{SessionStart: true, BeforeAgent: true, AfterTool: true}

// Input is what a command hook reads on stdin.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Timestamp      string          `json:"timestamp,omitempty"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      map[string]any  `json:"tool_input,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	// BeforeAgent, AfterAgent.
	Prompt         string `json:"prompt,omitempty"`
	PromptResponse string `json:"prompt_response,omitempty"`
	// SessionStart source (startup, resume, clear); SessionEnd reason;
	// PreCompress trigger (auto, manual).
	Source  string `json:"source,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Trigger string `json:"trigger,omitempty"`
}

// ParseInput decodes a hook's stdin; a missing hook_event_name, or a tool
// event without tool_name, is an error.
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
	if (in.HookEventName == BeforeTool || in.HookEventName == AfterTool) && in.ToolName == "" {
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

// ResponseText returns the tool's response as the model saw it.
func (in *Input) ResponseText() string {
	var r struct {
		LLMContent any `json:"llmContent"`
		Error      any `json:"error"`
	}
	if json.Unmarshal(in.ToolResponse, &r) == nil && r.LLMContent != nil {
		if s, ok := r.LLMContent.(string); ok {
			return s
		}
	}
	return string(in.ToolResponse)
}

// Failed reports whether the tool's response carries an error.
func (in *Input) Failed() bool {
	var r struct {
		Error any `json:"error"`
	}
	return json.Unmarshal(in.ToolResponse, &r) == nil && r.Error != nil
}

// Output is what a hook writes on stdout.
type Output struct {
	Decision           string        `json:"decision,omitempty"`
	Reason             string        `json:"reason,omitempty"`
	SystemMessage      string        `json:"systemMessage,omitempty"`
	Continue           *bool         `json:"continue,omitempty"`
	StopReason         string        `json:"stopReason,omitempty"`
	HookSpecificOutput *HookSpecific `json:"hookSpecificOutput,omitempty"`
}

// HookSpecific is the event-specific part of an Output.
type HookSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// Options changes how a decision is rendered.
type Options struct {
	// NoAllow leaves an allow unsaid so the host's own policy applies
	// (audit mode).
	NoAllow bool
	// NoAsk turns an ask into a deny (headless runs have no prompt).
	NoAsk bool
}

// Decide renders a BeforeTool decision: deny blocks with the reason, ask
// makes Gemini CLI ask the user, allow lets the call run.
func Decide(d warden.Decision, opt Options) Output {
	var o Output
	switch {
	case d.Decision == warden.Allow:
		if !opt.NoAllow {
			o.Decision = "allow"
		}
	case d.Decision == warden.Ask && !opt.NoAsk:
		o.Decision = "ask"
		o.Reason = claudecode.ModelText(d)
		o.SystemMessage = claudecode.ModelText(d)
	default:
		o.Decision = "deny"
		o.Reason = claudecode.ModelText(d)
	}
	if len(d.Warnings) > 0 {
		o.SystemMessage = strings.TrimSpace(o.SystemMessage + "\nwarden: " + strings.Join(d.Warnings, "\nwarden: "))
	}
	return o
}

// Context renders text for the model at event (SessionStart, BeforeAgent,
// AfterTool); at other events it becomes a message for the user.
func Context(event, text string) Output {
	text = strings.TrimSpace(text)
	if text == "" {
		return Output{}
	}
	if !contextEvents[event] {
		return Output{SystemMessage: text}
	}
	return Output{HookSpecificOutput: &HookSpecific{HookEventName: event, AdditionalContext: text}}
}

// Failure renders an infrastructure failure: a deny at BeforeTool, the
// reason as context where the model can be told (so it can explain why its
// tools are refused), and a message for the user elsewhere.
func Failure(event string, d warden.Decision) Output {
	text := claudecode.ModelText(d)
	switch {
	case event == BeforeTool || event == "":
		return Output{Decision: "deny", Reason: text}
	case contextEvents[event]:
		o := Context(event, text+"\nUntil this is fixed, warden refuses every tool call in this session.")
		o.SystemMessage = text
		return o
	}
	return Output{SystemMessage: text}
}

// Marshal encodes an Output as one line of JSON.
func (o Output) Marshal() []byte {
	js, _ := json.Marshal(o)
	return append(js, '\n')
}
