package opencode

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
	"task":      {"delegate"},
	"todowrite": {"todowrite"},
	"todoread":  {"todoread"},
	"skill":     {"skill"},
}

// Import imports the "permission" object of an opencode.json (JSON with
// comments accepted): "tool": "allow|ask|deny", or "tool": {"pattern":
// action, ...} for bash commands, file paths and (for task) subagent
// names. Each agent's own "permission" object and its "tools" switches
// ("write": false) become rules for a role of the agent's name; an agent
// whose permission is "*": "deny" (or "deny") gets a role whose tools are
// only those it allows.
func (Adapter) Import(src importer.Source) (*importer.Policy, error) {
	file, data := src.File, src.Data
	var cfg struct {
		Permission json.RawMessage            `json:"permission"`
		Agent      map[string]json.RawMessage `json:"agent"`
		Tools      map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(stripJSONComments(data), &cfg); err != nil {
		return nil, fmt.Errorf("%s: not an OpenCode config: %w", file, err)
	}
	p := importer.New("opencode " + file)
	if len(cfg.Permission) == 0 && len(cfg.Agent) == 0 && len(cfg.Tools) == 0 {
		p.Warnf("%s has no \"permission\" object; the policy has warden's defaults only", file)
		return p, nil
	}
	oc := &ocImport{p: p, file: file, global: map[string]string{}, own: ownSettings(cfg.Agent)}
	if len(cfg.Permission) > 0 {
		if err := oc.permission(cfg.Permission, "permission", ""); err != nil {
			return nil, err
		}
	}
	oc.toolSwitches(cfg.Tools, "tools", "")
	names := make([]string, 0, len(cfg.Agent))
	for n := range cfg.Agent {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := oc.agent(name, cfg.Agent[name]); err != nil {
			return nil, err
		}
	}
	if oc.patterns {
		p.Warnf("OpenCode applies the last matching pattern; warden applies the most severe matching rule, so overlapping patterns may decide differently")
	}
	return p, nil
}

type ocImport struct {
	p    *importer.Policy
	file string
	// global holds the effects of the top-level permission keys, to tell
	// when an agent's own setting is weaker than the one every agent has.
	global   map[string]string
	patterns bool
	// own lists, by permission key, the agents whose own setting for the
	// key replaces the top-level one in OpenCode (ownSettings).
	own map[string][]string
}

// ownSettings finds, for each permission key, the agents whose own setting
// replaces the top-level one for them in OpenCode: an action ("task":
// "allow"), or a pattern object with its own catch-all ("*"). A pattern
// object without one is merged with the top-level patterns, whose "*"
// still applies.
func ownSettings(agents map[string]json.RawMessage) map[string][]string {
	own := map[string][]string{}
	names := make([]string, 0, len(agents))
	for n := range agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var a struct {
			Permission map[string]json.RawMessage `json:"permission"`
		}
		if json.Unmarshal(agents[name], &a) != nil {
			continue
		}
		for key, raw := range a.Permission {
			var action string
			var patterns map[string]string
			switch {
			case json.Unmarshal(raw, &action) == nil:
			case json.Unmarshal(raw, &patterns) == nil && patterns["*"] != "":
			default:
				continue
			}
			own[key] = append(own[key], name)
		}
	}
	return own
}

// exceptOwn narrows a top-level rule for key to the agents that do not set
// the key themselves (roles "!NAME"), so that an agent keeps its own
// setting, as in OpenCode, instead of meeting the top-level deny or ask
// (warden applies the most severe matching rule). It warns with what it
// changed.
func (oc *ocImport) exceptOwn(r *importer.Rule, key, field, action string) {
	agents := oc.own[key]
	if len(agents) == 0 || r.Effect == "allow" {
		return
	}
	for _, a := range agents {
		r.Roles = append(r.Roles, "!"+a)
	}
	r.Message = strings.Replace(r.Message, "every agent", "every agent but "+strings.Join(agents, ", "), 1)
	oc.p.Warnf("%s %q is carried over for every agent but %s, whose own %s setting replaces it in OpenCode (roles: %s)",
		field, action, strings.Join(agents, ", "), key, strings.Join(r.Roles, ", "))
}

// agent carries over agent.NAME: its permission object and its tools map.
func (oc *ocImport) agent(name string, raw json.RawMessage) error {
	var a struct {
		Description string                     `json:"description"`
		Permission  json.RawMessage            `json:"permission"`
		Tools       map[string]json.RawMessage `json:"tools"`
	}
	field := "agent." + name
	if err := json.Unmarshal(raw, &a); err != nil {
		return fmt.Errorf("%s: %s is not an agent object: %w", oc.file, field, err)
	}
	if len(a.Permission) == 0 && len(a.Tools) == 0 {
		return nil
	}
	r := oc.p.Role(name, fmt.Sprintf("%s %s (OpenCode agent)", oc.file, field))
	r.Description = a.Description
	if len(a.Permission) > 0 {
		if err := oc.permission(a.Permission, field+".permission", name); err != nil {
			return err
		}
	}
	oc.toolSwitches(a.Tools, field+".tools", name)
	return nil
}

