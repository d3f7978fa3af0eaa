package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/warden-run/warden/policy"
	"go.yaml.in/yaml/v3"
)

// yamlRule is a compiled rule as written into the policy file.
type yamlRule struct {
	ID         string            `yaml:"id"`
	Effect     string            `yaml:"effect"`
	Tool       []string          `yaml:"tool,omitempty,flow"`
	Command    []string          `yaml:"command,omitempty,flow"`
	Path       []string          `yaml:"path,omitempty,flow"`
	Args       map[string]string `yaml:"args,omitempty,flow"`
	Intent     string            `yaml:"intent,omitempty"`
	Roles      []string          `yaml:"roles,omitempty,flow"`
	Message    string            `yaml:"message,omitempty"`
	Suggestion string            `yaml:"suggestion,omitempty"`
	Source     string            `yaml:"source"`
}

// yamlCase is a compiled test case as written into the policy file.
type yamlCase struct {
	Name   string   `yaml:"name"`
	Call   yamlCall `yaml:"call,flow"`
	Expect string   `yaml:"expect"`
	Rule   string   `yaml:"rule,omitempty"`
	Source string   `yaml:"source"`
}

type yamlCall struct {
	Tool   string         `yaml:"tool"`
	Role   string         `yaml:"role,omitempty"`
	Intent string         `yaml:"intent,omitempty"`
	Args   map[string]any `yaml:"args"`
}

// yamlCompiled is the compiled: section.
type yamlCompiled struct {
	From    string `yaml:"from"`
	Model   string `yaml:"model,omitempty"`
	Sources string `yaml:"sources"`
	Rules   string `yaml:"rules"`
}

