package hook

import (
	"fmt"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/claudecode"
	"github.com/warden-run/warden/codex"
	"github.com/warden-run/warden/geminicli"
	"github.com/warden-run/warden/opencode"
)

// The hosts' adapters.
var (
	Claude   Host = claudeHost{}
	Codex    Host = codexHost{}
	Gemini   Host = geminiHost{}
	OpenCode Host = openCodeHost{}
)

type claudeHost struct{}

func (claudeHost) Name() string                      { return claudecode.Host }
func (claudeHost) Decode(data []byte) (Event, error) { return decodeClaude(data, claudecode.Host) }
func (claudeHost) EndOfTurn(event string) bool       { return claudecode.EndOfTurn(event) }
func (claudeHost) Interactive() bool                 { return ClaudeInteractive() }
func (claudeHost) Failure(event string, d warden.Decision) []byte {
	return claudecode.Failure(event, d).Marshal()
}

// Answer: claude -p has nobody to prompt; its asks use warden's queue
// (Render.Prompts is false there).
func (claudeHost) Answer(ev Event, a Answer, r Render) []byte {
	if a.Block != "" {
		return claudeBlock(a.Block)
	}
	if a.Decision != nil {
		return claudecode.Decide(*a.Decision, claudecode.Options{NoAllow: r.Audit, NoAsk: !r.Prompts, Input: a.Input}).Marshal()
	}
	return claudecode.Context(ev.Name, a.Context).Marshal()
}

// claudeBlock holds a turn open: Claude Code and Codex take {"decision":
// "block", "reason"} at Stop and SubagentStop and give the reason to the
// model.
func claudeBlock(reason string) []byte {
	return claudecode.Output{Decision: "block", Reason: reason}.Marshal()
}

type codexHost struct{}

func (codexHost) Name() string                      { return codex.Host }
func (codexHost) Decode(data []byte) (Event, error) { return decodeClaude(data, codex.Host) }
func (codexHost) EndOfTurn(event string) bool       { return claudecode.EndOfTurn(event) }
func (codexHost) Interactive() bool                 { return false }
func (codexHost) Failure(event string, d warden.Decision) []byte {
	return codex.Failure(event, d).Marshal()
}

func (codexHost) Answer(ev Event, a Answer, _ Render) []byte {
	if a.Block != "" {
		return claudeBlock(a.Block)
	}
	if a.Decision != nil {
		return codex.DecideInput(*a.Decision, a.Input).Marshal()
	}
	return codex.Context(ev.Name, a.Context).Marshal()
}

type geminiHost struct{}

func (geminiHost) Name() string                      { return geminicli.Host }
func (geminiHost) Decode(data []byte) (Event, error) { return decodeGemini(data) }
func (geminiHost) EndOfTurn(event string) bool       { return geminicli.EndOfTurn(event) }
func (geminiHost) Interactive() bool                 { return GeminiInteractive() }
func (geminiHost) Failure(event string, d warden.Decision) []byte {
	return geminicli.Failure(event, d).Marshal()
}

// Answer: a block at AfterAgent makes Gemini CLI retry the turn with the
// reason as the prompt.
func (geminiHost) Answer(ev Event, a Answer, r Render) []byte {
	if a.Block != "" {
		return geminicli.Output{Decision: "block", Reason: a.Block}.Marshal()
	}
	if a.Decision != nil {
		return geminicli.Decide(*a.Decision, geminicli.Options{NoAllow: r.Audit, NoAsk: !r.Prompts, Input: a.Input}).Marshal()
	}
	if ev.Kind == Model {
		return geminicli.ModelContext(ev.LLM, a.Context).Marshal()
	}
	return geminicli.Context(ev.Name, a.Context).Marshal()
}

type openCodeHost struct{}

func (openCodeHost) Name() string                      { return opencode.Host }
func (openCodeHost) Decode(data []byte) (Event, error) { return decodeOpenCode(data) }
func (openCodeHost) EndOfTurn(event string) bool       { return opencode.EndOfTurn(event) }
func (openCodeHost) Interactive() bool                 { return false }
func (openCodeHost) Failure(event string, d warden.Decision) []byte {
	return opencode.Failure(event, d).Marshal()
}

func (openCodeHost) Answer(ev Event, a Answer, _ Render) []byte {
	if a.Decision != nil {
		return opencode.DecideInput(*a.Decision, a.Input).Marshal()
	}
	return opencode.Context(ev.Name, a.Context).Marshal()
}

