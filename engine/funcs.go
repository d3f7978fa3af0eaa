package engine

import (
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/shell"
)

// A function the line defines and does not call (shell.Analysis.Uncalled)
// runs nothing now: its body's parts are judged, and only a denial counts
// (a deny rule, a protected or private path, a write outside a workspace
// that denies it), so that the definition of a denied call is denied even
// though a persistent shell would only run it later. What the body would
// ask, or its kind, does not count: f() { rm -rf build; } alone is a
// harmless definition (docs/policy.md, "Functions").

// uncalledPart runs judge, the checks of a part in the body of the
// uncalled function fn, and keeps only a denial that is not the
// default's.
func (e *Engine) uncalledPart(st *state, fn string, judge func()) {
	saved := *st
	st.best = item{}
	n := 0
	if st.tr != nil {
		n = len(st.tr.Parts)
	}
	judge()
	got, tr := st.best, st.tr
	*st = saved
	if tr != nil {
		for i := n; i < len(tr.Parts); i++ {
			tr.Parts[i].Uncounted = got.effect != warden.Deny || got.code == warden.CodeDefault
		}
	}
	if !got.set || got.effect != warden.Deny || got.code == warden.CodeDefault {
		if tr != nil {
			detail := "function " + fn + " is not called in this line: its body counts only where it would be denied"
			for _, c := range tr.Checks {
				if c.Detail == detail {
					return
				}
			}
			tr.Checks = append(tr.Checks, Check{Name: "function", Effect: warden.Allow, Code: warden.CodeDefault, Detail: detail})
		}
		return
	}
	if got.rule != nil {
		st.markMatched(got.rule)
	}
	if got.beats(st.best) {
		st.fnDenied, st.fnItem = fn, got
	}
	st.offer(got)
	if tr != nil {
		tr.Checks = append(tr.Checks, Check{Name: "function", Effect: warden.Deny, Code: got.code,
			Detail: "function " + fn + " is not called in this line, but its body is denied: " + e.reason(st, got)})
	}
}

// fnReason is the reason of a decision settled by the body of a function
// the line does not call.
func (e *Engine) fnReason(st *state, b item, reason string) string {
	if st.fnDenied == "" || b != st.fnItem {
		return reason
	}
	return "The function " + st.fnDenied + " is not called in this command, but it defines a denied call: " + reason
}

// definitionPart judges a line whose every command is in the body of a
// function it does not call (f() { make; } alone) as what it is now, a
// definition: kind safe, matched by rules of the whole tool only.
func (e *Engine) definitionPart(st *state, a *shell.Analysis) {
	for i := range a.Commands {
		if f := a.Commands[i].Func; f == "" || !st.uncalled[f] {
			return
		}
	}
	p := part{subject: warden.SubjectCall}
	e.evalPart(st, &p)
}

// notShadowing leaves out of uncalled the functions named after a
// program a rule of the policy names (terraform() { ...; } where a rule
// allows terraform plan): a persistent shell would run the body for every
// later call the rule decides, so it is judged as if run.
func (e *Engine) notShadowing(uncalled map[string]bool) map[string]bool {
	if len(uncalled) == 0 {
		return nil
	}
	for fn := range uncalled {
		for _, r := range e.rules {
			for i := range r.commands {
				for _, p := range r.commands[i].Progs() {
					if p == fn || glob.Text(p, fn) {
						delete(uncalled, fn)
					}
				}
			}
		}
	}
	if len(uncalled) == 0 {
		return nil
	}
	return uncalled
}
