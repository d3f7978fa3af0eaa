// Package codex adapts the Codex CLI's hooks to warden. Codex reads hooks
// from $CODEX_HOME/hooks.json in Claude Code's format and reports its shell
// tool as Bash with {"command": ...}, so decoding is package claude's.
// Two things differ: Codex has no permission prompt a hook can trigger
// (an ask goes to warden's approval queue, or is denied), and a hook's
// "allow" is not needed (Codex's own approval_policy then applies).
package codex

import (
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/claude"
)

// Host is the host name recorded in tool calls and audit records.
const Host = "codex"

// Events lists the events `warden init codex` wires.
var Events = []string{claude.SessionStart, claude.UserPromptSubmit, claude.PreToolUse,
	claude.PostToolUse, claude.SubagentStart, claude.SubagentStop, claude.PreCompact,
	claude.Stop, claude.SessionEnd}

// ParseInput decodes a Codex hook's stdin.
func ParseInput(data []byte) (*claude.Input, error) { return claude.ParseInput(data) }

// Decide renders a PreToolUse decision for Codex: a deny (and an ask, which
// Codex cannot prompt for) blocks with the reason; an allow says nothing.
func Decide(d warden.Decision) claude.Output {
	return claude.Decide(d, claude.Options{NoAllow: true, NoAsk: true})
}

// Context renders text for the model at event.
func Context(event, text string) claude.Output { return claude.Context(event, text) }

// Failure renders an infrastructure failure at event.
func Failure(event string, d warden.Decision) claude.Output {
	return claude.Failure(event, d)
}