func decodeClaude(data []byte, host string) (Event, error) {
	in, err := claudecode.ParseInput(data)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Name: in.HookEventName, Session: in.SessionID, Cwd: in.Cwd, Source: in.Source,
		Prompt: in.Prompt, AgentType: in.AgentType, AgentID: in.AgentID, StopActive: in.StopHookActive,
		Message: in.LastAssistantMessage, Transcript: in.TranscriptPath}
	switch in.HookEventName {
	case claudecode.SessionStart:
		ev.Kind = SessionStart
	case claudecode.UserPromptSubmit:
		ev.Kind = Prompt
	case claudecode.PreToolUse:
		ev.Kind = PreTool
	case claudecode.PostToolUse, claudecode.PostToolUseFailure:
		ev.Kind = PostTool
		ev.Output = in.ResponseText()
		ev.Failed = in.HookEventName == claudecode.PostToolUseFailure
		ev.Outcome = claudeOutcome(host, ev.Failed, in.ToolResponse)
	case claudecode.SubagentStart:
		ev.Kind = SubagentStart
	case claudecode.SubagentStop:
		ev.Kind = SubagentStop
	case claudecode.PreCompact:
		ev.Kind = Compact
	case claudecode.Stop:
		ev.Kind = Stop
	case claudecode.SessionEnd:
		ev.Kind = End
	default:
		if in.ToolName != "" {
			return Event{}, unknownToolEvent(in.HookEventName, in.ToolName)
		}
	}
	if in.ToolName != "" {
		ev.Call, ev.ToolUse = in.ToolCall(host), in.ToolUseID
		// Inside a subagent the role is the subagent's type and the depth
		// at least 1 (the session layer tracks deeper nesting).
		if in.AgentID != "" {
			ev.Call.Role, ev.Call.Depth = in.AgentType, 1
			if ev.Call.Session != "" {
				ev.Call.Session += "/" + in.AgentID
			}
		}
	}
	return ev, nil
}

func decodeGemini(data []byte) (Event, error) {
	in, err := geminicli.ParseInput(data)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Name: in.HookEventName, Session: in.SessionID, Cwd: in.Cwd, Source: in.Source, Prompt: in.Prompt}
	switch in.HookEventName {
	case geminicli.SessionStart:
		ev.Kind = SessionStart
	case geminicli.BeforeAgent:
		ev.Kind = Prompt
	case geminicli.BeforeTool:
		ev.Kind = PreTool
	case geminicli.AfterTool:
		ev.Kind = PostTool
		ev.Output = in.ResponseText()
		ev.Failed = in.Failed()
		ev.Outcome = geminiOutcome(ev.Failed, ev.Output)
	case geminicli.BeforeModel:
		// Gemini CLI fires BeforeModel before every model request, its
		// subagents' too, and keeps in its history the governance text
		// warden gave at SessionStart or BeforeAgent until it compresses
		// the history: only a main-chat request without that text is
		// warden's business (see handler's modelText). The others are
		// answered without loading anything.
		if in.LLMRequest.MainChat() && !CarriesMarker(in.LLMRequest) {
			ev.Kind, ev.LLM = Model, in.LLMRequest
		}
	case geminicli.PreCompress:
		// Left Other: Gemini CLI fires PreCompress before every model
		// turn, before it decides whether to compress, so it is no sign of
		// a compaction (`warden init` no longer wires it); BeforeModel
		// shows one.
	case geminicli.AfterAgent:
		ev.Kind, ev.Message = Stop, in.PromptResponse
	case geminicli.SessionEnd:
		ev.Kind = End
	default:
		if in.ToolName != "" {
			return Event{}, unknownToolEvent(in.HookEventName, in.ToolName)
		}
	}
	if in.ToolName != "" {
		ev.Call = in.ToolCall()
	}
	return ev, nil
}

func decodeOpenCode(data []byte) (Event, error) {
	in, err := opencode.ParseInput(data)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Name: in.Event, Session: in.SessionID, Cwd: in.Directory, Prompt: in.Prompt,
		Output: in.Output, AgentType: in.Agent, Parent: in.ParentID, Message: in.Message, NoRewrite: !in.Rewrite}
	switch in.Event {
	case opencode.SessionCreated:
		ev.Kind, ev.Source = SessionStart, "startup"
		if in.ParentID != "" {
			ev.Kind = SubagentStart
		}
	case opencode.ChatMessage:
		ev.Kind = Prompt
	case opencode.ToolBefore:
		ev.Kind = PreTool
	case opencode.ToolAfter:
		ev.Kind = PostTool
	case opencode.SystemTransform:
		ev.Kind = System
	case opencode.SessionCompacted:
		ev.Kind = Compact
	case opencode.SessionIdle:
		ev.Kind = Stop
	case opencode.SessionDeleted:
		ev.Kind = End
	}
	if in.Tool != "" {
		ev.Call, ev.ToolUse = in.ToolCall(), in.CallID
	}
	return ev, nil
}

// unknownToolEvent is the error for an event warden does not know that
// carries a tool call: it may be the host's gate for that call (an event
// renamed or added by a new version of the host, a hook wired by hand),
// and answering it with nothing would let the call through unseen.
func unknownToolEvent(event, tool string) error {
	return fmt.Errorf("unknown hook event %q with a call of tool %q: warden cannot tell what it asks, so it does not let the call through (wire warden with `warden init`, which uses only the events it knows)", event, tool)
}

// governanceMarkers head warden's built-in session-start text and
// post-compaction reminder (session.Prefix, session.Reminder).
var governanceMarkers = []string{"WARDEN GOVERNANCE", "WARDEN REMINDER"}

// CarriesMarker reports whether a model request carries warden's built-in
// governance text.
func CarriesMarker(r *geminicli.LLMRequest) bool {
	for _, m := range governanceMarkers {
		if r.Contains(m) {
			return true
		}
	}
	return false
}

// Carries reports whether a model request carries the governance text
// text, by its first line (escaped as Gemini CLI escapes hook text). This
// finds a role's own prompt or reminder from the policy, which need not
// have the built-in markers; a first line that changes with the state
// (the phase, say) is not found once it changed.
func Carries(r *geminicli.LLMRequest, text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return r.Contains(geminicli.Escape(line))
		}
	}
	return false
}
