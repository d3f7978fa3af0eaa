package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// Options tune a replay.
type Options struct {
	// Policy is the policy file the calls are decided against.
	Policy string
	// Against, when set, is a second policy file (the one in use, say):
	// the report lists the calls whose outcome differs.
	Against string
	// Role is the role of calls whose session recorded none.
	Role string
	// Top is how many ask groups the report suggests rules for (default
	// 10).
	Top int
}

// Report is what a replay found.
type Report struct {
	Policy  string `json:"policy"`
	Against string `json:"against,omitempty"`
	Calls   int    `json:"calls"`
	// Hosts counts the calls read per host.
	Hosts map[string]int `json:"hosts"`
	// Skipped counts the lines that could not be read; SkippedLines names
	// the first of them.
	Skipped      int    `json:"skipped"`
	SkippedLines []Skip `json:"skipped_lines,omitempty"`
	// Outcomes counts the decisions under Policy (and AgainstOutcomes
	// under Against) by effect: allow, ask, deny.
	Outcomes        map[warden.Effect]int `json:"outcomes"`
	AgainstOutcomes map[warden.Effect]int `json:"against_outcomes,omitempty"`
	// Rules counts the decisions by the rule (or check) that made them.
	Rules []RuleCount `json:"rules"`
	// Changed lists the calls decided otherwise under Against.
	Changed []Change `json:"changed,omitempty"`
	// Asks groups the asks by what they ask about, most frequent first,
	// each with the narrowest allow rule that would stop it.
	Asks []AskGroup `json:"asks"`
}

// RuleCount is how many calls one rule decided, one way.
type RuleCount struct {
	Rule     string        `json:"rule"`
	Decision warden.Effect `json:"decision"`
	Count    int           `json:"count"`
}

// Change is a call two policies decide differently.
type Change struct {
	Source string        `json:"source"`
	Host   string        `json:"host"`
	Call   string        `json:"call"`
	Before warden.Effect `json:"before"`
	After  warden.Effect `json:"after"`
	// BeforeRule and AfterRule are the rules (or checks) that decided.
	BeforeRule string `json:"before_rule"`
	AfterRule  string `json:"after_rule"`
}

