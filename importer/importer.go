// Package importer turns the permission settings of an agent host into a
// warden policy: Claude Code's permissions.allow/ask/deny, OpenCode's
// permission object, Gemini CLI's policy TOML ([[rule]]) and Codex's
// prefix_rule files. Every rule carries a comment saying where it came
// from; what cannot be carried over becomes a warning (in the result and as
// a comment at the top of the policy), never a silent change.
//
// Stability: this package is internal to warden in spirit. Its API serves
// `warden import` and `warden init` and changes with them in any release.
package importer

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/warden-run/warden/policy"
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

// role returns the role named name, adding it if it is new.
func (p *Policy) role(name, from string) *Role {
	for _, r := range p.Roles {
		if r.Name == name {
			return r
		}
	}
	r := &Role{Name: name, From: from}
	p.Roles = append(p.Roles, r)
	return r
}

func newPolicy(source string) *Policy {
	return &Policy{Source: source, Safe: "allow", Destructive: "ask", ids: map[string]int{}}
}

func (p *Policy) warnf(format string, args ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, args...))
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// add appends a rule, naming it from its effect and original text and
// filling in the message and suggestion that deny and ask rules need.
func (p *Policy) add(r *Rule, name string) {
	base := r.Effect + "-" + strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
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
	case "allow":
		// A tool-wide allow of a shell or file tool is written out (warden
		// refuses an allow that names such a tool and nothing else: it is
		// what a policy cut short after its tool line looks like).
		if len(r.Command) == 0 && len(r.Path) == 0 && r.Args == nil {
			for _, t := range r.Tool {
				k := t
				if bk, ok := policy.BuiltinKinds[t]; ok {
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
	}
	p.Rules = append(p.Rules, r)
}

func (p *Policy) hostName() string {
	if i := strings.IndexByte(p.Source, ' '); i > 0 {
		return p.Source[:i]
	}
	return p.Source
}

// YAML renders the policy. The output loads with policy.Load.
func (p *Policy) YAML() []byte {
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
