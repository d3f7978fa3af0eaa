package engine

import (
	"slices"
	"strings"

	"github.com/warden-run/warden"
)

// Unknown but confined (docs/policy.md): under a policy with
// sandbox.shell on or required, every allowed shell call runs confined,
// and a command part that no rule covers and whose effects warden cannot
// read from the line takes default.confined instead of
// default.destructive. The checks before the default are untouched: a
// deny rule still denies, an ask rule still asks, a protected path
// written or a private path named is still refused, a write outside the
// intent still needs one, and the paths a line visibly writes or deletes
// are parts of their own that keep default.destructive.

// confinedDefault turns the default of a command part of a shell line
// into default.confined when the policy has one and confines shell calls.
func (e *Engine) confinedDefault(p *part, res *item) {
	if e.pol.Default.Confined == "" || !e.pol.Sandbox.Confine() || p.subject != warden.SubjectCommand || !p.destr {
		return
	}
	if !e.confinable(res.note) {
		return
	}
	res.effect = e.pol.Default.Confined
	res.extra = "confined"
}

// confinement is the Confinement a shell call's decision carries, nil for
// other calls and for a policy that does not confine.
func (e *Engine) confinement(st *state) *warden.Confinement {
	if st.kind != "shell" || !e.pol.Sandbox.Confine() {
		return nil
	}
	sb := &e.pol.Sandbox
	c := &warden.Confinement{Shell: sb.Mode(), Network: "deny", Only: st.confined}
	if !sb.NetworkDenied() {
		c.Network = "allow"
	} else {
		c.Ports = slices.Clone(sb.Ports)
	}
	c.Writable = slices.Clone(sb.Writable)
	return c
}

// confinedRead is the check of a read of a path computed at run time (it
// may be a private path): confined, the private paths are hidden from the
// command, so the read takes default.confined.
func (e *Engine) confinedRead(st *state, it item) item {
	if e.pol.Default.Confined == "" || !e.pol.Sandbox.Confine() || st.kind != "shell" {
		return it
	}
	if e.pol.Default.Confined == warden.Allow {
		st.confined = true
	}
	return item{effect: e.pol.Default.Confined, code: warden.CodeDefault, extra: "confined", subject: it.subject,
		note: "it reads a path computed at run time, which may be a private path"}
}

// unconfinable are the risks of a command (shell/progs) whose harm the
// sandbox does not bound: the repository's refs and objects stay writable
// (git must commit), so a branch deleted or reset loses commits. They keep
// default.destructive.
var unconfinable = []string{"loses the commits", "deletes or overwrites a branch", "moves the current branch"}

// unconfinableNet are the risks that are bounded only while the network
// is denied: sending files or credentials to another machine.
var unconfinableNet = []string{"send", "another server", "another machine", "remote shell"}

// confinable reports whether a command with this risk note (empty: no
// rule covers it, warden knows of no risk) may take default.confined.
func (e *Engine) confinable(note string) bool {
	for _, s := range unconfinable {
		if strings.Contains(note, s) {
			return false
		}
	}
	if !e.pol.Sandbox.NetworkDenied() {
		for _, s := range unconfinableNet {
			if strings.Contains(note, s) {
				return false
			}
		}
	}
	return true
}
