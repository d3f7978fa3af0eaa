package engine

import (
	"encoding/json"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/shell"
)

// rawAbs is the path as written made absolute, without resolving symlinks.
func (p *part) rawAbs() string {
	if p.clean == "" {
		return p.abs
	}
	return p.clean
}

func (p *part) display() string {
	switch p.subject {
	case warden.SubjectCommand:
		return commandText(&p.an.Commands[p.cmd])
	case warden.SubjectPath:
		if p.dynamic {
			return p.raw
		}
		if p.inside {
			return p.rel
		}
		return p.abs
	}
	return ""
}

// partValue is the part's value for traces and grants.
func (e *Engine) partValue(st *state, p *part) string {
	if p.subject == warden.SubjectCall {
		data, err := json.Marshal(st.call.Args)
		if err != nil {
			return "{}"
		}
		return string(data)
	}
	return p.display()
}

// grantValue is the value a grant for the part holds (Part.GrantValue).
func (e *Engine) grantValue(st *state, p *part) string {
	tp := Part{Value: e.partValue(st, p)}
	if p.subject == warden.SubjectCommand {
		tp.Input = inputLine(&st.call, p.an, p.cmd)
		// As the session layer stores it (a secret kept redacted).
		return warden.RedactPart(tp.GrantValue(), warden.CommandLine(st.call.Args))
	}
	return tp.GrantValue()
}

// needsIntent reports whether a part needs an active intent.
func (st *state) needsIntent(p *part) bool {
	in := st.e.pol.Intents
	if in == nil || len(in.Require) == 0 {
		return false
	}
	for _, k := range in.Require {
		if k == st.kind || p.vkind != "" && k == p.vkind {
			return true
		}
		if (p.vkind == "delete" || st.kind == "other") && k == "write" {
			// A tool warden does not know may write anything.
			return true
		}
	}
	return false
}

// scope checks a write against the active intent.
func (e *Engine) scope(st *state, p *part) item {
	id := st.call.IntentID
	is := e.intents
	switch {
	case id == "":
		return item{set: true, effect: warden.Deny, code: warden.CodeMissingIntent, subject: st.call.Tool}
	case is == nil:
		return item{}
	case is.err != nil:
		return item{set: true, effect: warden.Deny, code: warden.CodeIntentNotFound, subject: id, extra: is.err.Error()}
	}
	in, ok := is.byID[id]
	if !ok {
		return item{set: true, effect: warden.Deny, code: warden.CodeIntentNotFound, subject: id}
	}
	if !in.owns(p.abs, p.rel, p.inside) {
		return item{set: true, effect: e.pol.Intents.OutOfScope, code: warden.CodeScopeViolation, subject: p.display(), extra: id}
	}
	return item{}
}

// grantFor returns the id of a grant that covers part p, or "".
func (e *Engine) grantFor(st *state, p *part) string {
	c := &st.call
	var value string
	computed := false
	for i := range st.s.Grants {
		g := &st.s.Grants[i]
		// A grant names the host's tool, or a kind: then it covers the
		// tool of that kind on every host (docs/policy.md, "Grants").
		if g.Tool != c.Tool && !(policy.IsKind(g.Tool) && g.Tool == st.kind) || g.Role != c.Role || g.Session != "" && g.Session != c.Session {
			continue
		}
		if g.UsesLeft == 0 {
			continue
		}
		if g.Subject == warden.SubjectCall && g.Pattern == "*" {
			return g.ID // every call of the tool (grants add TOOL --all)
		}
		if g.Subject != p.subject {
			continue
		}
		if g.Pattern != "" {
			if e.grantPattern(st, g, p) {
				return g.ID
			}
			continue
		}
		if !computed {
			value, computed = e.grantValue(st, p), true
		}
		if g.Value == value {
			return g.ID
		}
	}
	return ""
}

// grantPattern matches a widened grant: a command pattern for commands, a
// path glob for paths, a text glob on the canonical arguments for calls.
func (e *Engine) grantPattern(st *state, g *warden.Grant, p *part) bool {
	switch p.subject {
	case warden.SubjectCommand:
		pat, err := shell.CompilePattern(g.Pattern)
		return err == nil && pat.Match(p.an, p.cmd, true)
	case warden.SubjectPath:
		pg, err := e.compilePath(g.Pattern)
		return err == nil && pg.match(p.abs, p.rel, p.inside)
	}
	return globText(g.Pattern, e.partValue(st, p))
}
