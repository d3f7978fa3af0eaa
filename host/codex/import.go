package codex

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/importer"
)

// Import imports a Codex exec-policy rules file (Starlark): every
// prefix_rule(pattern = [...], decision = "allow"|"prompt"|"forbidden",
// justification = "...") call. A pattern element that is a list is a set
// of alternatives.
func (Adapter) Import(in importer.Source) (*importer.Policy, error) {
	file, data := in.File, in.Data
	src := string(data)
	p := importer.New("codex " + file)
	n := 0
	for i := 0; ; {
		j := strings.Index(src[i:], "prefix_rule(")
		if j < 0 {
			break
		}
		start := i + j
		line := 1 + strings.Count(src[:start], "\n")
		if start > 0 && isIdent(src[start-1]) {
			i = start + len("prefix_rule(")
			continue
		}
		n++
		args, end, err := parseCall(src, start+len("prefix_rule("))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: prefix_rule: %w", file, line, err)
		}
		i = end
		field := fmt.Sprintf("prefix_rule at line %d", line)
		text := strings.Join(strings.Fields(src[start:end]), " ")
		pattern, ok := args["pattern"].([]any)
		if !ok || len(pattern) == 0 {
			p.Warnf("%s has no pattern list; not carried over", field)
			continue
		}
		eff := ""
		switch d, _ := args["decision"].(string); d {
		case "allow":
			eff = "allow"
		case "prompt", "":
			eff = "ask"
		case "forbidden":
			eff = "deny"
		default:
			p.Warnf("%s: decision %q is not allow, prompt or forbidden; not carried over", field, d)
			continue
		}
		cmds, err := expandPattern(pattern)
		if err != nil {
			p.Warnf("%s: %v; not carried over", field, err)
			continue
		}
		for k := range args {
			switch k {
			case "pattern", "decision", "justification":
			case "match", "not_match":
				// Examples Codex checks the rule against; not rules.
			default:
				p.Warnf("%s: argument %s is not carried over", field, k)
			}
		}
		r := &importer.Rule{Effect: eff, Tool: []string{"shell"}, Command: cmds, From: file + " " + field + ": " + text}
		if j, _ := args["justification"].(string); j != "" && eff != "allow" {
			r.Message = j
		}
		p.Add(r, strings.TrimSuffix(cmds[0], " *"))
	}
	for _, m := range codexCallRE().FindAllStringSubmatchIndex(src, -1) {
		if name := src[m[2]:m[3]]; name != "prefix_rule" {
			p.Warnf("%s(...) at line %d is not carried over: warden imports prefix_rule only", name, 1+strings.Count(src[:m[2]], "\n"))
		}
	}
	if n == 0 {
		p.Warnf("%s has no prefix_rule; the policy has warden's defaults only", file)
	}
	return p, nil
}

// codexCallRE finds the calls that start a line of a rules file. Compiled
// on first use: the warden-hook client links this package and never
// imports anything.
var codexCallRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(`)
})

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// expandPattern turns ["git", ["push", "fetch"]] into the command globs
// "git push *" and "git fetch *" (a prefix rule matches longer commands).
func expandPattern(pattern []any) ([]string, error) {
	prefixes := []string{""}
	for _, el := range pattern {
		var alts []string
		switch v := el.(type) {
		case string:
			alts = []string{v}
		case []any:
			for _, a := range v {
				s, ok := a.(string)
				if !ok {
					return nil, fmt.Errorf("pattern alternatives must be strings")
				}
				alts = append(alts, s)
			}
		default:
			return nil, fmt.Errorf("pattern elements must be strings or lists of strings")
		}
		var next []string
		for _, p := range prefixes {
			for _, a := range alts {
				if strings.ContainsAny(a, " \t*?[") {
					a = strconv.Quote(a)
				}
				next = append(next, strings.TrimSpace(p+" "+a))
			}
		}
		if len(next) > 64 {
			return nil, fmt.Errorf("pattern expands to more than 64 commands")
		}
		prefixes = next
	}
	for i := range prefixes {
		prefixes[i] += " *"
	}
	return prefixes, nil
}

// parseCall parses keyword arguments key = value up to the closing
// parenthesis; values are strings, lists (nested) and identifiers.
func parseCall(src string, i int) (map[string]any, int, error) {
	args := map[string]any{}
	for {
		i = skipSpace(src, i)
		if i >= len(src) {
			return nil, i, fmt.Errorf("missing )")
		}
		if src[i] == ')' {
			return args, i + 1, nil
		}
		k := i
		for i < len(src) && isIdent(src[i]) {
			i++
		}
		key := src[k:i]
		i = skipSpace(src, i)
		if key == "" || i >= len(src) || src[i] != '=' {
			return nil, i, fmt.Errorf("want keyword arguments (name = value)")
		}
		v, j, err := parseValue(src, i+1)
		if err != nil {
			return nil, j, fmt.Errorf("%s: %w", key, err)
		}
		args[key] = v
		i = skipSpace(src, j)
		if i < len(src) && src[i] == ',' {
			i++
		}
	}
}

func skipSpace(src string, i int) int {
	for i < len(src) {
		switch {
		case strings.IndexByte(" \t\r\n", src[i]) >= 0:
			i++
		case src[i] == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

func parseValue(src string, i int) (any, int, error) {
	i = skipSpace(src, i)
	if i >= len(src) {
		return nil, i, fmt.Errorf("missing value")
	}
	switch c := src[i]; {
	case c == '"' || c == '\'':
		for j := i + 1; j < len(src); j++ {
			if src[j] == '\\' {
				j++
				continue
			}
			if src[j] == c {
				lit := src[i : j+1]
				if c == '\'' {
					lit = strconv.Quote(src[i+1 : j])
				}
				s, err := strconv.Unquote(lit)
				return s, j + 1, err
			}
		}
		return nil, i, fmt.Errorf("unterminated string")
	case c == '[':
		var list []any
		i++
		for {
			i = skipSpace(src, i)
			if i < len(src) && src[i] == ']' {
				return list, i + 1, nil
			}
			v, j, err := parseValue(src, i)
			if err != nil {
				return nil, j, err
			}
			list = append(list, v)
			i = skipSpace(src, j)
			if i < len(src) && src[i] == ',' {
				i++
			}
		}
	case isIdent(c):
		j := i
		for j < len(src) && isIdent(src[j]) {
			j++
		}
		return src[i:j], j, nil
	}
	return nil, i, fmt.Errorf("unexpected %q", src[i])
}

var _ kit.Importer = Adapter{}
