package hook

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/claude"
)

// A call's outcome counts in sequence rules (after.ok, repeat.failures), so
// an adapter reports one only where the host says it: a failure that were
// read as a success would let a "push only after the tests passed" through.
// Where the host does not tell, the outcome is unknown ("").

// claudeOutcome: Claude Code sends PostToolUseFailure for a call that
// failed (a command's non-zero exit included) and PostToolUse for one that
// did not. Codex sends PostToolUse only: its outcome is known when its
// response carries the command's exit code.
func claudeOutcome(host string, failed bool, response json.RawMessage) string {
	if host == claude.Host {
		if failed {
			return warden.OutcomeFail
		}
		return warden.OutcomeOK
	}
	var r struct {
		ExitCode *int `json:"exit_code"`
	}
	if json.Unmarshal(response, &r) == nil && r.ExitCode != nil {
		return exitOutcome(*r.ExitCode)
	}
	var s string
	if json.Unmarshal(response, &s) != nil {
		s = string(response)
	}
	if code, ok := exitCode(s); ok {
		return exitOutcome(code)
	}
	return ""
}

// geminiOutcome: Gemini CLI's AfterTool response carries an error when
// the tool failed; its shell tool reports a command's non-zero exit in
// its text ("Exit Code: 1") and no error.
func geminiOutcome(failed bool, text string) string {
	if failed {
		return warden.OutcomeFail
	}
	if code, ok := exitCode(text); ok {
		return exitOutcome(code)
	}
	switch {
	case exitLine().MatchString(text):
		return "" // exit lines that disagree
	case signalLine().MatchString(text):
		return warden.OutcomeFail // killed by a signal: no exit code line
	case strings.Contains(text, "was cancelled"), strings.HasPrefix(text, "Command moved to background"):
		return "" // it did not finish
	}
	return warden.OutcomeOK // Gemini CLI writes "Exit Code: N" only for N other than 0
}

// signalLine is Gemini CLI's report of a command killed by a signal.
// Compiled on first use, as exitLine: the warden-hook client links this
// package and starts for every hook event, and never uses either.
var signalLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Signal: \S`) })

func exitOutcome(code int) string {
	if code == 0 {
		return warden.OutcomeOK
	}
	return warden.OutcomeFail
}

// exitLine finds a shell tool's report of a command's exit code.
var exitLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?mi)^\s*(?:Exit Code|exit code|Exit status)\s*:?\s*(-?\d+)\b`)
})

// exitCode returns the exit code a shell tool's text reports, if it does.
// The text holds the command's own output too, which may print such a line
// itself: when the lines disagree, the code is unknown, so a command that
// prints "Exit Code: 0" and fails never passes for a success, whether the
// host writes its line before the output (Codex) or after it (Gemini CLI).
func exitCode(text string) (int, bool) {
	all := exitLine().FindAllStringSubmatch(text, -1)
	if all == nil {
		return 0, false
	}
	n, err := strconv.Atoi(all[0][1])
	if err != nil {
		return 0, false
	}
	for _, m := range all[1:] {
		if k, err := strconv.Atoi(m[1]); err != nil || k != n {
			return 0, false
		}
	}
	return n, true
}