// toolSwitches carries over a tools map ("write": false): a switched-off
// tool is denied to the agent (role) or, at the top level, to every agent.
func (oc *ocImport) toolSwitches(m map[string]json.RawMessage, field, role string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var r *importer.Role
	var roles []string
	who := "No agent may"
	if role != "" {
		r, roles, who = oc.p.Role(role, ""), []string{role}, "The "+role+" agent may not"
	}
	for _, k := range keys {
		var on bool
		if json.Unmarshal(m[k], &on) != nil {
			oc.p.Warnf("%s.%s is not true or false; not carried over", field, k)
			continue
		}
		if on {
			continue // enabled: the permissions decide
		}
		tools := ocTools(k)
		if r != nil && r.Tools != nil {
			r.Tools = importer.Without(r.Tools, tools)
			continue
		}
		if strings.ContainsAny(k, "*?") {
			tools = []string{k} // OpenCode's wildcard over tool names: a warden glob
		}
		oc.p.Add(&importer.Rule{Effect: "deny", Tool: tools, Roles: roles,
			Message:    fmt.Sprintf("%s use %s: it is switched off in OpenCode's settings.", who, k),
			Suggestion: "Use another tool, or delegate this step to an agent that may use " + k + ".",
			From:       fmt.Sprintf("%s %s.%s: false", oc.file, field, k)}, strings.TrimPrefix(role+" "+k, " "))
	}
}

// ocTools maps an OpenCode tool or permission key to warden tool names or
// kinds; an unknown key is a custom or MCP tool name.
func ocTools(key string) []string {
	if t, ok := opencodeTools[key]; ok {
		return t
	}
	return []string{key}
}

