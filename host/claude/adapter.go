package claude

import (
	"os"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
)

// Adapter is Claude Code's hook.Host.
type Adapter struct{}

var _ hook.Host = Adapter{}

func (Adapter) Name() string                { return Host }
func (Adapter) EndOfTurn(event string) bool { return EndOfTurn(event) }

// Interactive reports whether the Claude Code that runs this process can
// prompt its user. Headless runs (claude -p, the SDKs) set
// CLAUDE_CODE_ENTRYPOINT to sdk-cli, sdk-ts or sdk-py and
// CLAUDE_CODE_SESSION_ATTENDED to 0 in the hook's environment; there an ask
// would be refused by Claude Code with nobody to answer it, so it goes to
// warden's queue like on the other headless hosts.
func (Adapter) Interactive() bool {
	if strings.HasPrefix(os.Getenv("CLAUDE_CODE_ENTRYPOINT"), "sdk-") || os.Getenv("CLAUDE_CODE_SESSION_ATTENDED") == "0" {
		return false
	}
	return true
}

func (Adapter) Failure(event string, d warden.Decision) []byte { return Failure(event, d).Marshal() }

// Answer: claude -p has nobody to prompt; its asks use warden's queue
// (Render.Prompts is false there). A block holds a turn open: Claude Code
// takes {"decision": "block", "reason"} at Stop and SubagentStop and gives
// the reason to the model.
func (Adapter) Answer(ev hook.Event, a hook.Answer, r hook.Render) []byte {
	if a.Block != "" {
		return Output{Decision: "block", Reason: a.Block}.Marshal()
	}
	if a.Decision != nil {
		return Decide(*a.Decision, Options{NoAllow: r.Audit, NoAsk: !r.Prompts, Input: a.Input}).Marshal()
	}
	return Context(ev.Name, a.Context).Marshal()
}

// Decode reads Claude Code's hook JSON.
func (Adapter) Decode(data []byte) (hook.Event, error) {
	in, err := ParseInput(data)
	if err != nil {
		return hook.Event{}, err
	}
	ev := hook.Event{Name: in.HookEventName, Session: in.SessionID, Cwd: in.Cwd, Source: in.Source,
		Prompt: in.Prompt, AgentType: in.AgentType, AgentID: in.AgentID, StopActive: in.StopHookActive,
		Message: in.LastAssistantMessage, Transcript: in.TranscriptPath}
	switch in.HookEventName {
	case SessionStart:
		ev.Kind = hook.SessionStart
	case UserPromptSubmit:
		ev.Kind = hook.Prompt
	case PreToolUse:
		ev.Kind = hook.PreTool
	case PostToolUse, PostToolUseFailure:
		ev.Kind = hook.PostTool
		ev.Output = in.ResponseText()
		// Claude Code sends PostToolUseFailure for a call that failed (a
		// command's non-zero exit included) and PostToolUse for one that
		// did not.
		ev.Failed = in.HookEventName == PostToolUseFailure
		ev.Outcome = warden.OutcomeOK
		if ev.Failed {
			ev.Outcome = warden.OutcomeFail
		}
	case SubagentStart:
		ev.Kind = hook.SubagentStart
	case SubagentStop:
		ev.Kind = hook.SubagentStop
	case PreCompact:
		ev.Kind = hook.Compact
	case Stop:
		ev.Kind = hook.Stop
	case SessionEnd:
		ev.Kind = hook.End
	default:
		if in.ToolName != "" {
			return hook.Event{}, hook.UnknownToolEvent(in.HookEventName, in.ToolName)
		}
	}
	if in.ToolName != "" {
		ev.Call, ev.ToolUse = in.ToolCall(Host), in.ToolUseID
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