// AskGroup is the asks about one thing (a command pattern, a folder, a
// tool).
type AskGroup struct {
	Pattern  string   `json:"pattern"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
	// Rule is the narrowest allow rule (YAML, for the policy's rules:)
	// that lets these calls through; empty when none can, and Why says
	// why.
	Rule string `json:"rule,omitempty"`
	Why  string `json:"why,omitempty"`
	// Covers is how many of the group's calls the rule allows (decided
	// without session history: a sequence rule may still ask).
	Covers int `json:"covers"`
	// AlsoAllows lists other recorded calls, not allowed today, that the
	// rule would allow too.
	AlsoAllows []string `json:"also_allows,omitempty"`
}

// Run decides the calls (in the order they were made) against
// opt.Policy, and against opt.Against when set, and reports.
func Run(ctx context.Context, calls []Call, skipped []Skip, opt Options) (*Report, error) {
	j, err := NewJudge(ctx, opt.Policy)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	var old *Judge
	if opt.Against != "" {
		if old, err = NewJudge(ctx, opt.Against); err != nil {
			return nil, err
		}
		defer old.Close()
	}
	return RunJudges(ctx, calls, skipped, j, old, opt)
}

// RunJudges is Run with the policies compiled: j decides, old (nil for
// none) is the policy compared against. opt.Policy and opt.Against label
// them in the report.
func RunJudges(ctx context.Context, calls []Call, skipped []Skip, j, old *Judge, opt Options) (*Report, error) {
	if opt.Top <= 0 {
		opt.Top = 10
	}
	Order(calls)
	r := &Report{Policy: opt.Policy, Calls: len(calls), Hosts: map[string]int{}, Skipped: len(skipped),
		Outcomes: map[warden.Effect]int{}}
	if len(skipped) > 20 {
		r.SkippedLines = skipped[:20]
	} else {
		r.SkippedLines = skipped
	}
	decided, err := j.DecideAll(ctx, calls, opt.Role)
	if err != nil {
		return nil, err
	}
	rules := map[RuleCount]int{}
	for i, c := range calls {
		d := decided[i]
		r.Hosts[c.Host]++
		r.Outcomes[d.Decision]++
		rules[RuleCount{Rule: ruleName(d), Decision: d.Decision}]++
	}
	for k, n := range rules {
		k.Count = n
		r.Rules = append(r.Rules, k)
	}
	sort.Slice(r.Rules, func(a, b int) bool {
		if r.Rules[a].Count != r.Rules[b].Count {
			return r.Rules[a].Count > r.Rules[b].Count
		}
		return r.Rules[a].Rule+string(r.Rules[a].Decision) < r.Rules[b].Rule+string(r.Rules[b].Decision)
	})
	if old != nil {
		r.Against = opt.Against
		r.AgainstOutcomes = map[warden.Effect]int{}
		before, err := old.DecideAll(ctx, calls, opt.Role)
		if err != nil {
			return nil, err
		}
		for i, c := range calls {
			d := before[i]
			r.AgainstOutcomes[d.Decision]++
			if d.Decision != decided[i].Decision {
				r.Changed = append(r.Changed, Change{Source: c.Source, Host: c.Host, Call: Display(c), Before: d.Decision,
					After: decided[i].Decision, BeforeRule: ruleName(d), AfterRule: ruleName(decided[i])})
			}
		}
	}
	r.Asks = suggest(j, calls, decided, opt.Top)
	return r, nil
}

// ruleName is the rule that decided, or the check (its code) when no rule
// did.
func ruleName(d warden.Decision) string {
	if d.Rule != "" {
		return d.Rule
	}
	if d.Code != "" {
		return "(" + strings.ToLower(string(d.Code)) + ")"
	}
	return "(default)"
}

// Display is a call in one line for a report: a shell tool's command, a
// file tool's path, else the tool and its arguments; secrets redacted,
// long text cut.
func Display(c Call) string {
	args := warden.RedactArgs(c.Args)
	for _, k := range []string{"command", "cmd"} {
		if s, ok := args[k].(string); ok {
			return cut(c.Tool+": "+s, 160)
		}
	}
	for _, k := range []string{"file_path", "path", "filePath", "absolute_path", "dir_path"} {
		if s, ok := args[k].(string); ok {
			return cut(c.Tool+" "+s, 160)
		}
	}
	b, _ := json.Marshal(args)
	return cut(c.Tool+" "+string(b), 160)
}

func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

// subcommanded are programs whose first word after the name is a
// subcommand: a rule for them names it (git push *, not git *).
var subcommanded = map[string]bool{"git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "go": true,
	"cargo": true, "docker": true, "podman": true, "kubectl": true, "helm": true, "gh": true, "terraform": true,
	"pip": true, "pip3": true, "uv": true, "poetry": true, "apt": true, "apt-get": true, "brew": true, "systemctl": true,
	"make": true, "just": true, "dotnet": true, "mvn": true, "gradle": true, "rustup": true, "deno": true, "npx": true}

// group is the asks about one pattern.
type group struct {
	key      string
	commands []string // command patterns that asked
	pathKind string   // the call's kind, for the path rule
	paths    []string // path patterns that asked
	tool     string   // a call asked as a whole: its tool
	calls    []int
	askRule  string // the ask rule that decided, if one did
}

// suggest groups the asks and proposes for each of the top groups the
// narrowest allow rule, checked against every recorded call.
func suggest(j *Judge, calls []Call, decided []warden.Decision, top int) []AskGroup {
	groups := map[string]*group{}
	for i, d := range decided {
		if d.Decision != warden.Ask {
			continue
		}
		tr := j.Engine.Explain(calls[i].ToolCall(), nil)
		g := groupOf(tr, calls[i])
		if d.Rule != "" {
			// An ask rule decided: no allow rule outranks it.
			g.key += " (rule " + d.Rule + ")"
			g.askRule = d.Rule
		}
		if old := groups[g.key]; old != nil {
			old.calls = append(old.calls, i)
			for _, p := range g.paths {
				old.paths = appendNew(old.paths, p)
			}
			continue
		}
		g.calls = []int{i}
		groups[g.key] = g
	}
	list := make([]*group, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	sort.Slice(list, func(a, b int) bool {
		if len(list[a].calls) != len(list[b].calls) {
			return len(list[a].calls) > len(list[b].calls)
		}
		return list[a].key < list[b].key
	})
	var out []AskGroup
	for n, g := range list {
		ag := AskGroup{Pattern: g.key, Count: len(g.calls)}
		seen := map[string]bool{}
		for _, i := range g.calls {
			if s := Display(calls[i]); !seen[s] && len(ag.Examples) < 3 {
				seen[s] = true
				ag.Examples = append(ag.Examples, s)
			}
		}
		if n < top {
			check(j, g, &ag, calls, decided)
		}
		out = append(out, ag)
	}
	return out
}

// groupOf is the group of an ask: the command patterns of the commands
// that asked (the paths a command writes join its group), else the folder
// patterns of the paths that asked, else the tool.
func groupOf(tr *engine.Trace, c Call) *group {
	g := &group{}
	for _, p := range tr.Parts {
		if p.Effect != warden.Ask {
			continue
		}
		switch p.Subject {
		case "command":
			g.commands = appendNew(g.commands, commandPattern(p.Value))
		case "path":
			g.pathKind = tr.Kind
			g.paths = appendNew(g.paths, pathPattern(p.Value))
		}
	}
	switch {
	case len(g.commands) > 0:
		keys := append([]string(nil), g.commands...)
		sort.Strings(keys)
		g.key = strings.Join(keys, " + ")
	case len(g.paths) > 0:
		keys := append([]string(nil), g.paths...)
		sort.Strings(keys)
		g.key = tr.Kind + " " + strings.Join(keys, " + ")
	default:
		g.tool = c.Tool
		g.key = "tool " + c.Tool
	}
	return g
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// commandPattern is the narrowest pattern of a simple command's group: its
// program and, for a program with subcommands, the subcommand, then any
// arguments; a program named by a path stays exact.
func commandPattern(cmd string) string {
	w := strings.Fields(cmd)
	if len(w) == 0 {
		return cmd
	}
	if strings.Contains(w[0], "/") {
		return cmd
	}
	if subcommanded[w[0]] && len(w) > 1 && !strings.HasPrefix(w[1], "-") {
		return w[0] + " " + w[1] + " *"
	}
	return w[0] + " *"
}

// pathPattern is the folder of a path, with everything in it (a file at
// the workspace root stays itself).
func pathPattern(p string) string {
	d := filepath.ToSlash(filepath.Dir(p))
	if d == "." || d == "/" {
		return p
	}
	return d + "/**"
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// check writes the group's rule and tries it: a copy of the policy with
// the rule appended decides every recorded call (without session state).
func check(j *Judge, g *group, ag *AskGroup, calls []Call, decided []warden.Decision) {
	if g.askRule != "" {
		ag.Why = "asked by the rule " + g.askRule + ": an ask rule outranks every allow rule, so change that rule (its command or path, or its effect) to stop these asks"
		return
	}
	id := "allow-" + strings.Trim(nonWord.ReplaceAllString(strings.ToLower(g.key), "-"), "-")
	if len(id) > 48 {
		id = strings.TrimRight(id[:48], "-")
	}
	var yaml strings.Builder
	var add []*policy.Rule
	rule := func(id string, fill func(r *policy.Rule) string) {
		r := newRule(id)
		fmt.Fprintf(&yaml, "- id: %s\n  effect: allow\n%s", id, fill(r))
		add = append(add, r)
	}
	switch {
	case len(g.commands) > 0:
		rule(id, func(r *policy.Rule) string {
			r.Tool, r.Command = []string{"shell"}, g.commands
			return fmt.Sprintf("  tool: shell\n  command: [%s]\n", quoteList(g.commands))
		})
		if len(g.paths) > 0 {
			// The files those commands write.
			rule(id+"-files", func(r *policy.Rule) string {
				r.Tool, r.Path = []string{"shell"}, g.paths
				return fmt.Sprintf("  tool: shell\n  path: [%s]\n", quoteList(g.paths))
			})
		}
	case len(g.paths) > 0:
		rule(id, func(r *policy.Rule) string {
			r.Tool, r.Path = []string{g.pathKind}, g.paths
			return fmt.Sprintf("  tool: %s\n  path: [%s]\n", g.pathKind, quoteList(g.paths))
		})
	default:
		rule(id, func(r *policy.Rule) string {
			r.Tool = []string{g.tool}
			return fmt.Sprintf("  tool: %q\n", g.tool)
		})
	}
	p2 := *j.Policy
	p2.Rules = append(append(j.Policy.Rules[:0:0], j.Policy.Rules...), add...)
	eng, err := engine.Compile(&p2, workspace.Live())
	if err != nil {
		ag.Why = "no rule: " + err.Error()
		return
	}
	in := map[int]bool{}
	for _, i := range g.calls {
		in[i] = true
		if eng.Explain(calls[i].ToolCall(), nil).Decision.Decision == warden.Allow {
			ag.Covers++
		}
	}
	if ag.Covers == 0 {
		ag.Why = "an allow rule does not stop these asks: a check above the rules asks (a computed command, a path it cannot resolve, an intent it needs)"
		return
	}
	ag.Rule = yaml.String()
	seen := map[string]bool{}
	for i, c := range calls {
		if in[i] || decided[i].Decision == warden.Allow {
			continue
		}
		s := Display(c)
		if seen[s] {
			continue
		}
		seen[s] = true
		if eng.Explain(c.ToolCall(), nil).Decision.Decision == warden.Allow {
			ag.AlsoAllows = append(ag.AlsoAllows, s)
		}
	}
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// newRule is an allow rule with no matcher yet.
func newRule(id string) *policy.Rule {
	return &policy.Rule{ID: id, Effect: "allow", FieldPos: map[string]policy.Pos{}}
}