// permission carries over one permission object: the top-level one (role
// "") or an agent's.
func (oc *ocImport) permission(raw json.RawMessage, prefix, role string) error {
	p, file := oc.p, oc.file
	var perm map[string]json.RawMessage
	if err := json.Unmarshal(raw, &perm); err != nil {
		// "permission": "allow" applies to everything.
		var all string
		if json.Unmarshal(raw, &all) != nil {
			return fmt.Errorf("%s: %q is neither an object nor a string", file, prefix)
		}
		perm = map[string]json.RawMessage{"*": raw}
	}
	keys := make([]string, 0, len(perm))
	for k := range perm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var roles []string
	who, namePre := "every agent", ""
	if role != "" {
		roles, who, namePre = []string{role}, "the "+role+" agent", role+" "
	}
	// An agent that denies everything it does not name gets an allow-list:
	// the tools it allows or asks about, and nothing else.
	if role != "" {
		var all string
		if r, ok := perm["*"]; ok && json.Unmarshal(r, &all) == nil && all == "deny" {
			tools := []string{}
			for _, k := range keys {
				var a string
				if k == "*" || k == "external_directory" || k == "doom_loop" || json.Unmarshal(perm[k], &a) == nil && a == "deny" {
					continue
				}
				for _, t := range ocTools(k) {
					if !slices.Contains(tools, t) {
						tools = append(tools, t)
					}
				}
			}
			p.Role(role, "").Tools = tools
		}
	}
	for _, key := range keys {
		raw := perm[key]
		field := prefix + "." + key
		var action string
		if json.Unmarshal(raw, &action) == nil {
			eff, err := opencodeEffect(action)
			if err != nil {
				p.Warnf("%s: %v; not carried over", field, err)
				continue
			}
			switch key {
			case "*":
				if role == "" {
					p.Safe, p.Destructive = eff, eff
				} else if eff != "deny" {
					p.Warnf("%s %q is not carried over: warden has no default per role, so the %s agent gets the policy's default (%s for destructive calls)", field, action, role, p.Destructive)
				}
				continue
			case "external_directory":
				if role == "" {
					p.Outside = eff
				} else {
					p.Warnf("%s %q is not carried over: warden has one workspace.outside for every agent (%s)", field, action, orDeny(p.Outside))
				}
				continue
			case "doom_loop":
				p.Warnf("%s %q is not carried over: warden does not detect repeated calls", field, action)
				continue
			}
			if role == "" {
				oc.global[key] = eff
			}
			if eff == "deny" && role != "" && p.Role(role, "").Tools != nil {
				continue // left out of the role's tools
			}
			r := &importer.Rule{Effect: eff, Tool: ocTools(key), Roles: roles, From: fmt.Sprintf("%s %s: %q", file, field, action)}
			if eff == "deny" {
				r.Message = fmt.Sprintf("OpenCode's settings deny %s the %s tool.", who, key)
				if key == "task" {
					r.Suggestion = "Do this step yourself, or report back to the agent that delegated it."
				}
			}
			if role == "" {
				oc.exceptOwn(r, key, field, action)
			}
			p.Add(r, namePre+key)
			continue
		}
		var patterns map[string]string
		if err := json.Unmarshal(raw, &patterns); err != nil {
			p.Warnf("%s is neither an action nor an object of pattern -> action; not carried over", field)
			continue
		}
		if !ocPatternKeys[key] {
			p.Warnf("%s: patterns for %q are not carried over (warden carries patterns of bash, task and the file tools)", field, key)
			continue
		}
		oc.patterns = true
		tools := ocTools(key)
		// In an agent whose permission is "*": "deny", a pattern object
		// without a catch-all of its own denies what its patterns do not
		// name: the agent's "*" applies.
		inherited := false
		if _, ok := patterns["*"]; !ok && role != "" && p.Role(role, "").Tools != nil {
			patterns["*"], inherited = "deny", true
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
				p.Warnf("%s[%q]: %v; not carried over", field, pat, err)
				continue
			}
			from := fmt.Sprintf("%s %s[%q]: %q", file, field, pat, action)
			if inherited && pat == "*" {
				from = fmt.Sprintf("%s %s.*: \"deny\" (the agent's catch-all, for the %s calls the patterns do not name)", file, prefix, key)
			}
			if pat == "*" {
				// A catch-all is the decision for what the other patterns
				// do not cover. When no other pattern is milder, a rule
				// for the whole tool says the same (the most severe
				// wins); otherwise it is warden's default, since a rule
				// would outrank the milder specific patterns.
				if eff != "allow" && !milderPattern(patterns, eff) {
					r := &importer.Rule{Effect: eff, Tool: tools, Roles: roles, From: from}
					if eff == "deny" {
						r.Message = fmt.Sprintf("OpenCode's settings deny %s the %s tool.", who, key)
						if key == "task" {
							r.Suggestion = "Do this step yourself, or report back to the agent that delegated it."
						}
					}
					if role == "" {
						oc.exceptOwn(r, key, fmt.Sprintf("%s[%q]", field, pat), action)
					}
					p.Add(r, namePre+key)
					continue
				}
				switch {
				case inherited:
					p.Warnf("%s: OpenCode denies the %s agent the %s calls these patterns do not name (its \"*\": \"deny\"); warden carries that over as its default for destructive calls (%s): a deny rule for every %s call would override the specific patterns", field, role, key, p.Destructive, key)
				case eff != p.Destructive:
					p.Warnf("%s[\"*\"] %q is carried over as %s, warden's default for destructive calls: a catch-all %s rule would override the specific patterns of %s", field, action, p.Destructive, eff, key)
				}
				continue
			}
			r := &importer.Rule{Effect: eff, Tool: tools, Roles: roles, From: from}
			switch key {
			case "bash":
				r.Command = []string{importer.GlobCommand(pat)}
			case "task":
				// OpenCode matches task patterns against the subagent's
				// name: the task tool's subagent_type argument.
				r.Tool = []string{"delegate"}
				r.Args = map[string]string{"subagent_type": pat}
				if eff == "deny" {
					r.Message = fmt.Sprintf("OpenCode's settings deny %s delegating to the %s subagent.", who, pat)
					r.Suggestion = "Delegate to another subagent, or do this step yourself."
				}
			default:
				r.Path = []string{pat}
			}
			p.Add(r, namePre+key+" "+pat)
		}
	}
	return nil
}

// ocPatternKeys are the permission keys whose patterns warden carries
// over: commands for bash, subagent names for task, paths for the rest.
var ocPatternKeys = map[string]bool{"bash": true, "task": true, "edit": true, "write": true, "patch": true,
	"read": true, "glob": true, "grep": true, "list": true}

// milderPattern reports whether a pattern other than "*" has an action
// milder than eff.
func milderPattern(patterns map[string]string, eff string) bool {
	for pat, a := range patterns {
		if pat != "*" && severity(a) < severity(eff) {
			return true
		}
	}
	return false
}

func severity(eff string) int {
	switch eff {
	case "deny":
		return 3
	case "ask":
		return 2
	case "allow":
		return 1
	}
	return 0
}

func orDeny(s string) string {
	if s == "" {
		return "deny"
	}
	return s
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

var _ kit.Importer = Adapter{}