// RulesHash is the hash the compiled: section records for the compiled
// rules (those with a source) and their test cases, over their decoded
// values, so that layout and comments do not count but any change to what
// a compiled rule or case says does.
func RulesHash(p *policy.Policy) string {
	type rule struct {
		ID, Effect                  string
		Tool, Command, Path, Roles  []string
		Args                        map[string]string
		Intent, Message, Suggestion string
		Source                      string
	}
	type tcase struct {
		Name                       string
		Call                       any
		Expect, Code, Rule, Source string
	}
	var rs []rule
	for _, r := range p.Rules {
		if r.Source != "" {
			rs = append(rs, rule{r.ID, r.Effect, r.Tool, r.Command, r.Path, r.Roles, r.Args, r.Intent, r.Message, r.Suggestion, r.Source})
		}
	}
	var cs []tcase
	for _, c := range p.Tests {
		if c.Source != "" {
			cs = append(cs, tcase{c.Name, c.Call, string(c.Expect), string(c.Code), c.Rule, c.Source})
		}
	}
	data, _ := json.Marshal(struct {
		Rules []rule
		Tests []tcase
	}{rs, cs})
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// marshalList renders a YAML block list with two-space indentation.
func marshalList(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	enc.Close()
	return b.Bytes(), nil
}

// splice returns the policy text old with its compiled rules, compiled
// test cases and compiled: section replaced by rules, cases and comp (nil:
// none). Everything else, comments and layout included, stays as it was.
func splice(old []byte, rules []yamlRule, cases []yamlCase, comp *yamlCompiled) ([]byte, error) {
	// YAML ends a line at a carriage return alone too; the edit below
	// counts lines by "\n". A policy with such a line end would be edited
	// at the wrong lines: refuse it, naming the line.
	for i := 0; i < len(old); i++ {
		if old[i] == '\r' && (i+1 == len(old) || old[i+1] != '\n') {
			return nil, fmt.Errorf("line %d: a carriage return ends a line without a newline; warden compile edits a policy whose lines end in \\n or \\r\\n", bytes.Count(old[:i], []byte("\n"))+1)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(old, &doc); err != nil {
		return nil, fmt.Errorf("the policy is not valid YAML: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the policy is not a YAML mapping")
	}
	root := doc.Content[0]
	if root.Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("the policy is written in flow style ({...}); warden compile edits block-style YAML only")
	}
	if root.Column != 1 {
		return nil, fmt.Errorf("line %d: the policy's top-level keys must start in the first column", root.Line)
	}
	for i, l := range strings.Split(string(old), "\n") {
		if t := strings.TrimRight(l, " \t\r"); (t == "---" || t == "...") && i+1 > root.Line {
			return nil, fmt.Errorf("line %d: the policy holds more than one YAML document; warden compile edits a single one", i+1)
		}
	}
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	// Top-level keys and the lines each one spans.
	type top struct {
		key, val   *yaml.Node
		start, end int // 1-based, inclusive
	}
	var tops []top
	for i := 0; i+1 < len(root.Content); i += 2 {
		tops = append(tops, top{key: root.Content[i], val: root.Content[i+1], start: root.Content[i].Line})
	}
	seen := map[string]int{}
	for _, t := range tops {
		if first, ok := seen[t.key.Value]; ok {
			return nil, fmt.Errorf("line %d: the top-level key %q appears again (first on line %d); a policy holds each key once", t.start, t.key.Value, first)
		}
		seen[t.key.Value] = t.start
	}
	for i := range tops {
		if i+1 < len(tops) {
			tops[i].end = tops[i+1].start - 1
		} else {
			tops[i].end = n
		}
	}
	// New top-level keys go at the end, or before end: true, which ends a
	// sealed policy and must stay its last key.
	tail := n
	if len(tops) > 0 && tops[len(tops)-1].key.Value == "end" {
		tail = tops[len(tops)-1].start - 1
	}
	find := func(name string) *top {
		for i := range tops {
			if tops[i].key.Value == name {
				return &tops[i]
			}
		}
		return nil
	}
	trim := func(start, end int) int {
		for end > start {
			t := strings.TrimSpace(lines[end-1])
			if t != "" && !strings.HasPrefix(t, "#") {
				break
			}
			end--
		}
		return end
	}
	type edit struct {
		start, end int // lines to remove (end < start: none), 1-based
		after      int // insert after this line (0: at the top)
		text       string
	}
	var edits []edit
	// list replaces the compiled items of a top-level block list and adds
	// the new ones after its last item.
	list := func(name string, items any, count int) error {
		var body []byte
		if count > 0 {
			var err error
			if body, err = marshalList(items); err != nil {
				return err
			}
		}
		t := find(name)
		if t == nil {
			if count > 0 {
				edits = append(edits, edit{start: 1, end: 0, after: tail, text: name + ":\n" + indent(string(body), 2)})
			}
			return nil
		}
		v := t.val
		switch {
		case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0:
			ind := v.Column - 1
			last := t.start
			for i, it := range v.Content {
				end := t.end
				if i+1 < len(v.Content) {
					end = v.Content[i+1].Line - 1
				}
				end = trim(it.Line, end)
				if hasKey(it, "source") {
					edits = append(edits, edit{start: it.Line, end: end, after: -1})
				} else {
					last = end
				}
			}
			if count > 0 {
				edits = append(edits, edit{start: 1, end: 0, after: last, text: indent(string(body), ind)})
			}
		case v.Kind == yaml.ScalarNode && v.Tag == "!!null", v.Kind == yaml.SequenceNode && len(v.Content) == 0:
			if v.Line != t.key.Line && v.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: is written in a form warden compile cannot edit; write it as a block list", name)
			}
			repl := name + ":\n"
			if count > 0 {
				repl += indent(string(body), 2)
			}
			edits = append(edits, edit{start: t.key.Line, end: t.key.Line, after: t.key.Line, text: repl})
		default:
			return fmt.Errorf("line %d: %s: is not a block list (- item per line); write it as one so warden compile can add to it", t.key.Line, name)
		}
		return nil
	}
	if err := list("rules", rules, len(rules)); err != nil {
		return nil, err
	}
	if err := list("tests", cases, len(cases)); err != nil {
		return nil, err
	}
	if t := find("compiled"); t != nil {
		edits = append(edits, edit{start: t.start, end: trim(t.start, t.end), after: -1})
	}
	if comp != nil {
		body, err := marshalList(map[string]*yamlCompiled{"compiled": comp})
		if err != nil {
			return nil, err
		}
		edits = append(edits, edit{start: 1, end: 0, after: tail, text: string(body)})
	}
	// Apply: drop removed lines, then insert texts after their lines.
	removed := make([]bool, n+1)
	inserts := map[int][]string{}
	for _, e := range edits {
		for l := e.start; l <= e.end; l++ {
			removed[l] = true
		}
		if e.after >= 0 && e.text != "" {
			inserts[e.after] = append(inserts[e.after], e.text)
		}
	}
	var b strings.Builder
	for _, s := range inserts[0] {
		b.WriteString(s)
	}
	for l := 1; l <= n; l++ {
		if !removed[l] {
			b.WriteString(lines[l-1])
		}
		for _, s := range inserts[l] {
			b.WriteString(s)
		}
	}
	out := []byte(b.String())
	// The edit must leave one valid mapping; anything else is a bug here,
	// and no policy is written from it.
	var check yaml.Node
	if err := yaml.Unmarshal(out, &check); err != nil || len(check.Content) == 0 || check.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("warden compile could not edit this policy's layout (%v); please report it", err)
	}
	return out, nil
}

func hasKey(n *yaml.Node, key string) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func indent(s string, n int) string {
	if n == 0 {
		return s
	}
	pad := strings.Repeat(" ", n)
	ls := strings.SplitAfter(s, "\n")
	for i, l := range ls {
		if l != "" && l != "\n" {
			ls[i] = pad + l
		}
	}
	return strings.Join(ls, "")
}

// fromPolicy turns the compiled rules and cases of a loaded policy back
// into what splice writes, grouped by source, for sources compiled before.
func fromPolicy(p *policy.Policy) (map[string][]yamlRule, map[string][]yamlCase) {
	rules := map[string][]yamlRule{}
	for _, r := range p.Rules {
		if r.Source == "" {
			continue
		}
		rules[r.Source] = append(rules[r.Source], yamlRule{ID: r.ID, Effect: r.Effect, Tool: r.Tool, Command: r.Command,
			Path: r.Path, Args: r.Args, Intent: r.Intent, Roles: r.Roles, Message: r.Message, Suggestion: r.Suggestion, Source: r.Source})
	}
	cases := map[string][]yamlCase{}
	for _, c := range p.Tests {
		if c.Source == "" {
			continue
		}
		cases[c.Source] = append(cases[c.Source], yamlCase{Name: c.Name, Expect: string(c.Expect), Rule: c.Rule, Source: c.Source,
			Call: yamlCall{Tool: c.Call.Tool, Role: c.Call.Role, Intent: c.Call.Intent, Args: c.Call.Args}})
	}
	return rules, cases
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
