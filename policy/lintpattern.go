package policy

import (
	"regexp"
	"strings"

	"github.com/warden-run/warden/shell"
)

// lintPattern warns of a command pattern whose meaning differs from its
// spelling (docs/policy.md, "Lint warnings"): quotes that do not group
// words, shell syntax compared as words, an assignment read as the
// program, Claude Code's prefix form, an option the program's table does
// not know, long options under a program that is a wildcard, operands
// written with ./, spaces around the pattern, and an allow for a program
// whose command is judged on its own.
func (d *decoder) lintPattern(r *Rule, c, path string) {
	warn := func(format string, args ...any) {
		d.warnAt(r.FieldPos["command"], path+".command", "%q: "+format, append([]any{c}, args...)...)
	}
	if strings.TrimSpace(c) != c && strings.TrimSpace(c) != "" {
		t := strings.TrimSpace(c)
		warn("the spaces around the pattern are ignored: it matches %q with nothing more; write %q to match more", t, strings.TrimSuffix(t, " *")+" *")
	}
	gluedFlag := false
	for _, stage := range strings.Split(c, "|") {
		toks := strings.Fields(stage)
		if len(toks) == 0 {
			continue
		}
		for _, t := range toks {
			if len(t) > 1 && t[0] == '-' && strings.ContainsAny(t, "*?[") {
				gluedFlag = true
			}
		}
		prog := toks[0]
		if assignRE.MatchString(prog) {
			warn("%s is read as the program's name, not an assignment, so the pattern meets no call; leave the assignment out (%q): a variable a rule cannot vouch for keeps the command from being allowed anyway", prog, strings.Join(toks[1:], " "))
			continue
		}
		if i := strings.Index(prog, ":"); i > 0 && strings.HasSuffix(prog, ":*") {
			warn("%s is Claude Code's prefix form; warden reads it as a program named %s, which no call has; write %q", prog, prog, prog[:i]+" *")
			continue
		}
		if len(toks) > 1 && strings.HasSuffix(toks[1], ":*") {
			if sub := strings.TrimSuffix(toks[1], ":*"); !strings.Contains(sub, ":") && shell.IsSub(prog, sub) {
				warn("%s is Claude Code's prefix form; warden compares it as one operand, so it never meets %s %s; write %q", toks[1], prog, sub, prog+" "+sub+" *")
			}
		}
		for _, t := range toks[1:] {
			switch {
			case t == "&&" || t == "||" || t == ";" || t == "&" || strings.HasSuffix(t, ";") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "<") || strings.HasPrefix(t, "2>") || strings.Contains(t, "$(") || strings.Contains(t, "`"):
				warn("%s is compared as a word: a pattern is one command, or a pipeline of commands joined by |, and each command of a line is matched on its own; write one pattern per command (a redirection is a write, matched by a path rule)", t)
			case len(t) > 1 && (t[0] == '\'' || t[0] == '"') && (t[len(t)-1] != t[0] || len(t) == 1) || len(t) > 1 && (t[len(t)-1] == '\'' || t[len(t)-1] == '"') && t[0] != t[len(t)-1]:
				warn("quotes do not group words in a pattern: the words are compared one by one, with the quote marks, so %s meets no call; put * for the quoted text", t)
			case len(t) > 2 && (t[0] == '\'' || t[0] == '"') && t[len(t)-1] == t[0] && strings.ContainsAny(t[1:len(t)-1], "*?["):
				warn("%s is still a wildcard: quotes around a word are removed, not its wildcards", t)
			case strings.HasPrefix(t, "./") && len(t) > 2:
				warn("operands are compared as written, so %s does not meet %s; write both spellings as two patterns", t, strings.TrimPrefix(t, "./"))
			default:
				continue
			}
			break
		}
		if strings.ContainsAny(prog, "*?[") {
			for _, t := range toks[1:] {
				if strings.HasPrefix(t, "--") && len(t) > 2 && !strings.ContainsAny(t, "*?[") {
					warn("with the program %s, options are read without any program's table, so %s does not meet a program that spells it short (rg --version is -V, grep --recursive is -r); name the programs, one pattern each", prog, t)
					break
				}
			}
		}
	}
	if !gluedFlag {
		if why := shell.PatternOptionUnknown(c); why != "" {
			warn("%s, so the pattern meets no call as warden reads it (a misspelt option?); use the option's spelling from the program's manual", why)
		}
	}
	if r.Effect == "allow" || r.Effect == "warn" {
		toks := strings.Fields(strings.Split(c, "|")[0])
		if len(toks) > 0 && shell.Unwraps(toks[0]) && (len(toks) > 1 && toks[len(toks)-1] == "*" || hasOperand(toks[1:])) {
			warn("warden judges the command %s runs as a part of its own, so this %s vouches for %s alone: the command it runs needs a rule of its own: write a pattern for that command", toks[0], r.Effect, toks[0])
		}
	}
}

var assignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// hasOperand reports a word that is not an option.
func hasOperand(toks []string) bool {
	for _, t := range toks {
		if !strings.HasPrefix(t, "-") {
			return true
		}
	}
	return false
}
