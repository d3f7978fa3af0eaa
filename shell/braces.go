package shell

import (
	"os"
	"os/user"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords bounds brace expansion: a word that would expand to more
// words than this (echo {1..1000}{1..1000}) is computed, so the line cannot
// be allowed by a rule, and the analysis never holds more than a few
// thousand words for it.
const maxBraceWords = 1024

// maxLineBraceWords bounds the words brace expansion makes in one line
// (many words of {a,b,c,d}{e,f,g,h}); maxBraceParts the parts of the words
// one expansion makes, so that a word of a hundred thousand {1..9} is
// computed before its first word is built whole; maxBraceExprs the brace
// expressions of one word.
const (
	maxLineBraceWords = 8192
	maxBraceParts     = 1 << 16
	maxBraceExprs     = 64
)

// expandBraces splits and expands the brace expressions of a word into at
// most min(budget, maxBraceWords) words. Past the bounds the word is
// returned as one computed word.
func expandBraces(w *syntax.Word, budget int) ([]*syntax.Word, bool) {
	if budget <= 0 {
		return []*syntax.Word{tooMany(w)}, true
	}
	cp := *w
	cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
	if !syntax.SplitBraces(&cp) {
		if maybeBraces(w) {
			// Text bash may still expand ({{0}},} is {0}}): read it as
			// computed rather than guess.
			return []*syntax.Word{tooMany(w)}, false
		}
		return []*syntax.Word{w}, false
	}
	exprs := 0
	for _, p := range cp.Parts {
		if _, ok := p.(*syntax.BraceExp); ok {
			exprs++
		}
	}
	if exprs > maxBraceExprs {
		return []*syntax.Word{tooMany(w)}, true
	}
	var out []*syntax.Word
	parts := 0
	for x, err := range expand.BracesSeq(nil, &cp) {
		if err != nil || len(out) >= min(budget, maxBraceWords) || parts > maxBraceParts {
			return []*syntax.Word{tooMany(w)}, true
		}
		parts += len(x.Parts)
		if maybeBraces(x) || seqBackslash(w, x) {
			return []*syntax.Word{tooMany(w)}, false
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return []*syntax.Word{w}, false
	}
	return out, false
}

// maybeBraces reports whether the unquoted text of a word has a "{"
// followed later by "," or ".." and a "}": a brace expression bash may
// expand.
func maybeBraces(w *syntax.Word) bool {
	var b strings.Builder
	check := func() bool {
		t := b.String()
		b.Reset()
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return false
		}
		// Up to the last "}": a ".." after it is text (HEAD@{1}..,
		// main@{upstream}..HEAD are git's selectors, not expansions).
		j := strings.LastIndexByte(t, '}')
		if j < i {
			return false
		}
		rest := t[i : j+1]
		return strings.IndexByte(rest, ',') > 0 || strings.Contains(rest, "..")
	}
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
			continue
		}
		if check() {
			return true
		}
	}
	return check()
}

// seqBackslash reports whether a character range ({Z..a}) produced a
// backslash, which bash then removes as a quote: such words are computed.
func seqBackslash(orig, x *syntax.Word) bool {
	n := 0
	for _, p := range orig.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			n += strings.Count(l.Value, "\\")
		}
	}
	m := 0
	for _, p := range x.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			m += strings.Count(l.Value, "\\")
		}
	}
	return m > n
}

// tooMany returns a word that stands for a brace expansion too large to
// read: a computed word with the expansion's source text.
func tooMany(w *syntax.Word) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "BRACES"}}}}
}

// userHome returns the home folder of a user, for ~user.
func userHome(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "", false
		}
	}
	u, err := user.Lookup(name)
	if err != nil || u.HomeDir == "" {
		return "", false
	}
	return u.HomeDir, true
}

// ansiC decodes a $'...' string as bash does (QUOTING in bash(1)): \a \b
// \e \E \f \n \r \t \v \\ \' \" \?, \nnn (octal), \xHH, \uHHHH,
// \UHHHHHHHH and \cx. A NUL ends the string, as it ends a C string.
//
// A \u or \U past ASCII is written as in a UTF-8 locale; in another
// locale bash writes it otherwise (in the C locale, as the text \u00E9),
// so there ansiC reports the word unsure (computed at run time).
func ansiC(s string) (string, bool) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, false
	}
	unsure := false
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 32)
			if n&0xff == 0 {
				return b.String(), unsure
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			if e == 'x' && i+1 < len(s) && s[i+1] == '{' {
				// \x{HHH}: any number of hex digits, the low byte kept.
				j := i + 2
				n := 0
				for j < len(s) && isHex(s[j]) {
					v, _ := strconv.ParseUint(s[j:j+1], 16, 8)
					n = (n*16 + int(v)) & 0xff
					j++
				}
				if j < len(s) && s[j] == '}' {
					j++
				}
				if n == 0 {
					return b.String(), unsure
				}
				b.WriteByte(byte(n))
				i = j - 1
				continue
			}
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j < i+1+max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if n == 0 {
				return b.String(), unsure
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				bashUTF8(&b, n)
				unsure = unsure || n >= 0x80 && !utf8Locale()
			}
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				i++
				ch := s[i]
				if ch == '\\' && i+1 < len(s) && s[i+1] == '\\' {
					i++
				}
				v := ch & 0x1f
				if ch == '?' {
					v = 0x7f
				}
				if v == 0 {
					return b.String(), unsure
				}
				b.WriteByte(v)
			} else {
				b.WriteString("\\c")
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), unsure
}

// bashUTF8 writes the character n as bash 5.2 does in a UTF-8 locale
// (u32toutf8): the UTF-8 scheme as first defined, whatever n is, so a
// surrogate (\ud800) is its three bytes and a number past U+10FFFF up to
// 0x7FFFFFFF takes four to six; a larger one writes nothing.
func bashUTF8(b *strings.Builder, n uint64) {
	switch {
	case n < 0x80:
		b.WriteByte(byte(n))
	case n < 0x800:
		b.WriteByte(byte(0xc0 | n>>6))
		b.WriteByte(byte(0x80 | n&0x3f))
	case n < 0x10000:
		b.WriteByte(byte(0xe0 | n>>12))
		b.WriteByte(byte(0x80 | n>>6&0x3f))
		b.WriteByte(byte(0x80 | n&0x3f))
	case n < 0x200000:
		b.WriteByte(byte(0xf0 | n>>18))
		b.WriteByte(byte(0x80 | n>>12&0x3f))
		b.WriteByte(byte(0x80 | n>>6&0x3f))
		b.WriteByte(byte(0x80 | n&0x3f))
	case n < 0x4000000:
		b.WriteByte(byte(0xf8 | n>>24))
		b.WriteByte(byte(0x80 | n>>18&0x3f))
		b.WriteByte(byte(0x80 | n>>12&0x3f))
		b.WriteByte(byte(0x80 | n>>6&0x3f))
		b.WriteByte(byte(0x80 | n&0x3f))
	case n <= 0x7fffffff:
		b.WriteByte(byte(0xfc | n>>30))
		b.WriteByte(byte(0x80 | n>>24&0x3f))
		b.WriteByte(byte(0x80 | n>>18&0x3f))
		b.WriteByte(byte(0x80 | n>>12&0x3f))
		b.WriteByte(byte(0x80 | n>>6&0x3f))
		b.WriteByte(byte(0x80 | n&0x3f))
	}
}

// utf8Locale reports whether the locale the shell runs in (LC_ALL, else
// LC_CTYPE, else LANG, as warden inherits them from the host) is UTF-8.
func utf8Locale() bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := strings.ToLower(os.Getenv(k)); v != "" {
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
