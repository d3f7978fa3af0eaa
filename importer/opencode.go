package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// opencodeTools maps OpenCode permission keys to warden tool names or
// kinds; "edit" covers write, edit and patch.
var opencodeTools = map[string][]string{
	"edit":      {"write", "edit", "patch"},
	"write":     {"write"},
	"patch":     {"patch"},
	"bash":      {"shell"},
	"read":      {"read"},
	"glob":      {"glob"},
	"grep":      {"grep"},
	"list":      {"list"},
	"webfetch":  {"webfetch"},
	"websearch": {"websearch"},
	"task":      {"task"},
	"todowrite": {"todowrite"},
	"todoread":  {"todoread"},
	"skill":     {"skill"},
}

// OpenCode imports the "permission" object of an opencode.json (JSON with
// comments accepted): "tool": "allow|ask|deny", or "tool": {"pattern":
// action, ...} for bash commands and file paths.
func OpenCode(file string, data []byte) (*Policy, error) {
	var cfg struct {
		Permission json.RawMessage `json:"permission"`
	}
	if err := json.Unmarshal(stripJSONComments(data), &cfg); err != nil {
		return nil, fmt.Errorf("%s: not an OpenCode config: %w", file, err)
	}
	p := newPolicy("opencode " + file)
	if len(cfg.Permission) == 0 {
		p.warnf("%s has no \"permission\" object; the policy has warden's defaults only", file)
		return p, nil
	}
	var perm map[string]json.RawMessage
	if err := json.Unmarshal(cfg.Permission, &perm); err != nil {
		// "permission": "allow" applies to everything.
		var all string
		if json.Unmarshal(cfg.Permission, &all) != nil {
			return nil, fmt.Errorf("%s: \"permission\" is neither an object nor a string", file)
		}
		perm = map[string]json.RawMessage{"*": cfg.Permission}
	}
	keys := make([]string, 0, len(perm))
	for k := range perm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		raw := perm[key]
		field := "permission." + key
		var action string
		if json.Unmarshal(raw, &action) == nil {
			eff, err := opencodeEffect(action)
			if err != nil {
				p.warnf("%s: %v; not carried over", field, err)
				continue
			}
			switch key {
			case "*":
				p.Safe, p.Destructive = eff, eff
				continue
			case "external_directory":
				p.Outside = eff
				continue
			case "doom_loop":
				p.warnf("%s %q is not carried over: warden does not detect repeated calls", field, action)
				continue
			}
			tools, ok := opencodeTools[key]
			if !ok {
				tools = []string{key} // a custom or MCP tool name
			}
			p.add(&Rule{Effect: eff, Tool: tools, From: fmt.Sprintf("%s %s: %q", file, field, action)}, key)
			continue
		}
		var patterns map[string]string
		if err := json.Unmarshal(raw, &patterns); err != nil {
			p.warnf("%s is neither an action nor an object of pattern -> action; not carried over", field)
			continue
		}
		tools, ok := opencodeTools[key]
		if !ok {
			p.warnf("%s: patterns for %q are not carried over (only bash and file tools take patterns)", field, key)
			continue
		}
		pats := make([]string, 0, len(patterns))
		for k := range patterns {
			pats = append(pats, k)
		}
		sort.Strings(pats)
		for _, pat := range pats {
			action := patterns[pat]
			eff, err := opencodeEffect(action)
			if err != nil {
				p.warnf("%s[%q]: %v; not carried over", field, pat, err)
				continue
			}
			from := fmt.Sprintf("%s %s[%q]: %q", file, field, pat, action)
			if pat == "*" {
				// A catch-all is the decision for what the other patterns
				// do not cover: warden's default, not a rule (a rule would
				// outrank the specific allows, since the most severe wins).
				if eff != p.Destructive {
					p.warnf("%s[\"*\"] %q is carried over as %s, warden's default for destructive calls: a catch-all %s rule would override the specific patterns of %s", field, action, p.Destructive, eff, key)
				}
				continue
			}
			r := &Rule{Effect: eff, Tool: tools, From: from}
			if key == "bash" {
				r.Command = []string{pat}
			} else {
				r.Path = []string{pat}
			}
			p.add(r, key+" "+pat)
		}
	}
	if len(perm) > 0 {
		p.warnf("OpenCode applies the last matching pattern; warden applies the most severe matching rule, so overlapping patterns may decide differently")
	}
	return p, nil
}

func opencodeEffect(a string) (string, error) {
	switch a {
	case "allow", "ask", "deny":
		return a, nil
	}
	return "", fmt.Errorf("action %q is not allow, ask or deny", a)
}

// stripJSONComments removes // and /* */ comments and trailing commas
// outside strings (OpenCode reads JSONC).
func stripJSONComments(data []byte) []byte {
	var b bytes.Buffer
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			b.WriteByte(c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			b.WriteByte(c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				i = len(data)
			} else {
				i += end + 3
			}
		case c == ',':
			j := i + 1
			for j < len(data) && strings.ContainsRune(" \t\r\n", rune(data[j])) {
				j++
			}
			if j < len(data) && (data[j] == '}' || data[j] == ']') {
				continue // trailing comma
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.Bytes()
}
