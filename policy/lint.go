package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host"
	"go.yaml.in/yaml/v3"
)

// The lint warnings of docs/policy.md ("Lint warnings"): tool-wide denies
// of delegation, broad asks, host-specific tool names and text that is not
// terminal-safe. All are warnings.

// spellings maps a folded tool name to the built-in names that fold to it,
// for names that hosts spell differently (bash and Bash).
// folded maps every folded built-in name (kinds aside) to its spellings.
var spellings, folded = func() (map[string][]string, map[string][]string) {
	all := map[string][]string{}
	for n := range BuiltinKinds {
		if IsKind(n) {
			continue
		}
		k := strings.ToLower(n)
		all[k] = append(all[k], n)
	}
	multi := map[string][]string{}
	for k, v := range all {
		sort.Strings(v)
		if len(v) > 1 {
			multi[k] = v
		}
	}
	return multi, all
}()

// hostOf names the host of a built-in name that another host spells
// differently.
var hostOf = map[string]string{
	"Bash": "Claude Code", "bash": "OpenCode",
	"Glob": "Claude Code", "glob": "OpenCode and Gemini CLI",
	"Grep": "Claude Code", "grep": "OpenCode",
	"WebFetch": "Claude Code", "webfetch": "OpenCode",
	"WebSearch": "Claude Code", "websearch": "OpenCode",
	"Task": "Claude Code", "task": "OpenCode",
	"TodoWrite": "Claude Code", "todowrite": "OpenCode",
	"MultiEdit": "Claude Code", "multiedit": "OpenCode",
}

func spelt(name string) string {
	if h := hostOf[name]; h != "" {
		return name + " (" + h + ")"
	}
	return name
}

// lintToolNames warns about tool names in a rule's tool or a role's tools
// that only one host uses while another spells the same tool differently:
// names are compared exactly, so `tool: bash` never meets Claude Code's
// Bash.
func (d *decoder) lintToolNames(p *Policy, n *yaml.Node, path string, tools []string) {
	for j, t := range tools {
		if _, own := p.Tools[t]; own {
			continue // the policy names its own tool
		}
		if _, builtin := BuiltinKinds[t]; !builtin && !IsKind(t) {
			if alts := folded[strings.ToLower(t)]; len(alts) > 0 {
				var names []string
				for _, a := range alts {
					names = append(names, spelt(a))
				}
				kind := BuiltinKinds[alts[0]]
				d.warn(itemNode(n, j), path, "tool %s is no host's spelling and matches no call of theirs (tool names are compared exactly): the hosts call it %s; use the kind %s to match the %s tool of every host", t, strings.Join(names, " or "), kind, kind)
			} else if near := nearTool(t); near != "" {
				d.warn(itemNode(n, j), path, "tool %s is no kind and no tool of any host, so it matches only a tool of exactly that name: did you mean %s? (a tool of your own agent goes in the policy's tools section, with its kind)", t, near)
			}
			continue
		}
		alts := spellings[strings.ToLower(t)]
		if len(alts) == 0 || !contains(alts, t) {
			continue
		}
		var others []string
		for _, a := range alts {
			if a != t {
				others = append(others, spelt(a))
			}
		}
		kind := BuiltinKinds[t]
		d.warn(itemNode(n, j), path, "tool %s matches only that spelling: tool names are compared exactly, so it does not match %s; use the kind %s to match the %s tool of every host", spelt(t), strings.Join(others, " or "), kind, kind)
	}
}

