// Package codex adapts the Codex CLI's hooks to warden. Codex reads hooks
// from $CODEX_HOME/hooks.json in Claude Code's format and reports its shell
// tool as Bash with {"command": ...}, so decoding is package claudecode's.
// Two things differ: Codex has no permission prompt a hook can trigger
// (an ask goes to warden's approval queue, or is denied), and a hook's
// "allow" is not needed (Codex's own approval_policy then applies).
package codex

import (
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/claudecode"
)

// Host is the host name recorded in tool calls and audit records.
const Host = "codex"

// Events lists the events `warden init codex` wires.
var Events = []string{claudecode.SessionStart, claudecode.UserPromptSubmit, claudecode.PreToolUse,
	claudecode.PostToolUse, claudecode.SubagentStart, claudecode.SubagentStop, claudecode.PreCompact,
	claudecode.Stop, claudecode.SessionEnd}

// ParseInput decodes a Codex hook's stdin.
func ParseInput(data []byte) (*claudecode.Input, error) { return claudecode.ParseInput(data) }

// Decide renders a PreToolUse decision for Codex: a deny (and an ask, which
// Codex cannot prompt for) blocks with the reason; an allow says nothing.
func Decide(d warden.Decision) claudecode.Output {
	return claudecode.Decide(d, claudecode.Options{NoAllow: true, NoAsk: true})
}

// DecideInput is Decide for an allow whose tool input is to be replaced
// (the shell command rewritten to run confined): Codex 0.131 and later
// run updatedInput when it comes with permissionDecision "allow".
func DecideInput(d warden.Decision, input map[string]any) claudecode.Output {
	return claudecode.Decide(d, claudecode.Options{NoAllow: true, NoAsk: true, Input: input})
}

// Context renders text for the model at event.
func Context(event, text string) claudecode.Output { return claudecode.Context(event, text) }

// Failure renders an infrastructure failure at event.
func Failure(event string, d warden.Decision) claudecode.Output {
	return claudecode.Failure(event, d)
}
