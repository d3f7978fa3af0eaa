// Package testhost is a host that exists only for warden's tests: "acme",
// an imaginary agent with a hook format of its own. It shows what adding a
// host takes: this one folder, implementing kit.Host, and one line in
// host.All (which a test adds with host.AddForTest). Nothing outside the
// tests imports it.
//
// Acme runs a hook command with one JSON object on stdin:
//
//	{"hook": "before_tool", "session": "s1", "dir": "/project", "tool": "execute_command", "input": {"command": "ls"}, "call": "c1"}
//
// hook is start, prompt, before_tool, after_tool (with "output" and
// "exit"), turn_end or end. It reads back {"verdict": "allow"|"deny",
// "message": "..."} before a tool, {"context": "..."} elsewhere. Its
// configuration is .acme/hooks.json, in the hook-list shape Claude Code
// uses, and .acme/mcp.json.
package testhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host/internal/wire"
	"github.com/warden-run/warden/host/kit"
)

// Host is the host's name.
const Host = "acme"

// Acme's hook names.
const (
	Start      = "start"
	Prompt     = "prompt"
	BeforeTool = "before_tool"
	AfterTool  = "after_tool"
	TurnEnd    = "turn_end"
	End        = "end"
)

// Events are the hooks `warden init acme` wires.
var Events = []string{Start, Prompt, BeforeTool, AfterTool, TurnEnd, End}

// Input is what an Acme hook reads on stdin.
type Input struct {
	Hook    string         `json:"hook"`
	Session string         `json:"session"`
	Dir     string         `json:"dir"`
	Tool    string         `json:"tool,omitempty"`
	Input   map[string]any `json:"input,omitempty"`
	Call    string         `json:"call,omitempty"`
	Prompt  string         `json:"prompt,omitempty"`
	Output  string         `json:"output,omitempty"`
	Exit    *int           `json:"exit,omitempty"`
}

// Output is what it writes back.
type Output struct {
	Verdict string `json:"verdict,omitempty"`
	Message string `json:"message,omitempty"`
	Context string `json:"context,omitempty"`
}

func (o Output) marshal() []byte {
	js, _ := json.Marshal(o)
	return append(js, '\n')
}

// Adapter is Acme's kit.Host.
type Adapter struct{}

var _ kit.Host = Adapter{}

func (Adapter) Name() string                { return Host }
func (Adapter) EndOfTurn(event string) bool { return event == TurnEnd }
func (Adapter) Interactive() bool           { return false }

// Decode reads Acme's hook JSON.
func (Adapter) Decode(data []byte) (hook.Event, error) {
	var in Input
	if err := json.Unmarshal(bytes.TrimSpace(data), &in); err != nil {
		return hook.Event{}, fmt.Errorf("hook input is not the expected JSON object: %w", err)
	}
	ev := hook.Event{Name: in.Hook, Session: in.Session, Cwd: in.Dir, Prompt: in.Prompt, ToolUse: in.Call}
	switch in.Hook {
	case Start:
		ev.Kind, ev.Source = hook.SessionStart, "startup"
	case Prompt:
		ev.Kind = hook.Prompt
	case BeforeTool:
		ev.Kind = hook.PreTool
	case AfterTool:
		ev.Kind, ev.Output = hook.PostTool, in.Output
		if in.Exit != nil {
			ev.Outcome = wire.ExitOutcome(*in.Exit)
		}
	case TurnEnd:
		ev.Kind = hook.Stop
	case End:
		ev.Kind = hook.End
	case "":
		return hook.Event{}, fmt.Errorf(`hook input: field "hook" is missing`)
	default:
		if in.Tool != "" {
			return hook.Event{}, hook.UnknownToolEvent(in.Hook, in.Tool)
		}
	}
	if in.Tool != "" {
		args := in.Input
		if args == nil {
			args = map[string]any{}
		}
		ev.Call = warden.ToolCall{Tool: in.Tool, Args: args, Session: in.Session, Cwd: in.Dir, Host: Host}
	}
	return ev, nil
}

// Answer: Acme has no prompt, so an ask is a deny (the handler already
// said why in the decision); an allow is said.
func (Adapter) Answer(ev hook.Event, a hook.Answer, _ hook.Render) []byte {
	if a.Decision != nil {
		if a.Decision.Decision == warden.Allow {
			return Output{Verdict: "allow"}.marshal()
		}
		return Output{Verdict: "deny", Message: a.Decision.ModelText()}.marshal()
	}
	if ev.Kind == hook.Stop {
		return Output{}.marshal() // nothing at the end of a turn
	}
	return Output{Context: a.Context}.marshal()
}

// Failure denies before a tool and tells the model elsewhere.
func (Adapter) Failure(event string, d warden.Decision) []byte {
	switch event {
	case BeforeTool, "":
		return Output{Verdict: "deny", Message: d.ModelText()}.marshal()
	case TurnEnd:
		return Output{}.marshal()
	}
	return Output{Context: d.ModelText()}.marshal()
}

// HookFile is .acme/hooks.json.
func (Adapter) HookFile(root string) string { return filepath.Join(root, ".acme", "hooks.json") }

func (a Adapter) settings(root string, timeout int) kit.HookSettings {
	return kit.HookSettings{File: a.HookFile(root), Host: Host, Events: Events,
		Matcher: func(string) string { return "" }, Timeout: func(string) int { return timeout }}
}

func (a Adapter) Wire(w kit.Wiring) ([]string, error) {
	return a.settings(w.Root, w.Timeout).Merge(w.Command)
}
func (a Adapter) Unwire(root string) ([]string, error) { return a.settings(root, 0).Remove() }
func (Adapter) MCP(root string) kit.MCPConfig {
	return kit.JSONServers{Path: filepath.Join(root, ".acme", "mcp.json"), Key: "servers", Entry: func(bin string) any {
		return map[string]any{"command": bin, "args": []string{"mcp", "serve"}}
	}}
}
func (Adapter) Finish(context.Context, kit.Wiring) ([]string, []string, error) { return nil, nil, nil }
func (a Adapter) Wired(root string) (string, []string, error) {
	return a.settings(root, 0).Wired(BeforeTool)
}
func (Adapter) Check(context.Context, kit.Check) (string, error) {
	return "Acme runs every hook in .acme/hooks.json", nil
}
func (Adapter) Probe(root, file string) []byte {
	in, _ := json.Marshal(Input{Hook: BeforeTool, Session: "warden-doctor", Dir: root, Tool: "write_to_file",
		Input: map[string]any{"path": file, "content": "x"}})
	return in
}
func (Adapter) Verdict(answer []byte) string {
	var o Output
	json.Unmarshal(answer, &o)
	return o.Verdict
}

// Protected: Acme's whole configuration folder.
func (Adapter) Protected() kit.Files {
	return kit.Files{Project: []string{".acme"}, Home: []string{".acme"}}
}
