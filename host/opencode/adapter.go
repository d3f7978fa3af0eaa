package opencode

import (
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
)

// Adapter is OpenCode's hook.Host.
type Adapter struct{}

var _ hook.Host = Adapter{}

func (Adapter) Name() string                { return Host }
func (Adapter) EndOfTurn(event string) bool { return EndOfTurn(event) }

// Interactive is false: OpenCode's plugin has no prompt to open.
func (Adapter) Interactive() bool { return false }

func (Adapter) Failure(event string, d warden.Decision) []byte { return Failure(event, d).Marshal() }

// Answer renders warden's answer. A held turn is rendered at
// text.complete and turn.end only: session.idle comes after the turn
// ended.
func (Adapter) Answer(ev hook.Event, a hook.Answer, _ hook.Render) []byte {
	if a.Decision != nil {
		return DecideInput(*a.Decision, a.Input).Marshal()
	}
	if ev.Name == TextComplete || ev.Name == TurnEnd {
		return Output{Block: a.Block}.Marshal()
	}
	return Context(ev.Name, a.Context).Marshal()
}

// Decode reads what warden's OpenCode plugin sends. A call's outcome is
// known for a shell command (its exit code) and a subagent (task, from its
// text); it stays unknown for the other tools (Input.Outcome).
func (Adapter) Decode(data []byte) (hook.Event, error) {
	in, err := ParseInput(data)
	if err != nil {
		return hook.Event{}, err
	}
	ev := hook.Event{Name: in.Event, Session: in.SessionID, Cwd: in.Directory, Prompt: in.Prompt,
		Output: in.Output, AgentType: in.Agent, Parent: in.ParentID, Message: in.Message, NoRewrite: !in.Rewrite}
	switch in.Event {
	case SessionCreated:
		ev.Kind, ev.Source = hook.SessionStart, "startup"
		if in.ParentID != "" {
			ev.Kind = hook.SubagentStart
		}
	case ChatMessage:
		ev.Kind = hook.Prompt
	case ToolBefore:
		ev.Kind = hook.PreTool
	case ToolAfter:
		ev.Kind, ev.Outcome = hook.PostTool, in.Outcome()
	case SystemTransform:
		ev.Kind = hook.System
	case SessionCompacted:
		ev.Kind = hook.Compact
	case SessionIdle:
		ev.Kind, ev.ReportChecked = hook.Stop, in.Checked
	case TextComplete, TurnEnd:
		ev.Kind, ev.ReportOnly = hook.Stop, true
	case SessionDeleted:
		ev.Kind = hook.End
	}
	if in.Tool != "" {
		ev.Call, ev.ToolUse = in.ToolCall(), in.CallID
	}
	return ev, nil
}
