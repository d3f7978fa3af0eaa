// Package wire holds the small pieces several host packages share: cutting
// text to a host's limit and reading a shell tool's exit code. It imports
// nothing but the standard library and package warden, so that the host
// packages stay light enough for the warden-hook client.
package wire

import (
	"regexp"
	"strconv"
	"sync"

	"github.com/warden-run/warden"
)

// Cut shortens s to at most n bytes on a rune boundary, marking the cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = " [truncated]"
	i := n - len(mark)
	for i > 0 && (s[i]&0xC0) == 0x80 {
		i--
	}
	return s[:i] + mark
}

// A call's outcome counts in sequence rules (after.ok, repeat.failures), so
// a host reports one only where the host says it: a failure that were read
// as a success would let a "push only after the tests passed" through.
// Where the host does not tell, the outcome is unknown ("").

// ExitOutcome is the outcome of a command that exited with code.
func ExitOutcome(code int) string {
	if code == 0 {
		return warden.OutcomeOK
	}
	return warden.OutcomeFail
}

// ExitLine finds a shell tool's report of a command's exit code. Compiled
// on first use: the warden-hook client links the host packages and starts
// for every hook event, and never uses it.
var ExitLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?mi)^\s*(?:Exit Code|exit code|Exit status)\s*:?\s*(-?\d+)\b`)
})

// ExitCode returns the exit code a shell tool's text reports, if it does.
// The text holds the command's own output too, which may print such a line
// itself: when the lines disagree, the code is unknown, so a command that
// prints "Exit Code: 0" and fails never passes for a success, whether the
// host writes its line before the output (Codex) or after it (Gemini CLI).
func ExitCode(text string) (int, bool) {
	all := ExitLine().FindAllStringSubmatch(text, -1)
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