// lintRuleScope applies the warnings on deny and ask rules, and checks that the
// rule's text is terminal-safe.
func (d *decoder) lintRuleScope(p *Policy, r *Rule, n *yaml.Node, path string) {
	narrow := len(r.Command) > 0 || len(r.Path) > 0 || len(r.Args) > 0 || r.Intent != ""
	if r.Effect == "deny" && !narrow && len(r.Roles) == 0 {
		for _, t := range r.Tool {
			if t == "delegate" || !IsKind(t) && p.KindOf(t) == "delegate" {
				d.warnAt(r.FieldPos["tool"], path+".tool", "this deny blocks every delegation (%s) for every role, the coordinators included (too broad); deny specific subagents (args: {subagent_type: NAME}), or leave delegate out of the tools of the roles that must not delegate", t)
				break
			}
		}
	}
	if r.Effect == "ask" {
		var what string
		switch {
		case !narrow && len(r.Tool) == 0:
			what = "every call"
		case !narrow:
			// The everyday working kinds: asking about each of them
			// stops the agent at every step. An ask on a whole kind of
			// irreversible or outside action (delete, fetch, delegate)
			// is what asks are kept for.
			for _, t := range r.Tool {
				if t == "*" || everyday[t] {
					what = "every " + t + " call"
					break
				}
			}
		}
		for _, c := range r.Command {
			if strings.TrimSpace(c) == "*" {
				what = "every command"
			}
		}
		for _, s := range r.Path {
			if s == "*" || s == "**" {
				what = "every path"
			}
		}
		if what != "" {
			d.warn(n, path, "this ask matches %s: asks stop the agent until a human answers (ask only for actions that reach external systems or cannot be reverted); ask about specific commands, paths or tools, and leave the rest to default", what)
		}
	}
	for _, c := range r.Command {
		d.lintPattern(r, c, path)
		// After "--" a word that starts with "-" is an operand: the
		// pattern does not name the option it seems to.
		for _, stage := range strings.Split(c, "|") {
			f := strings.Fields(stage)
			for i, w := range f {
				if w != "--" {
					continue
				}
				for _, x := range f[i+1:] {
					if len(x) > 1 && x[0] == '-' {
						d.warnAt(r.FieldPos["command"], path+".command", "%q: %s comes after \"--\", so the pattern names an operand %s, not the option: commands are read as their programs read them; put options before \"--\"", c, x, x)
						break
					}
				}
				break
			}
		}
		for _, w := range strings.Fields(c) {
			if len(w) > 1 && w[0] == '-' && strings.ContainsAny(w, "*?[") {
				d.warnAt(r.FieldPos["command"], path+".command", "%q: the wildcard is glued to the flag %s; warden compares flags as sets of options, not as text, so it does not widen the flag and the pattern may meet no call (\"rm -rf*\" never meets \"rm -rf x\"); write the flags, then an open operand: %q", c, w, strings.TrimSpace(strings.TrimRight(c, "*?"))+" *")
				break
			}
		}
	}
	for _, k := range []string{"message", "suggestion"} {
		s := r.Message
		if k == "suggestion" {
			s = r.Suggestion
		}
		if c, bad := warden.UnsafeRune(s); bad {
			d.warnAt(r.FieldPos[k], path+"."+k, "%q (%U) is not terminal-safe: emoji, symbols and box drawing garble terminals and reach the model as noise; warden replaces them in the text hosts get, so write plain text", string(c), c)
		}
	}
}

// everyday are the kinds an agent uses at every step.
var everyday = map[string]bool{"shell": true, "read": true, "list": true, "write": true, "edit": true, "todo": true, "intent": true}

func (d *decoder) warnAt(p Pos, field, format string, args ...any) {
	d.findings = append(d.findings, Finding{Pos: p, Severity: SevWarning, Field: field, Message: fmt.Sprintf(format, args...)})
}

// knownHosts are the host names warden's adapters put in tool calls.
var knownHosts = host.Names()

// modelErrors decodes `model_errors`: a format, or {format, hosts}.
func (d *decoder) modelErrors(p *Policy, n *yaml.Node) {
	n = resolve(n)
	p.ModelErrors.Format = "text"
	format := func(v *yaml.Node, path string) {
		if s, ok := d.str(v, path); ok {
			if s != "text" && s != "json" {
				d.err(v, path, "%q is not one of text, json", s)
				return
			}
			p.ModelErrors.Format = s
		}
	}
	if n.Kind == yaml.ScalarNode {
		format(n, "model_errors")
		return
	}
	m := d.mapping(n, "model_errors", "format", "hosts", "layout")
	if f, ok := m["layout"]; ok {
		if s, ok := d.str(f.val, "model_errors.layout"); ok {
			if s != "plain" && s != "seed" {
				d.err(f.val, "model_errors.layout", "%q is not one of plain, seed", s)
			} else {
				p.ModelErrors.Layout = s
			}
		}
	}
	if f, ok := m["format"]; ok {
		format(f.val, "model_errors.format")
	}
	if f, ok := m["hosts"]; ok {
		p.ModelErrors.Hosts = d.strs(f.val, "model_errors.hosts")
		for j, h := range p.ModelErrors.Hosts {
			if !contains(knownHosts, h) {
				d.warn(itemNode(f.val, j), "model_errors.hosts", "%q is not a host warden knows (%s); no call will come from it", h, strings.Join(knownHosts, ", "))
			}
		}
	}
}

// nearTool returns the kind or host tool name that t is most likely a
// typing slip of (shel for shell, Wirte for Write), or "" when none is
// that close: at most one edit for a name of up to four letters, two for
// a longer one, compared without regard to case. A glob, an MCP tool
// (mcp__SERVER__TOOL) and a name with a server prefix are left alone.
func nearTool(t string) string {
	if strings.ContainsAny(t, "*?/[") || strings.HasPrefix(t, "mcp_") {
		return ""
	}
	limit := 2
	if len(t) <= 4 {
		limit = 1
	}
	best, bestD := "", limit+1
	try := func(name string, kind bool) {
		d := editDistance(strings.ToLower(t), strings.ToLower(name))
		// A kind wins a tie: it matches the tool of every host.
		if d < bestD || d == bestD && !kind && !IsKind(best) && name < best {
			best, bestD = name, d
		}
	}
	for _, k := range Kinds {
		try(k, true)
	}
	for name := range BuiltinKinds {
		if !strings.HasPrefix(name, "mcp_") && !strings.HasPrefix(name, "warden_") {
			try(name, false)
		}
	}
	if bestD > limit {
		return ""
	}
	return best
}

// editDistance is the number of single-letter insertions, deletions,
// substitutions and swaps of neighbours that turn a into b (the optimal
// string alignment distance, over bytes): bahs is one from bash.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
