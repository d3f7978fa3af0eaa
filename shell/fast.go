package shell

import (
	"errors"
	"strings"
)

// MaxLine is the longest command line warden analyses: 1 MiB. Linux runs
// no single argument longer than 128 KiB (bash -c LINE fails), so a longer
// line is no command a host can run as given; analysing it would cost time
// the other calls need.
const MaxLine = 1 << 20

// ErrTooLong is the error of a line longer than MaxLine. Such a line can
// never be allowed by a rule.
var ErrTooLong = errors.New("command is longer than 1 MiB, more than a shell is given to run; warden does not analyse it")

// plain reports whether c can appear in a word the fast lexer handles: a
// word made only of these bytes means exactly itself to the shell.
func plain(c byte) bool { return plainBytes[c] }

// plainBytes is plainByte for every byte: one load where plain is asked
// of each byte of a line.
var plainBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = plainByte(byte(c))
	}
	return t
}()

// plainOrBlank is plainBytes with the blanks (space, tab) added.
var plainOrBlank = func() (t [256]bool) {
	t = plainBytes
	t[' '], t['\t'] = true, true
	return t
}()

// plainByte is what plain reports, spelt out.
func plainByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', '/', ':', ',', '+', '@', '%', '=':
		return true
	}
	return false
}

// reserved words change the grammar; lines that start a command with one
// go to the full parser.
func reserved(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
		"do", "done", "in", "function", "time", "coproc", "!", "[[", "]]", "{", "}":
		return true
	}
	return false
}

// isAssign reports whether w is a NAME=VALUE assignment word.
func isAssign(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c == '=':
			return i > 0
		case c == '+':
			return i > 0 && i+1 < len(w) && w[i+1] == '='
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return false
}

// groupEnd returns the index just past the ")" that closes the "$(" at i,
// or -1 when the group holds anything but plain words, blanks, the
// operators ; && || | and nested $( ) groups.
func groupEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case c == '$':
			if j+1 >= len(s) || s[j+1] != '(' || j+2 < len(s) && s[j+2] == '(' {
				return -1
			}
			depth++
			j++
		case c == ')':
			depth--
			if depth == 0 {
				return j + 1
			}
		case plain(c), c == ' ', c == '\t', c == ';', c == '|', c == '&':
		default:
			return -1
		}
	}
	return -1
}

// fastValid reports whether the fast lexer handles src: plain words and
// $( ) groups separated by blanks and the operators ; && || |, with no
// empty command and no dangling operator, in every group as at the top.
//
// It reads src once, whatever the nesting: the state of each enclosing
// group waits on a stack while the group inside it is read (a recursion
// on each group, scanning for its end first, took time quadratic in the
// nesting: 10,000 nested $( took 27 s).
func fastValid(src string) bool {
	ok, _ := fastScan(src)
	return ok
}

// fastScan is fastValid, which also returns how deep the line nests $( )
// groups: for such a line that is what nesting counts, so the fast path
// reads the line once for both.
func fastScan(src string) (ok bool, deepest int) {
	type level struct{ words, cmdWords int }
	var few [8]level
	outer := few[:0]
	cur, inWord := level{}, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case plain(c):
			if !inWord {
				if cur.cmdWords == 0 && reserved(wordAt(src, i)) {
					return false, 0
				}
				inWord = true
				cur.words++
				cur.cmdWords++
			}
			// The rest of the word, in a loop of its own.
			for i+1 < len(src) && plain(src[i+1]) {
				i++
			}
		case c == '$':
			if i+1 >= len(src) || src[i+1] != '(' || i+2 < len(src) && src[i+2] == '(' {
				return false, 0
			}
			// The group is (part of) a word of the enclosing command.
			if !inWord {
				cur.words++
				cur.cmdWords++
			}
			outer = append(outer, cur)
			deepest = max(deepest, len(outer))
			cur, inWord = level{}, false
			i++
		case c == ')':
			if len(outer) == 0 || cur.words == 0 {
				return false, 0
			}
			cur, outer = outer[len(outer)-1], outer[:len(outer)-1]
			inWord = true
		case c == ' ' || c == '\t':
			inWord = false
		case c == ';' || c == '|' || c == '&':
			inWord = false
			if cur.cmdWords == 0 {
				return false, 0 // empty command: let the parser report it
			}
			if c == '&' {
				if i+1 >= len(src) || src[i+1] != '&' {
					return false, 0
				}
				i++
			} else if c == '|' && i+1 < len(src) && src[i+1] == '|' {
				i++
			}
			if c != ';' && !moreWords(src[i+1:]) {
				return false, 0 // a dangling && || |: incomplete
			}
			cur.cmdWords = 0
		default:
			return false, 0
		}
	}
	if len(outer) != 0 || cur.words == 0 {
		return false, 0
	}
	return true, deepest
}

