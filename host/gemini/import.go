package gemini

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/importer"
)

// geminiTools maps Gemini CLI tool names to warden tool names or kinds.
var geminiTools = map[string][]string{
	"run_shell_command":   {"shell"},
	"write_file":          {"write"},
	"replace":             {"edit"},
	"read_file":           {"read"},
	"read_many_files":     {"read_many_files"},
	"glob":                {"glob"},
	"search_file_content": {"search_file_content"},
	"list_directory":      {"list_directory"},
	"web_fetch":           {"web_fetch"},
	"google_web_search":   {"google_web_search"},
}

// Import imports a Gemini CLI policy file (TOML, [[rule]] tables with
// toolName, mcpName, commandPrefix, decision, priority, ...).
func (Adapter) Import(src importer.Source) (*importer.Policy, error) {
	file, data := src.File, src.Data
	tables, skipped, err := parseRuleTables(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	p := importer.New("gemini " + file)
	for _, s := range skipped {
		p.Warnf("%s is not carried over: warden reads only [[rule]] tables", s)
	}
	if len(tables) == 0 {
		p.Warnf("%s has no [[rule]] tables; the policy has warden's defaults only", file)
	}
	priorities := map[string]bool{}
	for i, t := range tables {
		field := fmt.Sprintf("[[rule]] #%d (line %d)", i+1, t.line)
		from := fmt.Sprintf("%s %s: %s", file, field, t.text)
		eff := ""
		switch d := t.str("decision"); d {
		case "allow", "deny":
			eff = d
		case "ask_user", "ask":
			eff = "ask"
		default:
			p.Warnf("%s: decision %q is not allow, deny or ask_user; not carried over", field, d)
			continue
		}
		if pr, ok := t.vals["priority"]; ok {
			priorities[fmt.Sprint(pr)] = true
		}
		var unknown []string
		for k := range t.vals {
			switch k {
			case "toolName", "mcpName", "commandPrefix", "decision", "priority", "argsPattern", "commandRegex", "modes", "denyMessage":
			default:
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		if len(unknown) > 0 && eff == "allow" {
			p.Warnf("%s: %s not understood by warden; the allow rule is dropped rather than widened", field, strings.Join(unknown, ", "))
			continue
		}
		for _, k := range unknown {
			p.Warnf("%s: %s is not understood by warden; the %s rule is carried over without it, so it may match more calls", field, k, eff)
		}
		dropped := false
		for _, k := range []string{"argsPattern", "commandRegex", "modes"} {
			if _, ok := t.vals[k]; !ok {
				continue
			}
			if eff == "allow" {
				p.Warnf("%s: %s has no warden equivalent; the allow rule is dropped rather than widened", field, k)
				dropped = true
				break
			}
			p.Warnf("%s: %s has no warden equivalent; the %s rule is carried over without it, so it matches more calls", field, k, eff)
		}
		if dropped {
			continue
		}
		var tools []string
		for _, name := range t.strs("toolName") {
			if m, ok := geminiTools[name]; ok {
				tools = append(tools, m...)
			} else {
				tools = append(tools, name)
			}
		}
		if mcp := t.str("mcpName"); mcp != "" {
			if len(tools) == 0 {
				tools = []string{"mcp__" + mcp + "__*"}
			} else {
				for j, name := range tools {
					tools[j] = "mcp__" + mcp + "__" + name
				}
			}
		}
		r := &importer.Rule{Effect: eff, Tool: tools, From: from}
		for _, pre := range t.strs("commandPrefix") {
			r.Command = append(r.Command, strings.TrimSpace(pre)+" *")
		}
		if m := t.str("denyMessage"); m != "" && eff == "deny" {
			r.Message = m
		}
		name := strings.Join(t.strs("toolName"), "-")
		if len(r.Command) > 0 {
			name += " " + t.strs("commandPrefix")[0]
		}
		if name == "" {
			name = "rule"
		}
		p.Add(r, name)
	}
	if len(priorities) > 1 {
		p.Warnf("rule priorities are not carried over: warden applies the most severe matching rule")
	}
	return p, nil
}

// ruleTable is one [[rule]] table of a TOML file.
type ruleTable struct {
	line int
	text string
	vals map[string]any // string, int64, bool, or []any of those
}

func (t *ruleTable) str(k string) string {
	s, _ := t.vals[k].(string)
	return s
}

// strs returns a string or a list of strings.
func (t *ruleTable) strs(k string) []string {
	switch v := t.vals[k].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// parseRuleTables reads the subset of TOML policy files use: [[rule]]
// tables of key = value, where a value is a string, an integer, a boolean
// or an array of those (arrays may span lines). Other tables are skipped
// and returned as "[name] (line N)".
func parseRuleTables(src string) ([]*ruleTable, []string, error) {
	var out []*ruleTable
	var skipped []string
	var cur *ruleTable
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(stripTOMLComment(lines[i]))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			cur = nil
			if line == "[[rule]]" {
				cur = &ruleTable{line: i + 1, vals: map[string]any{}}
				out = append(out, cur)
			} else {
				skipped = append(skipped, fmt.Sprintf("%s (line %d)", line, i+1))
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, nil, fmt.Errorf("line %d: want key = value, got %q", i+1, line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		// An array may continue on the next lines.
		for strings.HasPrefix(v, "[") && strings.Count(v, "[") > strings.Count(v, "]") && i+1 < len(lines) {
			i++
			v += " " + strings.TrimSpace(stripTOMLComment(lines[i]))
		}
		val, rest, err := tomlValue(v)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %s: %w", i+1, k, err)
		}
		if strings.TrimSpace(rest) != "" {
			return nil, nil, fmt.Errorf("line %d: %s: unexpected %q after the value", i+1, k, rest)
		}
		if cur != nil {
			cur.vals[k] = val
			if cur.text != "" {
				cur.text += ", "
			}
			cur.text += k + " = " + v
		}
	}
	return out, skipped, nil
}

func stripTOMLComment(line string) string {
	inStr := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inStr != 0:
			if c == '\\' && inStr == '"' {
				i++
			} else if c == inStr {
				inStr = 0
			}
		case c == '"' || c == '\'':
			inStr = c
		case c == '#':
			return line[:i]
		}
	}
	return line
}

// tomlValue parses one value at the start of s and returns the rest.
func tomlValue(s string) (any, string, error) {
	s = strings.TrimLeft(s, " \t")
	switch {
	case s == "":
		return nil, "", fmt.Errorf("missing value")
	case s[0] == '"':
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == '"' {
				v, err := strconv.Unquote(s[:i+1])
				return v, s[i+1:], err
			}
		}
		return nil, "", fmt.Errorf("unterminated string")
	case s[0] == '\'':
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return nil, "", fmt.Errorf("unterminated string")
		}
		return s[1 : end+1], s[end+2:], nil
	case s[0] == '[':
		var list []any
		rest := strings.TrimLeft(s[1:], " \t")
		for {
			rest = strings.TrimLeft(rest, " \t")
			if strings.HasPrefix(rest, "]") {
				return list, rest[1:], nil
			}
			v, r, err := tomlValue(rest)
			if err != nil {
				return nil, "", err
			}
			list = append(list, v)
			rest = strings.TrimLeft(r, " \t")
			rest = strings.TrimPrefix(rest, ",")
		}
	case s[0] == '{':
		// An inline table: { key = value, ... }.
		tbl := map[string]any{}
		rest := s[1:]
		for {
			rest = strings.TrimLeft(rest, " \t")
			if strings.HasPrefix(rest, "}") {
				return tbl, rest[1:], nil
			}
			k, r, ok := strings.Cut(rest, "=")
			if !ok {
				return nil, "", fmt.Errorf("inline table: want key = value")
			}
			v, r, err := tomlValue(r)
			if err != nil {
				return nil, "", err
			}
			tbl[strings.Trim(strings.TrimSpace(k), `"'`)] = v
			rest = strings.TrimPrefix(strings.TrimLeft(r, " \t"), ",")
		}
	case strings.HasPrefix(s, "true"):
		return true, s[4:], nil
	case strings.HasPrefix(s, "false"):
		return false, s[5:], nil
	}
	end := strings.IndexAny(s, " \t,]}")
	if end < 0 {
		end = len(s)
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s[:end], "_", ""), 10, 64)
	if err != nil {
		return nil, "", fmt.Errorf("unsupported value %q", s[:end])
	}
	return n, s[end:], nil
}

var _ kit.Importer = Adapter{}
