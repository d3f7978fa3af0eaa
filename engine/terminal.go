package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// terminalInput prepares the text a call types into a running process's
// terminal (Codex's write_stdin `chars`) for analysis as the command lines
// an interactive shell there would read. A terminal is not a pipe: its
// line editor (the tty's own, readline, a REPL's) acts on control
// characters (Ctrl-U erases the line typed so far, Ctrl-H and DEL a
// character, Ctrl-A moves to its start, Tab completes a name, Ctrl-R
// searches the history, ESC starts a key sequence), and an interactive
// bash expands history references (`!!`, `!-2`, `^old^new`) before it
// parses the line. The text alone then does not tell which line runs:
// `echo hi` Ctrl-U `rm -rf src` runs rm. Such text gets a reason (why is
// not empty) and is not analysed. CR is the Enter key, read as a newline.
// Empty text (a poll for output) and text of Ctrl-C and Ctrl-D alone (an
// interrupt, an end of input) send no command: they are read as the
// shell's no-op.
func terminalInput(s string) (text, why string) {
	if s == "" || strings.Trim(s, "\x03\x04") == "" {
		return ":", ""
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lineStart := true
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return "", "the text typed into the terminal is not valid UTF-8, and a line editor may read its bytes as keys"
		case r == '\n':
			lineStart = true
			continue
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			return "", fmt.Sprintf("the text typed into the terminal holds the control character %U, which a terminal's line editor acts on (erase, move, complete, search), so the line the program reads cannot be known from the text; send the command as plain text ending in a newline", r)
		case r == '!':
			if i+1 < len(s) && !strings.ContainsRune(" \t\n=(", rune(s[i+1])) {
				return "", "the text typed into the terminal holds a history reference (" + histRef(s[i:]) + "), which an interactive shell replaces with an earlier command line before it runs the line; spell the command out"
			}
		case r == '^' && lineStart:
			return "", "the text typed into the terminal starts a line with ^, which an interactive shell reads as a substitution in the previous command line; spell the command out"
		}
		lineStart = false
	}
	return s, ""
}

// histRef is the history reference at the start of s, for a reason.
func histRef(s string) string {
	n := strings.IndexAny(s, " \t\n;&|")
	if n < 0 {
		n = len(s)
	}
	return strings.ToValidUTF8(s[:min(n, 20)], "")
}
