// Package gemini is Gemini CLI as a unit: its hook.Host (Adapter), how it
// reports a call's outcome, whether it can prompt its user, and its hook
// wire format: it decodes
// the JSON a hook receives on stdin into a warden.ToolCall and renders a
// warden.Decision or governance text as the JSON Gemini CLI reads back
// ({"decision":"deny","reason":...} blocks a tool and the reason reaches the
// model; hookSpecificOutput.additionalContext adds text to its context;
// hookSpecificOutput.llm_request changes the request a BeforeModel hook is
// about).
package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/warden-run/warden"
)

// Host is the host name recorded in tool calls and audit records.
const Host = "gemini"

// Hook event names (hook_event_name).
const (
	SessionStart = "SessionStart"
	BeforeAgent  = "BeforeAgent"
	BeforeModel  = "BeforeModel"
	BeforeTool   = "BeforeTool"
	AfterTool    = "AfterTool"
	PreCompress  = "PreCompress"
	AfterAgent   = "AfterAgent"
	SessionEnd   = "SessionEnd"
)

// Events lists the events `warden init gemini` wires, in order.
//
// PreCompress is not among them: Gemini CLI fires it before every model
// turn, before it decides whether to compress at all, so it says nothing
// about a compaction. A compaction shows at BeforeModel instead, which
// fires before every model request: the request no longer carries the
// governance text the session was given (see LLMRequest).
var Events = []string{SessionStart, BeforeAgent, BeforeModel, BeforeTool, AfterTool, AfterAgent, SessionEnd}

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
	// BeforeAgent, AfterAgent. ParseInput removes the <hook_context>
	// blocks from the prompt (see StripHookContext).
	Prompt         string `json:"prompt,omitempty"`
	PromptResponse string `json:"prompt_response,omitempty"`
	// BeforeModel: the request about to go to the model.
	LLMRequest *LLMRequest `json:"llm_request,omitempty"`
	// SessionStart source (startup, resume, clear); SessionEnd reason;
	// PreCompress trigger (auto, manual).
	Source  string `json:"source,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Trigger string `json:"trigger,omitempty"`
}

// ParseInput decodes a hook's stdin; a missing hook_event_name, or a tool
// event without tool_name, is an error. The prompt is the user's own text:
// the hook text Gemini CLI put into it is removed (StripHookContext).
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
	in.Prompt = StripHookContext(in.Prompt)
	return &in, nil
}

// Gemini CLI wraps the text hooks add to the model's context in these tags.
const (
	hookContextOpen  = "<hook_context>"
	hookContextClose = "</hook_context>"
)

// StripHookContext removes the <hook_context>...</hook_context> blocks from
// a prompt. Headless (gemini -p), Gemini CLI puts the SessionStart hook's
// text into the prompt, as a block before the user's text, and BeforeAgent
// and AfterAgent report that prompt; the user's request is what is left.
// (Gemini CLI escapes < and > in a hook's text, so a block inside the hook
// text, as in a resume note that quotes an older prompt, cannot end the
// block early.) A prompt without a complete block is returned as it is.
func StripHookContext(prompt string) string {
	s, stripped := prompt, false
	for {
		i := strings.Index(s, hookContextOpen)
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], hookContextClose)
		if j < 0 {
			break
		}
		s, stripped = s[:i]+s[i+j+len(hookContextClose):], true
	}
	if !stripped {
		return prompt
	}
	return strings.TrimSpace(s)
}

// LLMRequest is the model request a BeforeModel hook is about, in Gemini
// CLI's hook form: one message per content of the request that has text
// (the text of its parts joined), in order; contents without text
// (function calls and responses only) are left out. The generation config
// is not decoded.
type LLMRequest struct {
	Model    string    `json:"model,omitempty"`
	Messages []Message `json:"messages"`
}

// Message is one content of an LLMRequest.
type Message struct {
	Role    string `json:"role"` // user, model or system
	Content string `json:"content"`
}

// sessionContext begins the first message of Gemini CLI's main chat: the
// environment context it puts first into every history it starts, also
// the one a compression leaves.
const sessionContext = "<session_context>"

// MainChat reports whether the request is the main agent's. Gemini CLI
// fires BeforeModel for its subagents' requests too, with the main
// session's id; their chats do not begin with Gemini CLI's
// <session_context> message and never carried warden's text.
func (r *LLMRequest) MainChat() bool {
	return r != nil && len(r.Messages) > 0 && r.Messages[0].Role == "user" &&
		strings.HasPrefix(strings.TrimSpace(r.Messages[0].Content), sessionContext)
}

// Contains reports whether a message of the request contains s.
func (r *LLMRequest) Contains(s string) bool {
	if r == nil {
		return false
	}
	for _, m := range r.Messages {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// Carries reports whether the request carries the governance text text,
// by its first line (escaped as Gemini CLI escapes hook text): a role's
// own prompt or reminder from the policy need not have warden's built-in
// markers. A first line that changes with the state (the phase, say) is
// not found once it changed. It makes *LLMRequest a hook.ModelRequest.
func (r *LLMRequest) Carries(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return r.Contains(Escape(line))
		}
	}
	return false
}

// Answered reports whether a message of the request is the model's.
// Gemini CLI's compression puts the summary into the history followed by
// the model's "Got it. Thanks for the additional context!", so a request
// after a compression always has one; a session's first request has none
// (Gemini CLI gives a hook only the messages that hold text).
func (r *LLMRequest) Answered() bool {
	if r == nil {
		return false
	}
	for _, m := range r.Messages {
		if m.Role == "model" {
			return true
		}
	}
	return false
}

// governanceMarkers head warden's built-in session-start text and
// post-compaction reminder (session.Prefix, session.Reminder).
var governanceMarkers = []string{"WARDEN GOVERNANCE", "WARDEN REMINDER"}

// CarriesMarker reports whether the request carries warden's built-in
// governance text.
func (r *LLMRequest) CarriesMarker() bool {
	for _, m := range governanceMarkers {
		if r.Contains(m) {
			return true
		}
	}
	return false
}

// Escape returns text as Gemini CLI puts a hook's additionalContext into
// the model's context: with < and > escaped.
func Escape(text string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(text)
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
	// ToolInput, at BeforeTool, is merged into the tool's arguments (an
	// allowed shell command rewritten to run confined; docs/sandbox.md).
	ToolInput map[string]any `json:"tool_input,omitempty"`
	// LLMRequest changes the request at BeforeModel.
	LLMRequest *LLMRequest `json:"llm_request,omitempty"`
}

// Options changes how a decision is rendered.
type Options struct {
	// NoAllow leaves an allow unsaid so the host's own policy applies
	// (audit mode).
	NoAllow bool
	// NoAsk turns an ask into a deny (headless runs have no prompt).
	NoAsk bool
	// Input, for an allow or an ask, is merged into the tool's arguments
	// (hookSpecificOutput.tool_input): the shell command rewritten to run
	// confined. An allow with an input is said even under NoAllow.
	Input map[string]any
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
		o.Reason = d.ModelText()
		o.SystemMessage = d.ModelText()
	default:
		o.Decision = "deny"
		o.Reason = d.ModelText()
	}
	if len(d.Warnings) > 0 {
		o.SystemMessage = strings.TrimSpace(o.SystemMessage + "\nwarden: " + strings.Join(d.Warnings, "\nwarden: "))
	}
	if opt.Input != nil && (o.Decision == "ask" || d.Decision == warden.Allow) {
		if o.Decision == "" {
			o.Decision = "allow"
		}
		o.HookSpecificOutput = &HookSpecific{HookEventName: BeforeTool, ToolInput: opt.Input}
		if len(d.Warnings) > 0 {
			o.HookSpecificOutput.AdditionalContext = "warden: " + strings.Join(d.Warnings, "\nwarden: ")
		}
	}
	return o
}

// Context renders text for the model at event (SessionStart, BeforeAgent,
// AfterTool); at other events it becomes a message for the user. At
// BeforeModel, ModelContext adds text to the request.
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

// ModelContext renders text to add to the model request r at BeforeModel.
// Gemini CLI pairs the messages of the answer's llm_request with the text
// contents of the request, in order, replacing their text, and keeps the
// contents after the last message it got as they are. So the answer holds
// the request's first message only, with the text after it in a
// <hook_context> block, escaped as Gemini CLI escapes a hook's
// additionalContext: the rest of the request (tool calls, their results,
// thoughts) is untouched. The change holds for this one request; Gemini
// CLI does not keep it in its history.
func ModelContext(r *LLMRequest, text string) Output {
	text = strings.TrimSpace(text)
	if text == "" || r == nil || len(r.Messages) == 0 {
		return Output{}
	}
	first := r.Messages[0]
	first.Content += "\n\n" + hookContextOpen + Escape(text) + hookContextClose
	return Output{HookSpecificOutput: &HookSpecific{HookEventName: BeforeModel, LLMRequest: &LLMRequest{Messages: []Message{first}}}}
}

// EndOfTurn reports whether event ends a turn (AfterAgent): there warden
// never denies or adds context (a deny there makes Gemini CLI retry the
// turn), failures included.
func EndOfTurn(event string) bool { return event == AfterAgent }

// Failure renders an infrastructure failure: a deny at BeforeTool, the
// reason as context where the model can be told (so it can explain why its
// tools are refused), and a message for the user elsewhere.
func Failure(event string, d warden.Decision) Output {
	text := d.ModelText()
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
