package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/importer"
)

// claudeTools maps Claude Code permission tool names to warden tool names
// or kinds. Edit rules in Claude Code cover every file-editing tool.
var claudeTools = map[string][]string{
	"Bash":         {"shell"},
	"Read":         {"read"},
	"Edit":         {"write", "edit"},
	"Write":        {"write"},
	"MultiEdit":    {"edit"},
	"NotebookEdit": {"NotebookEdit"},
	"Glob":         {"Glob"},
	"Grep":         {"Grep"},
	"LS":           {"LS"},
	"WebFetch":     {"WebFetch"},
	"WebSearch":    {"WebSearch"},
	"Task":         {"delegate"},
	"Agent":        {"delegate"},
	"TodoWrite":    {"TodoWrite"},
}

// Import imports a Claude Code settings file (.claude/settings.json,
// settings.local.json or ~/.claude/settings.json): permissions.allow, ask
// and deny, defaultMode and additionalDirectories. A subagent file
// (.claude/agents/NAME.md, a markdown file with YAML front matter) becomes
// a role of the agent's name whose tools are the agent's `tools`.
func (Adapter) Import(src importer.Source) (*importer.Policy, error) {
	file, data := src.File, src.Data
	if t := bytes.TrimLeft(data, "\ufeff \t\r\n"); bytes.HasPrefix(t, []byte("---")) {
		return claudeAgent(file, t, src.YAML)
	}
	var keys struct {
		Permissions map[string]json.RawMessage `json:"permissions"`
	}
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("%s: not a Claude Code settings file: %w", file, err)
	}
	var s struct {
		Permissions *struct {
			Allow                 []string `json:"allow"`
			Ask                   []string `json:"ask"`
			Deny                  []string `json:"deny"`
			DefaultMode           string   `json:"defaultMode"`
			AdditionalDirectories []string `json:"additionalDirectories"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: not a Claude Code settings file: %w", file, err)
	}
	p := importer.New("claude " + file)
	if s.Permissions == nil {
		p.Warnf("%s has no \"permissions\" object; the policy has warden's defaults only", file)
		return p, nil
	}
	perm := s.Permissions
	var unknown []string
	for k := range keys.Permissions {
		switch k {
		case "allow", "ask", "deny", "defaultMode", "additionalDirectories":
		default:
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p.Warnf("permissions.%s is not carried over: warden has no equivalent (it decides every call by its rules, whatever mode the host runs in)", k)
	}
	switch perm.DefaultMode {
	case "", "default":
	case "acceptEdits":
		p.Warnf("permissions.defaultMode %q (edits without asking) is carried over as an allow rule for write and edit in the workspace", perm.DefaultMode)
		p.Add(&importer.Rule{Effect: "allow", Tool: []string{"write", "edit"}, Path: []string{"**"},
			From: file + " permissions.defaultMode: " + perm.DefaultMode}, "accept-edits")
	default:
		p.Warnf("permissions.defaultMode %q is not carried over: warden's default stays allow for reads and ask for everything else", perm.DefaultMode)
	}
	for _, d := range perm.AdditionalDirectories {
		p.Warnf("permissions.additionalDirectories %q is not carried over: warden has one workspace root; paths outside it are denied", d)
	}
	for _, list := range []struct {
		effect string
		rules  []string
	}{{"deny", perm.Deny}, {"ask", perm.Ask}, {"allow", perm.Allow}} {
		for i, text := range list.rules {
			from := fmt.Sprintf("%s permissions.%s[%d]: %s", file, list.effect, i, text)
			r, err := claudeRule(text)
			if err != nil {
				p.Warnf("permissions.%s[%d] %q is not carried over: %v", list.effect, i, text, err)
				continue
			}
			r.Effect, r.From = list.effect, from
			p.Add(r, text)
		}
	}
	return p, nil
}

// claudeRule converts one permission rule: Tool or Tool(specifier).
func claudeRule(text string) (*importer.Rule, error) {
	text = strings.TrimSpace(text)
	name, spec, hasSpec := text, "", false
	if i := strings.IndexByte(text, '('); i > 0 && strings.HasSuffix(text, ")") {
		name, spec, hasSpec = text[:i], text[i+1:len(text)-1], true
	}
	if strings.HasPrefix(name, "mcp__") {
		if hasSpec {
			return nil, fmt.Errorf("MCP rules take no specifier")
		}
		// mcp__server matches every tool of the server.
		if strings.Count(name, "__") == 1 {
			name += "__*"
		}
		return &importer.Rule{Tool: []string{name}}, nil
	}
	tools, ok := claudeTools[name]
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	r := &importer.Rule{Tool: tools}
	if !hasSpec || spec == "" || spec == "*" {
		return r, nil
	}
	switch name {
	case "Bash":
		r.Command = []string{claudeCommand(spec)}
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit":
		pat, err := claudePath(spec)
		if err != nil {
			return nil, err
		}
		r.Path = []string{pat}
	case "WebFetch":
		dom, ok := strings.CutPrefix(spec, "domain:")
		if !ok {
			return nil, fmt.Errorf("WebFetch specifier %q: want domain:NAME", spec)
		}
		r.Args = map[string]string{"url": "http*://" + dom + "/*"}
	case "Task", "Agent":
		r.Args = map[string]string{"subagent_type": spec}
	default:
		return nil, fmt.Errorf("specifier %q of %s has no warden equivalent", spec, name)
	}
	return r, nil
}

// claudeCommand converts a Bash specifier: "npm run test:*" (prefix) and
// "git diff *" are command globs; anything else matches exactly.
func claudeCommand(spec string) string {
	if pre, ok := strings.CutSuffix(spec, ":*"); ok {
		return strings.TrimSpace(pre) + " *"
	}
	return importer.GlobCommand(spec)
}

// claudePath converts a Read/Edit specifier (gitignore-style) to a path
// glob relative to the workspace root: "./x" and "x" are relative,
// "/x" is relative to the settings' project, "//x" is absolute, "~/x" is
// in the home folder.
func claudePath(spec string) (string, error) {
	switch {
	case strings.HasPrefix(spec, "//"):
		return spec[1:], nil
	case strings.HasPrefix(spec, "~/"):
		return spec, nil
	case strings.HasPrefix(spec, "/"):
		return spec[1:], nil
	case strings.HasPrefix(spec, "./"):
		return spec[2:], nil
	}
	if !strings.Contains(spec, "/") {
		// gitignore: a bare name matches at any depth.
		return "**/" + spec, nil
	}
	return spec, nil
}

// claudeAgent imports a Claude Code subagent file: its front matter's name
// becomes a role, its tools (a comma-separated list; none means every
// tool) the role's tools.
func claudeAgent(file string, data []byte, decodeYAML func([]byte, any) error) (*importer.Policy, error) {
	rest := bytes.TrimPrefix(data, []byte("---"))
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return nil, fmt.Errorf("%s: a subagent file's front matter has no closing ---", file)
	}
	var fm map[string]any
	if err := decodeYAML(rest[:end], &fm); err != nil {
		return nil, fmt.Errorf("%s: front matter: %w", file, err)
	}
	p := importer.New("claude " + file)
	name, _ := fm["name"].(string)
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("%s: front matter: a subagent needs a name", file)
	}
	r := p.Role(name, file+" (Claude Code subagent)")
	r.Description, _ = fm["description"].(string)
	var tools []string
	switch v := fm["tools"].(type) {
	case nil:
	case string:
		tools = strings.Split(v, ",")
	case []any:
		for _, t := range v {
			tools = append(tools, fmt.Sprint(t))
		}
	default:
		return nil, fmt.Errorf("%s: front matter: tools must be a comma-separated list of tool names", file)
	}
	if tools != nil {
		r.Tools = []string{}
		for _, t := range tools {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if i := strings.IndexByte(t, '('); i > 0 {
				p.Warnf("tools entry %q: the specifier is not carried over; the role may use %s with any arguments", t, t[:i])
				t = t[:i]
			}
			if !slices.Contains(r.Tools, t) {
				r.Tools = append(r.Tools, t)
			}
		}
	} else if fm["disallowedTools"] == nil {
		p.Warnf("the subagent has no tools list, so it inherits every tool; the role %s may use any tool", name)
	}
	var denied []string
	switch v := fm["disallowedTools"].(type) {
	case string:
		denied = strings.Split(v, ",")
	case []any:
		for _, t := range v {
			denied = append(denied, fmt.Sprint(t))
		}
	}
	for _, t := range denied {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if r.Tools != nil {
			r.Tools = importer.Without(r.Tools, []string{t})
			continue
		}
		p.Add(&importer.Rule{Effect: "deny", Tool: []string{t}, Roles: []string{name},
			Message:    "The " + name + " subagent may not use " + t + ": its definition disallows it.",
			Suggestion: "Use another tool, or report back to the agent that delegated to you.",
			From:       file + " disallowedTools: " + t}, name+" "+t)
	}
	keys := make([]string, 0, len(fm))
	for k := range fm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "name", "description", "tools", "disallowedTools", "model", "color":
		default:
			p.Warnf("front matter %s is not carried over: warden's roles have no equivalent", k)
		}
	}
	return p, nil
}

var _ kit.Importer = Adapter{}
