package codex

import (
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
)

// Adapter is Codex's hook.Host.
type Adapter struct{}

var _ hook.Host = Adapter{}

func (Adapter) Name() string                { return Host }
func (Adapter) EndOfTurn(event string) bool { return EndOfTurn(event) }

// Interactive is false: Codex has no prompt a hook can open.
func (Adapter) Interactive() bool { return false }

func (Adapter) Failure(event string, d warden.Decision) []byte { return Failure(event, d).Marshal() }

// Answer renders warden's answer; a block at Stop holds the turn open with
// the reason for the model.
func (Adapter) Answer(ev hook.Event, a hook.Answer, _ hook.Render) []byte {
	if a.Block != "" {
		return Output{Decision: "block", Reason: a.Block}.Marshal()
	}
	if a.Decision != nil {
		return DecideInput(*a.Decision, a.Input).Marshal()
	}
	return Context(ev.Name, a.Context).Marshal()
}

// Decode reads Codex's hook JSON.
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
	case PostToolUse:
		ev.Kind, ev.Output, ev.Outcome = hook.PostTool, in.ResponseText(), in.Outcome()
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
		ev.Call, ev.ToolUse = in.ToolCall(), in.ToolUseID
		if in.AgentID != "" {
			ev.Call.Role, ev.Call.Depth = in.AgentType, 1
			if ev.Call.Session != "" {
				ev.Call.Session += "/" + in.AgentID
			}
		}
	}
	return ev, nil
}
