// Package opencode adapts OpenCode to warden. OpenCode has no command hooks;
// it loads ES module plugins from .opencode/plugin/. Plugin (plugin.js,
// written by `warden init opencode`) forwards the plugin events to
// `warden hook opencode` as one JSON object on stdin (Input) and acts on the
// JSON answer (Output): it throws in tool.execute.before to block a call
// (the message reaches the model), appends text to a tool's output, and
// pushes governance text into the system prompt.
package opencode

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// Host is the host name recorded in tool calls and audit records.
const Host = "opencode"

// Events the plugin forwards (Input.Event).
const (
	ToolBefore       = "tool.execute.before"
	ToolAfter        = "tool.execute.after"
	ChatMessage      = "chat.message"
	SystemTransform  = "chat.system.transform"
	SessionCreated   = "session.created"
	SessionCompacted = "session.compacted"
	SessionIdle      = "session.idle"
	// TextComplete: an answer's text is complete and the answer has
	// called no tool so far (the plugin's experimental.text.complete): the
	// turn's final text, unless a tool call follows, while OpenCode still
	// holds the turn. A verdict that holds the turn is tentative there.
	TextComplete = "text.complete"
	// TurnEnd: the answer of a tentatively held turn called no tool (the
	// plugin's experimental.chat.messages.transform, before the next model
	// request): the held turn is stored.
	TurnEnd         = "turn.end"
	SessionDeleted  = "session.deleted"
	PermissionAsked = "permission.asked"
)

// Plugin is the source of .opencode/plugin/warden.js.
//
//go:embed plugin.js
var Plugin string

// Input is what the plugin sends on stdin.
type Input struct {
	Event     string         `json:"event"`
	SessionID string         `json:"session_id"`
	Directory string         `json:"directory"`
	Tool      string         `json:"tool,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Args      map[string]any `json:"args,omitempty"`
	// tool.execute.after: the tool's title and output text, and a shell
	// command's exit code (the bash tool's metadata.exit).
	Title  string `json:"title,omitempty"`
	Output string `json:"output,omitempty"`
	Exit   *int   `json:"exit,omitempty"`
	// chat.message: the user's text.
	Prompt string `json:"prompt,omitempty"`
	// Agent is the OpenCode agent (build, plan, or a subagent's name);
	// ParentID the parent session of a subagent session.
	Agent    string `json:"agent,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
	// session.idle, text.complete: the text of the session's last
	// assistant message.
	Message string `json:"message,omitempty"`
	// Checked, at session.idle: the plugin had the last assistant message
	// checked at text.complete already.
	Checked bool `json:"checked,omitempty"`
	// Rewrite: the plugin assigns an answer's args into the call's
	// (tool.execute.before); a plugin without it cannot run a call
	// confined.
	Rewrite bool `json:"rewrite,omitempty"`
}

// ParseInput decodes the plugin's stdin.
func ParseInput(data []byte) (*Input, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("hook input is empty: the plugin sent nothing on stdin")
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("hook input is not the expected JSON object: %w", err)
	}
	if in.Event == "" {
		return nil, fmt.Errorf(`hook input: field "event" is missing`)
	}
	if (in.Event == ToolBefore || in.Event == ToolAfter) && in.Tool == "" {
		return nil, fmt.Errorf(`hook input: %s without field "tool"`, in.Event)
	}
	return &in, nil
}

// ToolCall returns the call a tool event is about.
func (in *Input) ToolCall() warden.ToolCall {
	args := in.Args
	if args == nil {
		args = map[string]any{}
	}
	return warden.ToolCall{Tool: in.Tool, Args: args, Session: in.SessionID, Cwd: in.Directory, Host: Host}
}

// Output is what `warden hook opencode` answers.
type Output struct {
	// Decision is "deny" to block (the plugin throws Message), else empty.
	Decision string `json:"decision,omitempty"`
	Message  string `json:"message,omitempty"`
	// System is text the plugin pushes into the system prompt.
	System string `json:"system,omitempty"`
	// Append is text the plugin appends to a tool's output.
	Append string `json:"append,omitempty"`
	// Block, at text.complete and turn.end, is the report gate's retry
	// text: the plugin adds it to the session as a user message, and
	// OpenCode asks the model again before the turn ends.
	Block string `json:"block,omitempty"`
	// Args, for an allowed call, are assigned into the tool's arguments
	// before it runs: the shell command rewritten to run confined
	// (docs/sandbox.md).
	Args map[string]any `json:"args,omitempty"`
}

// Decide renders a tool.execute.before decision. OpenCode's `run` has no
// prompt a plugin can open, so an ask arrives here already resolved by
// warden's approval queue, or as a deny.
func Decide(d warden.Decision) Output { return DecideInput(d, nil) }

// DecideInput is Decide for an allow whose arguments are to be replaced
// by input (the shell command rewritten to run confined).
func DecideInput(d warden.Decision, input map[string]any) Output {
	var o Output
	if d.Decision != warden.Allow {
		o.Decision = "deny"
		o.Message = d.ModelText()
	} else {
		o.Args = input
	}
	if len(d.Warnings) > 0 {
		o.Append = "warden: " + strings.Join(d.Warnings, "\nwarden: ")
	}
	return o
}

// Context renders text for the model: system text at the system
// transform, text appended to the tool output after a tool.
func Context(event, text string) Output {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return Output{}
	case event == ToolAfter:
		return Output{Append: text}
	}
	return Output{System: text}
}

// EndOfTurn reports whether event ends a turn (session.idle, and
// text.complete of the turn's final text): a failure there never holds the
// turn.
func EndOfTurn(event string) bool {
	return event == SessionIdle || event == TextComplete || event == TurnEnd
}

// Failure renders an infrastructure failure: a deny before a tool, and a
// system note elsewhere so the model knows why its tools are refused.
func Failure(event string, d warden.Decision) Output {
	if event == ToolBefore || event == "" {
		return Output{Decision: "deny", Message: d.ModelText()}
	}
	if event == SystemTransform {
		return Output{System: d.ModelText()}
	}
	return Output{}
}

// Marshal encodes an Output as one line of JSON.
func (o Output) Marshal() []byte {
	js, _ := json.Marshal(o)
	return append(js, '\n')
}

// PluginSource returns the plugin's source calling the warden binary bin
// (a name looked up on PATH, or a path) unless WARDEN_BIN is set. A
// positive wait lets the hook wait that long for a human to answer an
// approval (`warden hook opencode --wait`). The plugin runs
// `warden-hook opencode` when the binary is warden-hook, else `warden hook
// opencode`.
func PluginSource(bin string, wait time.Duration, flags ...string) string {
	if bin == "" {
		bin = "warden"
	}
	q, _ := json.Marshal(bin)
	args := []string{"opencode"}
	if wait > 0 && !slices.Contains(flags, "--wait") {
		args = append(args, "--wait", wait.String())
	}
	args = append(args, flags...)
	a, _ := json.Marshal(args)
	timeout := 30*time.Second + wait
	r := strings.NewReplacer("__WARDEN_BIN__", string(q), "__WARDEN_ARGS__", string(a),
		"__TIMEOUT_MS__", strconv.FormatInt(timeout.Milliseconds(), 10))
	return r.Replace(Plugin)
}
