package progs

import (
	"regexp"
	"strings"
)

// The commands and files of awk and sed programs (issue 31, class 4): the
// program still carries its risk (no rule and no default allows it), and
// what it runs and writes is also judged: system("rm -rf x") meets a rule
// for rm -rf, print > ".git/config" a protected path.

// awkString is an awk string literal.
const awkString = `"(?:[^"\\\n]|\\.)*"`

var (
	// system("..."), "..." | getline, print ... | "...", print ... > "..."
	awkSystem = regexp.MustCompile(`\bsystem\s*\(\s*(` + awkString + `)?`)
	awkGetln  = regexp.MustCompile(`(` + awkString + `)?\s*\|&?\s*getline\b`)
	awkPipe   = regexp.MustCompile(`\b(?:print|printf)\b[^|>;}\n]*\|&?\s*(` + awkString + `)?`)
	awkRedir  = regexp.MustCompile(`\b(?:print|printf)\b[^|>;}\n]*>>?\s*(` + awkString + `)?`)
)

// awkEffects records the commands and files of an awk program: a literal
// string is a command line or a file, anything else (a variable, a
// concatenation) a computed one.
func awkEffects(r *Result, prog string) {
	add := func(m []string, arg Arg, via string) {
		if len(m) > 1 && m[1] != "" && awkEnds(prog, m[0]) {
			r.Effects = append(r.Effects, Effect{Arg: arg, Val: awkUnquote(m[1]), Via: via})
			return
		}
		r.Effects = append(r.Effects, Effect{Arg: arg, Val: "\x00(the " + via + " target of the awk program, computed at run time)", Via: via})
	}
	for _, m := range awkSystem.FindAllStringSubmatch(prog, -1) {
		add(m, Shell, "awk system")
	}
	for _, m := range awkGetln.FindAllStringSubmatch(prog, -1) {
		add(m, Shell, "awk getline")
	}
	for _, m := range awkPipe.FindAllStringSubmatch(prog, -1) {
		add(m, Shell, "awk print |")
	}
	for _, m := range awkRedir.FindAllStringSubmatch(prog, -1) {
		if len(m) > 1 && m[1] != "" && (awkUnquote(m[1]) == "/dev/stderr" || awkUnquote(m[1]) == "/dev/stdout") {
			continue
		}
		add(m, Write, "awk print >")
	}
}

// awkEnds: the literal is the whole argument (system("a") and not
// system("a" x)): what follows the match is ) or the end of a statement.
func awkEnds(prog, match string) bool {
	i := strings.Index(prog, match)
	if i < 0 {
		return false
	}
	rest := strings.TrimLeft(prog[i+len(match):], " \t")
	if strings.HasSuffix(match, "getline") {
		return true
	}
	return rest == "" || strings.ContainsRune(");}\n", rune(rest[0])) || strings.HasPrefix(rest, "|")
}

func awkUnquote(s string) string {
	s = s[1 : len(s)-1]
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sedEffects reads a sed script as GNU sed 4.9 does (info sed, "sed
// scripts"): w FILE, W FILE and s///w FILE write FILE, r and R read it,
// e COMMAND runs COMMAND, and e alone and s///e run the pattern space
// (a computed command). The file name and command run to the end of the
// line. It reports false for a script it cannot read.
func sedEffects(r *Result, s string) bool {
	i := 0
	rest := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		v := strings.TrimLeft(s[i:i+j], " \t")
		i += j
		return v
	}
	// delimited skips a delimited part (a regex or a replacement).
	delimited := func(d byte) bool {
		for ; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case d:
				i++
				return true
			case '\n':
				if d != '\n' {
					return false
				}
			}
		}
		return false
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!':
			i++
			continue
		case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+':
			i++
			continue
		case c == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
			continue
		case c == '\\':
			if i+1 >= len(s) {
				return false
			}
			i += 2
			if !delimited(s[i-1]) {
				return false
			}
			continue
		}
		i++
		switch c {
		case 's', 'y':
			if i >= len(s) {
				return false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return false
			}
			if c == 'y' {
				continue
			}
			for i < len(s) && strings.IndexByte("gpiImMe0123456789w", s[i]) >= 0 {
				switch s[i] {
				case 'e':
					r.Effects = append(r.Effects, Effect{Arg: Shell, Val: "\x00(the pattern space sed s///e runs)", Via: "sed s///e"})
				case 'w':
					i++
					r.Effects = append(r.Effects, Effect{Arg: Write, Val: rest(), Via: "sed s///w"})
					continue
				}
				i++
			}
		case 'w', 'W':
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: rest(), Via: "sed " + string(c)})
		case 'r', 'R':
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: rest(), Via: "sed " + string(c)})
		case 'e':
			if cmd := rest(); cmd != "" {
				r.Effects = append(r.Effects, Effect{Arg: Shell, Val: cmd, Via: "sed e"})
			} else {
				r.Effects = append(r.Effects, Effect{Arg: Shell, Val: "\x00(the pattern space sed e runs)", Via: "sed e"})
			}
		case 'a', 'i', 'c', ':', 'b', 't', 'T':
			if c == ':' || c == 'b' || c == 't' || c == 'T' {
				for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
					i++
				}
				continue
			}
			rest()
		case 'q', 'Q', 'l', 'L':
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case 'd', 'D', 'p', 'P', 'n', 'N', 'g', 'G', 'h', 'H', 'x', '=', 'z', 'F':
		case '#':
			rest()
		default:
			return false
		}
	}
	return true
}
