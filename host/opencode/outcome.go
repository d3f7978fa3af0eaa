package opencode

import (
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/internal/wire"
)

// TaskTool is OpenCode's tool that runs a subagent.
const TaskTool = "task"

// Outcome is what a call did, as far as the plugin's tool.execute.after
// tells: a shell command's exit code (the bash tool's metadata), a
// subagent's result from its text (TaskOutcome), and "" (unknown) for
// every other tool. tool.execute.after does not fire for a tool that
// threw: that call's outcome stays unknown.
func (in *Input) Outcome() string {
	switch {
	case in.Exit != nil:
		return wire.ExitOutcome(*in.Exit)
	case in.Tool == TaskTool:
		return TaskOutcome(in.Output)
	}
	return ""
}

// TaskOutcome classifies a subagent's result from its text, as seed 000
// does: a result that mentions an error or a failure ("error", "failed",
// in any case) failed, any other passed; an empty result is unknown. The
// rule is coarse on purpose: a subagent that reports "no errors" is
// counted failed, never a failed one counted passed.
func TaskOutcome(output string) string {
	text := strings.ToLower(output)
	switch {
	case strings.TrimSpace(text) == "":
		return ""
	case strings.Contains(text, "error"), strings.Contains(text, "failed"):
		return warden.OutcomeFail
	}
	return warden.OutcomeOK
}
