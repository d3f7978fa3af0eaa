// Package importer is the policy `warden import` writes from the permission
// settings of an agent host. Each host package reads its own settings
// (kit.Importer: Claude Code's permissions.allow/ask/deny and subagent
// files in host/claude, OpenCode's permission object in host/opencode,
// Gemini CLI's policy TOML in host/gemini, Codex's prefix_rule files in
// host/codex) into a Policy; this package names, completes and renders
// its rules. Every rule carries a comment saying where it came from; what
// cannot be carried over becomes a warning (in the result and as a comment
// at the top of the policy), never a silent change.
//
// It imports nothing but the standard library, so that the host packages,
// which the warden-hook client links, stay light: the tool kinds and the
// YAML decoder come from the caller (YAML, Source).
//
// Stability: this package is internal to warden in spirit. Its API serves
// `warden import` and `warden init` and changes with them in any release.
package importer

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Policy is an imported policy.
type Policy struct {
	// Source names the host and the file it came from.
	Source string
	// Default is the decision for calls no rule covers: "safe" for reads
	// and "destructive" for everything else.
	Safe, Destructive string
	// Outside is the decision for paths outside the workspace ("" keeps
	// warden's default, deny).
	Outside string
	// Roles are the host's agents whose own permissions were carried
	// over; their rules name them in Roles.
	Roles    []*Role
	Rules    []*Rule
	Warnings []string

	ids map[string]int
}

// Rule is one imported rule.
type Rule struct {
	ID         string
	Effect     string // allow | ask | deny
	Tool       []string
	Command    []string
	Path       []string
	Args       map[string]string
	Roles      []string // only for these roles (a host's agents)
	Message    string
	Suggestion string
	// From says where the rule came from (file, field, original text).
	From string
}

// Role is a host agent carried over as a warden role.
type Role struct {
	Name        string
	Description string
	// Tools is the role's allow-list; nil means any tool.
	Tools []string
	From  string
}

// Source is a host's settings file to import.
type Source struct {
	File string
	Data []byte
	// YAML decodes YAML (yaml.Unmarshal), for settings with YAML in them
	// (Claude Code's subagent front matter): passed in, so that the host
	// packages do not link a YAML library.
	YAML func(data []byte, v any) error
}

// Role returns the role named name, adding it if it is new.
func (p *Policy) Role(name, from string) *Role {
	for _, r := range p.Roles {
		if r.Name == name {
			return r
		}
	}
	r := &Role{Name: name, From: from}
	p.Roles = append(p.Roles, r)
	return r
}

// New returns an empty policy imported from source ("HOST FILE"), with
// warden's defaults: reads allowed, everything else asked.
func New(source string) *Policy {
	return &Policy{Source: source, Safe: "allow", Destructive: "ask", ids: map[string]int{}}
}

// Warnf adds a warning: something not carried over, or carried over
// differently.
func (p *Policy) Warnf(format string, args ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, args...))
}

