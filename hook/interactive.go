package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GeminiInteractive reports whether the Gemini CLI that runs this process
// is interactive: only then can it show the confirmation a hook's "ask"
// requests (headless, an ask waits forever). It looks at the ancestor
// processes (Linux /proc): a gemini process without -p/--prompt whose
// stdin is a terminal. Anything else, or no /proc, counts as headless, and
// an ask goes to warden's queue.
func GeminiInteractive() bool {
	pid := os.Getppid()
	for range 6 {
		if pid <= 1 {
			return false
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return false
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if IsGeminiProcess(args) {
			for _, a := range args[1:] {
				if a == "-p" || a == "--prompt" || strings.HasPrefix(a, "--prompt=") {
					return false
				}
			}
			tty, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
			return err == nil && (strings.HasPrefix(tty, "/dev/pts/") || strings.HasPrefix(tty, "/dev/tty"))
		}
		pid = ParentPID(pid)
	}
	return false
}

// ClaudeInteractive reports whether the Claude Code that runs this process
// can prompt its user. Headless runs (claude -p, the SDKs) set
// CLAUDE_CODE_ENTRYPOINT to sdk-cli, sdk-ts or sdk-py and
// CLAUDE_CODE_SESSION_ATTENDED to 0 in the hook's environment; there an
// ask would be refused by Claude Code with nobody to answer it, so it goes
// to warden's queue like on the other headless hosts.
func ClaudeInteractive() bool {
	if strings.HasPrefix(os.Getenv("CLAUDE_CODE_ENTRYPOINT"), "sdk-") || os.Getenv("CLAUDE_CODE_SESSION_ATTENDED") == "0" {
		return false
	}
	return true
}

// IsGeminiProcess reports whether a command line is Gemini CLI's.
func IsGeminiProcess(args []string) bool {
	for _, a := range args[:min(len(args), 3)] {
		base := filepath.Base(a)
		if base == "gemini" || base == "gemini.js" || strings.Contains(a, "gemini-cli") {
			return true
		}
	}
	return false
}

// ParentPID returns a process's parent, or 0.
func ParentPID(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...; comm may contain spaces and parentheses.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
