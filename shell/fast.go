package shell

// plain reports whether c can appear in a word the fast lexer handles: a
// word made only of these bytes means exactly itself to the shell.
func plain(c byte) bool {
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
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return false
}

// fast analyses lines made only of plain words separated by blanks and the
// operators ; && || |. It reports false, having recorded nothing, for any
// other line, which then goes to the full parser.
func (a *Analysis) fast(src string, depth int, via string) bool {
	// First pass: validate without recording anything.
	words, inWord, cmdWords := 0, false, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case plain(c):
			if !inWord {
				if cmdWords == 0 && reserved(wordAt(src, i)) {
					return false
				}
				inWord = true
				words++
				cmdWords++
			}
		case c == ' ' || c == '\t':
			inWord = false
		case c == ';' || c == '|' || c == '&':
			inWord = false
			if cmdWords == 0 {
				return false // empty command: let the parser report it
			}
			if c == '&' {
				if i+1 >= len(src) || src[i+1] != '&' {
					return false
				}
				i++
			} else if c == '|' && i+1 < len(src) && src[i+1] == '|' {
				i++
			}
			if c != ';' && !moreWords(src[i+1:]) {
				return false // a dangling && || |: incomplete
			}
			cmdWords = 0
		default:
			return false
		}
	}
	if words == 0 {
		return false
	}
	// Second pass: record commands. Pipeline ids are given to pipelines of
	// two or more stages.
	start := len(a.Commands)
	_ = start
	pipe, stage := -1, 0
	i := 0
	for i < len(src) {
		// Collect one simple command's words into the args buffer.
		argStart := len(a.argsBuf())
		for i < len(src) {
			c := src[i]
			if c == ' ' || c == '\t' {
				i++
				continue
			}
			if !plain(c) {
				break
			}
			j := i
			for j < len(src) && plain(src[j]) {
				j++
			}
			a.pushArg(src[i:j])
			i = j
		}
		args := a.argsBuf()[argStart:]
		// Skip leading assignments (FOO=1 cmd).
		for len(args) > 0 && isAssign(args[0]) {
			args = args[1:]
		}
		// The operator that ends this command.
		op := byte(0)
		if i < len(src) {
			op = src[i]
			if (op == '|' || op == '&') && i+1 < len(src) && src[i+1] == op {
				op = op + 128 // && or ||
				i++
			}
			i++
		}
		if op == '|' {
			if pipe < 0 {
				pipe, stage = a.newPipe(), 0
			}
			a.add(args, depth, via, pipe, stage)
			stage++
			continue
		}
		a.add(args, depth, via, pipe, stage)
		pipe, stage = -1, 0
	}
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
		if plain(s[i]) {
			return true
		}
		if s[i] != ' ' && s[i] != '\t' {
			return false
		}
	}
	return false
}