// slugRE is compiled on first use: the warden-hook client links this
// package (through the host packages) and never imports anything.
var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// Add appends a rule, naming it from its effect and original text and
// filling in the message and suggestion that deny and ask rules need.
func (p *Policy) Add(r *Rule, name string) {
	base := r.Effect + "-" + strings.Trim(slugRE().ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(base) > 48 {
		base = strings.TrimRight(base[:48], "-")
	}
	p.ids[base]++
	r.ID = base
	if n := p.ids[base]; n > 1 {
		r.ID = fmt.Sprintf("%s-%d", base, n)
	}
	switch r.Effect {
	case "deny":
		if r.Message == "" {
			r.Message = "Blocked by an imported " + p.hostName() + " rule (" + name + ")."
		}
		if r.Suggestion == "" {
			r.Suggestion = "Do something else, or ask the user to do it."
		}
	case "ask":
		if r.Message == "" {
			r.Message = "Needs the user's approval (imported " + p.hostName() + " rule " + name + ")."
		}
		if r.Suggestion == "" {
			r.Suggestion = "Wait for the user's answer."
		}
	}
	p.Rules = append(p.Rules, r)
}

// writeOut writes out a tool-wide allow of a shell or file tool (warden
// refuses an allow that names such a tool and nothing else: it is what a
// policy cut short after its tool line looks like). kinds maps tool names
// to tool kinds (policy.BuiltinKinds).
func writeOut(r *Rule, kinds map[string]string) {
	if r.Effect != "allow" || len(r.Command) != 0 || len(r.Path) != 0 || r.Args != nil {
		return
	}
	for _, t := range r.Tool {
		k := t
		if bk, ok := kinds[t]; ok {
			k = bk
		}
		switch {
		case k == "shell" && len(r.Command) == 0:
			r.Command = []string{"*"}
		case k == "read" || k == "write" || k == "edit" || k == "delete" || k == "list":
			// Not path: "**", which a call without a path
			// (Glob with a pattern alone) does not meet.
			r.Args = map[string]string{}
		}
	}
}

func (p *Policy) hostName() string {
	if i := strings.IndexByte(p.Source, ' '); i > 0 {
		return p.Source[:i]
	}
	return p.Source
}

// YAML renders the policy; kinds maps tool names to tool kinds
// (policy.BuiltinKinds), for the allows it must write out. The output
// loads with policy.Load.
func (p *Policy) YAML(kinds map[string]string) []byte {
	for _, r := range p.Rules {
		writeOut(r, kinds)
	}
	var b strings.Builder
	b.WriteString("# warden policy imported from " + p.Source + " by `warden import`.\n")
	b.WriteString("# Review it, then check it with `warden lint` and `warden test`.\n")
	b.WriteString("# warden decides by severity (deny > ask > allow) over every part of a call; rule order\n")
	b.WriteString("# and priorities do not matter.\n")
	if len(p.Warnings) > 0 {
		b.WriteString("#\n# REVIEW THESE (not carried over, or carried over differently):\n")
		for _, w := range p.Warnings {
			b.WriteString("#   - " + strings.ReplaceAll(w, "\n", " ") + "\n")
		}
	}
	b.WriteString("version: 1\nmode: enforce\n")
	b.WriteString("default:\n  safe: " + p.Safe + "\n  destructive: " + p.Destructive + "\n")
	if p.Outside != "" {
		b.WriteString("workspace:\n  root: .\n  outside: " + p.Outside + "\n")
	}
	if len(p.Roles) > 0 {
		b.WriteString("roles:\n")
		for _, r := range p.Roles {
			b.WriteString("  # from " + strings.ReplaceAll(r.From, "\n", " ") + "\n")
			if r.Description == "" && r.Tools == nil {
				b.WriteString("  " + q(r.Name) + ": {}\n")
				continue
			}
			b.WriteString("  " + q(r.Name) + ":\n")
			if r.Description != "" {
				b.WriteString("    description: " + q(r.Description) + "\n")
			}
			if r.Tools != nil {
				b.WriteString("    tools: [")
				for i, t := range r.Tools {
					if i > 0 {
						b.WriteString(", ")
					}
					b.WriteString(q(t))
				}
				b.WriteString("]\n")
			}
		}
	}
	if len(p.Rules) == 0 {
		b.WriteString("rules: []\n")
		return []byte(b.String())
	}
	b.WriteString("rules:\n")
	for _, r := range p.Rules {
		b.WriteString("  # from " + strings.ReplaceAll(r.From, "\n", " ") + "\n")
		b.WriteString("  - id: " + r.ID + "\n")
		b.WriteString("    effect: " + r.Effect + "\n")
		writeList(&b, "tool", r.Tool)
		writeList(&b, "command", r.Command)
		writeList(&b, "path", r.Path)
		writeList(&b, "roles", r.Roles)
		if r.Args != nil && len(r.Args) == 0 {
			b.WriteString("    args: {}\n")
		}
		if len(r.Args) > 0 {
			keys := make([]string, 0, len(r.Args))
			for k := range r.Args {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString("    args:\n")
			for _, k := range keys {
				b.WriteString("      " + q(k) + ": " + q(r.Args[k]) + "\n")
			}
		}
		if r.Message != "" {
			b.WriteString("    message: " + q(r.Message) + "\n")
		}
		if r.Suggestion != "" {
			b.WriteString("    suggestion: " + q(r.Suggestion) + "\n")
		}
	}
	return []byte(b.String())
}

func writeList(b *strings.Builder, key string, vals []string) {
	if len(vals) == 0 {
		return
	}
	qs := make([]string, len(vals))
	for i, v := range vals {
		qs[i] = q(v)
	}
	b.WriteString("    " + key + ": [" + strings.Join(qs, ", ") + "]\n")
}

// q quotes a string for YAML (a JSON string is a YAML double-quoted scalar).
func q(s string) string { return strconv.Quote(s) }

// GlobCommand converts a host's command wildcard to a warden command
// pattern. A "*" glued to the last word ("rm -rf*", "git diff*") means
// "followed by anything" to the host, which compares text; warden compares
// words, so it becomes an open pattern ("rm -rf *"): for a deny that also
// meets the other spellings of the same flags, for an allow it no longer
// allows "git diffx".
func GlobCommand(pat string) string {
	pat = strings.TrimSpace(pat)
	if strings.HasSuffix(pat, "*") && !strings.HasSuffix(pat, " *") && len(pat) > 1 {
		return strings.TrimSpace(strings.TrimSuffix(pat, "*")) + " *"
	}
	return pat
}

// Without returns list without the strings of drop, never nil (a role's
// nil tool list means every tool).
func Without(list, drop []string) []string {
	out := []string{}
	for _, s := range list {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}
