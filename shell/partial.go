package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// partialText returns the text a computed word (given as its source,
// Display of a Dyn word) stands for, with its expansions kept as written:
// "rm -rf $X" is rm -rf $X, 'rm -rf '$X is rm -rf $X. Analysed as a line,
// the literal words are judged, and each expansion is a computed word
// (a command substitution is analysed as one). It fails on a word it
// cannot read.
func partialText(src string) (string, bool) {
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(": "+src), "")
	parsers.Put(p)
	if err != nil || len(f.Stmts) != 1 {
		return "", false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 2 || len(f.Stmts[0].Redirs) > 0 {
		return "", false
	}
	var b strings.Builder
	ok = partialParts(&b, call.Args[1].Parts, false)
	return b.String(), ok
}

func partialParts(b *strings.Builder, parts []syntax.WordPart, quoted bool) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(shUnescape(p.Value, quoted))
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar || !partialParts(b, p.Parts, true) {
				return false
			}
		default:
			// An expansion: kept as written, computed when the text is
			// read as a line.
			printerMu.Lock()
			printer.Print(b, p)
			printerMu.Unlock()
		}
	}
	return true
}

// shUnescape removes the backslashes the shell removes: before any
// character outside quotes, before $ ` " \ and a newline inside double
// quotes.
func shUnescape(s string, quoted bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// partial records text a shell will run whose words are partly computed
// (eval "rm -rf $X", sh -c "$A; ls", a here-string fed to a shell): the
// literal words are analysed as a line, with the expansions as computed
// words, and the rest (what the values hold, which the shell reads as
// code: X='x; evil') is a computed command.
func (a *Analysis) partial(words []string, depth int, via string) {
	a.computed("(the text "+via+" runs, partly computed at run time)", via)
	texts := make([]string, 0, len(words))
	for _, w := range words {
		if !IsDyn(w) {
			texts = append(texts, w)
			continue
		}
		t, ok := partialText(Display(w))
		if !ok {
			return
		}
		texts = append(texts, t)
	}
	a.partialLine(strings.Join(texts, " "), depth, via)
}

// partialLine analyses text with expansions in it as a line; a text that
// does not parse as one (the values complete it) adds nothing more.
func (a *Analysis) partialLine(text string, depth int, via string) {
	before := a.Err
	a.line(text, depth+1, via)
	if a.Err != before && a.Err != ErrTooDeep && a.Err != ErrTooLong && a.Err != ErrTooComplex {
		a.Err = before
	}
}
