package warden

import (
	"strings"
	"unicode"
)

// TerminalSafe makes model- and terminal-facing text plain (docs/policy.md,
// "What the model reads"): it drops emoji, pictographs, box-drawing and block
// characters, arrows other than the plain right arrow (which becomes
// "->"), variation selectors, zero-width joiners, carriage returns and
// other unprintable characters except newlines and tabs, turns other
// spaces (no-break, ideographic) into plain ones, and trims spaces at the
// ends of lines. Plain text passes through unchanged.
func TerminalSafe(s string) string {
	if _, ok := UnsafeRune(s); !ok && !strings.Contains(s, " \n") && !strings.Contains(s, "\t\n") {
		return strings.TrimRight(s, " \t")
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0x2192:
			b.WriteString("->")
		case r == '\r':
		case unicode.IsSpace(r) && r != '\n' && r != '\t':
			b.WriteByte(' ') // no-break and other wide spaces
		case unsafeRune(r):
		default:
			b.WriteRune(r)
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// UnsafeRune returns the first character of s that TerminalSafe replaces
// or drops, and whether there is one.
func UnsafeRune(s string) (rune, bool) {
	for _, r := range s {
		if r == 0x2192 || unsafeRune(r) {
			return r, true
		}
	}
	return 0, false
}

func unsafeRune(r rune) bool {
	switch {
	case r >= 0x2500 && r <= 0x259F, // box drawing, block elements
		r >= 0x2190 && r <= 0x21FF && r != 0x2192, // arrows, except the plain right arrow
		r >= 0x2600 && r <= 0x27BF,                // symbols, dingbats
		r >= 0x2B00 && r <= 0x2BFF,                // more arrows and symbols
		r >= 0x1F000 && r <= 0x1FAFF,              // emoji and pictographs
		r >= 0xFE00 && r <= 0xFE0F, r == 0x200D:   // variation selectors, ZWJ
		return true
	}
	return !unicode.IsPrint(r) && r != '\n' && r != '\t'
}
