package policy

import (
	"sort"
	"strings"
)

// RolesMatch reports whether a rule whose roles are roles applies to a call
// of role (see docs/policy.md, "Rules"): no roles means every call; a name
// means calls of that role; "!NAME" excludes that role. A list of only
// exclusions means every call but theirs, calls without a role included;
// exclusions win over names.
func RolesMatch(roles []string, role string) bool {
	if len(roles) == 0 {
		return true
	}
	named, in := false, false
	for _, r := range roles {
		if ex, ok := strings.CutPrefix(r, "!"); ok {
			if ex == role {
				return false
			}
			continue
		}
		named = true
		if r == role {
			in = true
		}
	}
	return in || !named
}

// AppliesTo reports whether the rule's roles take in a call of role.
func (r *Rule) AppliesTo(role string) bool { return RolesMatch(r.Roles, role) }

// MayDelegate reports whether role name may use a delegate tool: its
// tools are unrestricted, or name the delegate kind or a tool of that kind,
// and no deny rule takes every delegation from it.
func (p *Policy) MayDelegate(name string) bool {
	r := p.Roles[name]
	if r == nil {
		return false
	}
	for _, rule := range p.Rules {
		if rule.Effect != "deny" || len(rule.Command) > 0 || len(rule.Path) > 0 || len(rule.Args) > 0 || rule.Intent != "" {
			continue
		}
		if !rule.AppliesTo(name) {
			continue
		}
		if len(rule.Tool) == 0 {
			return false
		}
		for _, t := range rule.Tool {
			if t == "delegate" || !IsKind(t) && p.KindOf(t) == "delegate" {
				return false
			}
		}
	}
	if r.Tools == nil {
		return true
	}
	for _, t := range r.Tools {
		if t == "delegate" || p.KindOf(t) == "delegate" {
			return true
		}
	}
	return false
}

// DelegatesOf returns the roles role name hands work to, sorted: its
// `delegates`; or, in a policy where no role has `delegates`, every role
// that may not delegate (the workers), when name may delegate.
func (p *Policy) DelegatesOf(name string) []string {
	r := p.Roles[name]
	if r == nil {
		return nil
	}
	if p.explicitDelegates() {
		out := []string{}
		for _, to := range r.Delegates {
			if p.Roles[to] != nil && to != name {
				out = append(out, to)
			}
		}
		sort.Strings(out)
		return out
	}
	if !p.MayDelegate(name) {
		return nil
	}
	var out []string
	for _, n := range p.roleNames() {
		if n != name && !p.MayDelegate(n) {
			out = append(out, n)
		}
	}
	return out
}

func (p *Policy) explicitDelegates() bool {
	for _, r := range p.Roles {
		if len(r.Delegates) > 0 {
			return true
		}
	}
	return false
}

func (p *Policy) roleNames() []string {
	names := make([]string, 0, len(p.Roles))
	for n := range p.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Chain returns the roles as the chain of delegation they form, in
// levels: first the roles no other role delegates to, then the roles
// they delegate to, and so on (a role delegated to from several levels
// sits below the deepest of them). Each level is sorted; every role is
// in exactly one level.
func (p *Policy) Chain() [][]string {
	names := p.roleNames()
	if len(names) == 0 {
		return nil
	}
	to := map[string][]string{}
	from := map[string]int{}
	for _, n := range names {
		to[n] = p.DelegatesOf(n)
		for _, m := range to[n] {
			from[m]++
		}
	}
	// Longest path from a root, with a bound so a cycle cannot loop.
	level := map[string]int{}
	var visit func(n string, l int)
	visit = func(n string, l int) {
		if cur, ok := level[n]; ok && cur >= l || l > len(names) {
			return
		}
		level[n] = l
		for _, m := range to[n] {
			visit(m, l+1)
		}
	}
	for _, n := range names {
		if from[n] == 0 {
			visit(n, 0)
		}
	}
	for _, n := range names {
		if _, ok := level[n]; !ok {
			visit(n, 0) // in a cycle with no root
		}
	}
	var out [][]string
	for _, n := range names {
		l := level[n]
		if l > len(names) {
			l = len(names)
		}
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], n)
	}
	// Drop levels a cycle bound left empty.
	kept := out[:0]
	for _, lv := range out {
		if len(lv) > 0 {
			kept = append(kept, lv)
		}
	}
	return kept
}
