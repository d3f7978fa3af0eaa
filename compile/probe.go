package compile

import (
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/policy"
)

// kindTool names one tool of each kind, for probe calls.
var kindTool = map[string]string{
	"shell": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "delete": "delete_file", "list": "LS",
	"fetch": "WebFetch", "delegate": "Task", "todo": "TodoWrite", "intent": "select_active_intent",
}

// probes derives calls a rule matches from its own patterns (every * made
// concrete), so that the loosening check sees more of what the rule
// covers than the model's tests show: an allow of "npm *" with a test on
// "npm test" alone still meets "npm x". A rule with an intent regex gets
// none: its tests must show it.
func probes(r yamlRule, p *policy.Policy) []warden.ToolCall {
	if r.Intent != "" {
		return nil
	}
	var tools []string
	for _, t := range r.Tool {
		switch {
		case len(t) > 1 && t[0] == '/' && t[len(t)-1] == '/':
			continue // a regex: its tests must show it
		case policy.IsKind(t):
			if name, ok := kindTool[t]; ok {
				tools = append(tools, name)
			}
		default:
			tools = append(tools, concrete(t))
		}
	}
	if len(r.Tool) == 0 {
		tools = []string{"Bash", "Write", "Read"}
	}
	role := ""
	for _, name := range r.Roles {
		if !strings.HasPrefix(name, "!") {
			role = name
			break
		}
	}
	args := map[string]any{}
	for k, v := range r.Args {
		if neg, ok := strings.CutPrefix(v, "!"); ok {
			// A value the glob does not match ("!*" matches nothing).
			for _, c := range []string{"probe.outside.invalid", "probe@outside.invalid", "", concrete(neg) + ".x"} {
				if !glob.Text(neg, c) {
					args[k] = c
					break
				}
			}
			if _, ok := args[k]; !ok {
				return nil
			}
			continue
		}
		args[k] = concrete(v)
	}
	var out []warden.ToolCall
	add := func(tool string, extra map[string]any) {
		a := map[string]any{}
		for k, v := range args {
			a[k] = v
		}
		for k, v := range extra {
			a[k] = v
		}
		out = append(out, warden.ToolCall{Tool: tool, Role: role, Args: a})
	}
	for _, tool := range tools {
		switch {
		case len(r.Command) > 0:
			for _, c := range r.Command {
				add(tool, map[string]any{"command": concrete(c)})
			}
		case len(r.Path) > 0:
			for _, s := range r.Path {
				if !strings.HasPrefix(s, "!") {
					add(tool, map[string]any{"file_path": concrete(s), "content": "x"})
				}
			}
		default:
			add(tool, nil)
		}
	}
	return out
}

// concrete turns a glob into one text it matches.
func concrete(g string) string {
	g = strings.ReplaceAll(g, "**", "x/y")
	g = strings.ReplaceAll(g, "*", "x")
	return strings.ReplaceAll(g, "?", "x")
}