// fast analyses the lines fastValid accepts and reports true; for any
// other line it records nothing and reports false, and the line goes to
// the full parser. Both produce the same commands (a fuzz test checks it).
//
// A line nested deeper than warden analyses ((, $( and backticks inside
// one another, more than maxDepth levels) is answered here with ErrTooDeep
// too: the full parser's cost grows with the nesting times the length
// (100 KB of nested "$( took 32 s to print its words).
func (a *Analysis) fast(src string, depth int, via string) bool {
	if len(src) > MaxLine {
		a.Err = ErrTooLong
		return true
	}
	if a.plainCommand(src, depth, via) {
		return true
	}
	// A line the fast lexer reads nests only $( ) groups, which fastScan
	// counts as nesting does; any other line is counted by nesting before
	// it goes to the parser.
	ok, deep := fastScan(src)
	if !ok {
		deep = nesting(src, maxDepth-depth+1)
	}
	if depth+deep > maxDepth {
		a.Err = ErrTooDeep
		return true
	}
	if !ok {
		return false
	}
	pipe, stage := -1, 0
	i := 0
	for i < len(src) {
		// One simple command: its words, then the operator that ends it.
		start := i
		argStart := len(a.buf)
		for i < len(src) {
			c := src[i]
			if c == ' ' || c == '\t' {
				i++
				continue
			}
			if !plain(c) && c != '$' {
				break
			}
			j, dyn := i, false
			for {
				for j < len(src) && plain(src[j]) {
					j++
				}
				if j < len(src) && src[j] == '$' {
					j = groupEnd(src, j)
					dyn = true
					continue
				}
				break
			}
			if dyn {
				a.pushArg(Dyn + src[i:j])
			} else {
				a.pushArg(src[i:j])
			}
			i = j
		}
		end := i
		args := a.buf[argStart:]
		var env []string
		for len(args) > 0 && isAssign(strings.TrimPrefix(args[0], Dyn)) {
			args = args[1:]
		}
		if k := len(a.buf[argStart:]) - len(args); k > 0 {
			env = a.buf[argStart : argStart+k : argStart+k]
		}
		op := byte(0)
		if i < len(src) {
			op = src[i]
			if (op == '|' || op == '&') && i+1 < len(src) && src[i+1] == op {
				op = 0 // && or ||
				i++
			}
			i++
		}
		if op == '|' {
			if pipe < 0 {
				pipe, stage = a.newPipe(), 0
			}
			a.add(env, args, depth, via, pipe, stage)
			stage++
		} else {
			a.add(env, args, depth, via, pipe, stage)
			pipe, stage = -1, 0
		}
		// The commands inside $( ) groups, after the command itself (a
		// line without one nests nothing: deep is 0).
		for k := start; deep > 0 && k < end; k++ {
			if src[k] == '$' {
				g := groupEnd(src, k)
				a.line(src[k+2:g-1], depth+1, "$(...)")
				k = g - 1
			}
		}
	}
	return true
}

// plainCommand is fast for the most common line: one simple command of
// plain words (no $, no operator), read twice (its bytes, its words),
// where fast reads it three times (fastScan, its words, its $( ) groups)
// and with less to keep. For any other line it records nothing and
// reports false, having read it up to its first byte that is neither
// plain nor a blank. fastScan accepts such a line unless its first word
// is a reserved word, which is checked here too.
func (a *Analysis) plainCommand(src string, depth int, via string) bool {
	for i := 0; i < len(src); i++ {
		if !plainOrBlank[src[i]] {
			return false
		}
	}
	argStart := len(a.buf)
	for i := 0; i < len(src); {
		if c := src[i]; c == ' ' || c == '\t' {
			i++
			continue
		}
		j := i + 1
		for j < len(src) && plain(src[j]) {
			j++
		}
		if len(a.buf) == argStart && reserved(src[i:j]) {
			return false // nothing pushed yet
		}
		a.pushArg(src[i:j])
		i = j
	}
	args := a.buf[argStart:]
	if len(args) == 0 {
		return false
	}
	var env []string
	for len(args) > 0 && isAssign(args[0]) {
		args = args[1:]
	}
	if k := len(a.buf[argStart:]) - len(args); k > 0 {
		env = a.buf[argStart : argStart+k : argStart+k]
	}
	a.add(env, args, depth, via, -1, 0)
	return true
}

func wordAt(s string, i int) string {
	j := i
	for j < len(s) && plain(s[j]) {
		j++
	}
	return s[i:j]
}

func moreWords(s string) bool {
	for i := 0; i < len(s); i++ {
		if plain(s[i]) || s[i] == '$' {
			return true
		}
		if s[i] != ' ' && s[i] != '\t' {
			return false
		}
	}
	return false
}

// nesting returns how deep src nests ( ) groups, $( ) and backticks inside
// one another, reading it once, and stops counting at limit. Quoting is
// followed as far as the count needs: quoted text is data, "$( opens a
// group inside double quotes. It may count low for odd lines (a case
// pattern's ")" closes a group early); the parser has the last word.
func nesting(src string, limit int) int {
	const (
		code  = 'c' // top level, or inside ( or $(
		dq    = 'd' // inside double quotes
		btick = 'b' // inside backticks
	)
	stack := make([]byte, 1, 32)
	stack[0] = code
	deepest := 0
	push := func(c byte) {
		stack = append(stack, c)
		n := 0
		for _, s := range stack[1:] {
			if s != dq {
				n++
			}
		}
		deepest = max(deepest, n)
	}
	for i := 0; i < len(src) && deepest < limit; i++ {
		c := src[i]
		top := stack[len(stack)-1]
		if top == dq {
			switch {
			case c == '\\':
				i++
			case c == '"':
				stack = stack[:len(stack)-1]
			case c == '$' && i+1 < len(src) && src[i+1] == '(':
				push(code)
				i++
			case c == '`':
				push(btick)
			}
			continue
		}
		switch c {
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return deepest
			}
			i += j + 1
		case '"':
			stack = append(stack, dq)
		case '(':
			push(code)
		case ')':
			if top == code && len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case '`':
			if top == btick {
				stack = stack[:len(stack)-1]
			} else {
				push(btick)
			}
		case '#':
			if i == 0 || strings.IndexByte(" \t\n;&|(", src[i-1]) >= 0 {
				j := strings.IndexByte(src[i:], '\n')
				if j < 0 {
					return deepest
				}
				i += j
			}
		}
	}
	return deepest
}
