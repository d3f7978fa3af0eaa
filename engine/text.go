package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/warden-run/warden"
)

// reason is the model-facing explanation of an item: what happened and why.
func (e *Engine) reason(st *state, it item) string {
	c := &st.call
	switch it.code {
	case warden.CodeRuleDeny, warden.CodeRuleAsk:
		if it.rule != nil && it.rule.message != "" {
			return it.rule.message
		}
		if it.effect == warden.Ask {
			return fmt.Sprintf("Rule %s requires the user's approval for %s.", it.rule.id, what(it.subject, c.Tool))
		}
		return fmt.Sprintf("Rule %s blocks %s.", it.rule.id, what(it.subject, c.Tool))
	case warden.CodeProtectedPath:
		if it.extra == "read" {
			return fmt.Sprintf("%s is a private path: no agent may read it.", it.subject)
		}
		return fmt.Sprintf("%s is a protected path: no agent may write, edit or delete it.", it.subject)
	case warden.CodeOutsideWorkspace:
		return fmt.Sprintf("%s is outside the workspace (%s).", it.subject, e.rootRaw)
	case warden.CodeRoleUnknown:
		return "This agent runs with the role " + c.Role + ", which the policy does not define (its roles are: " + e.roleNames() + "), so warden denies every call of it. This is a setup problem, not something you did."
	case warden.CodeRoleToolDenied:
		return e.denial(c.Role, c.Tool, st.kind).reason
	case warden.CodeDepthExceeded:
		r := e.roles[c.Role]
		return fmt.Sprintf("Delegation depth %d reaches the %s role's limit of %d.", c.Depth, c.Role, r.MaxDepth)
	case warden.CodeFirstTool:
		r := e.roles[c.Role]
		return fmt.Sprintf("The first tool call of a %s session must use one of: %s; this one uses %s.", c.Role, strings.Join(r.First, ", "), c.Tool)
	case warden.CodeMissingIntent:
		return fmt.Sprintf("No active intent is selected, and %s calls need one.", st.kind)
	case warden.CodeIntentNotFound:
		if it.extra != "" {
			return fmt.Sprintf("The intents file cannot be read, so intent %q cannot be checked: %s.", it.subject, it.extra)
		}
		return fmt.Sprintf("Intent %q is not in %s.", it.subject, e.pol.Intents.File)
	case warden.CodeScopeViolation:
		in := e.intents.byID[it.extra]
		if len(in.scope) == 0 {
			return fmt.Sprintf("%s is outside the scope of intent %s, which owns nothing (it has no owned_scope).", it.subject, it.extra)
		}
		return fmt.Sprintf("%s is outside the scope of intent %s (owned_scope: %s).", it.subject, it.extra, strings.Join(in.scope, ", "))
	case warden.CodeUnknownTarget:
		return fmt.Sprintf("warden cannot tell which files this %s call writes, so it cannot check them against the protected paths, the workspace and the intents.", it.subject)
	case warden.CodeUnparsable:
		switch {
		case it.extra == gitHistory:
			where := "the whole repository"
			if it.note != "." {
				where = it.note
			}
			return fmt.Sprintf("%s prints files from the repository's history (%s), and warden does not search the commits for the policy's private files, so it cannot tell whether one is among them.", it.subject, where)
		case it.extra != "":
			return "The command cannot be analysed: " + it.extra + "."
		case it.note != "" && it.subject != "":
			return fmt.Sprintf("warden cannot read all of what %s would run or write: %s; so no rule and no default can allow it.", it.subject, it.note)
		case describedWrite(it.subject):
			return fmt.Sprintf("warden cannot tell which files this command writes %s, so it cannot check them against the protected paths and the workspace.", it.subject)
		case it.subject != "":
			return fmt.Sprintf("Part of the command is computed at run time (%s), so warden cannot tell what it would run or write.", it.subject)
		}
		return "The command cannot be analysed."
	case warden.CodeDefault:
		if it.note != "" {
			return fmt.Sprintf("No rule can allow %s because %s; the policy's default for %s calls is %s.", what(it.subject, c.Tool), it.note, it.extra, it.effect)
		}
		return fmt.Sprintf("No rule covers %s; the policy's default for %s calls is %s.", what(it.subject, c.Tool), it.extra, it.effect)
	case warden.CodeBadInput:
		if it.extra == twinKeys {
			return fmt.Sprintf("The call's arguments have two keys that differ only in case (%s): tools differ on which of the two they read, so warden cannot tell what the call would do.", it.subject)
		}
		if it.extra == nulPath {
			return fmt.Sprintf("The path \"%s\" holds a NUL byte: tools differ on where such a path ends (a program written in C stops at the NUL), so warden cannot tell which file the call would use.", it.subject)
		}
		return fmt.Sprintf("The call's argument %q must be %s, not %s.", it.subject, it.extra, it.note)
	}
	return string(it.code)
}

// roleNames lists the policy's roles, sorted.
func (e *Engine) roleNames() string {
	names := make([]string, 0, len(e.roles))
	for n := range e.roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func what(subject, tool string) string {
	if subject == "" {
		return "this " + tool + " call"
	}
	return subject
}

// suggestion is the model-facing advice: what to do instead.
func (e *Engine) suggestion(st *state, it item) string {
	c := &st.call
	switch it.code {
	case warden.CodeRuleDeny, warden.CodeRuleAsk:
		if it.rule != nil && it.rule.suggestion != "" {
			return it.rule.suggestion
		}
		if it.effect == warden.Ask {
			return "Wait for the user's decision, or choose a step that needs no approval."
		}
		return "Choose another way to reach the goal, or ask the user."
	case warden.CodeProtectedPath:
		if it.extra == "read" {
			if strings.Contains(it.subject, " (tracked by git, ") {
				return "Name the files to search or compare after --, leaving the private file out (git diff -- src/, git grep PATTERN -- src/)."
			}
			if strings.Contains(it.subject, " (inside ") {
				return "Read or search the folders and files that hold no private file (for example grep -r PATTERN src), not the whole folder."
			}
			return "Do not read this file. If the task needs a value from it, ask the user for that value."
		}
		return "Leave this path unchanged. If it must change, tell the user what to change and why."
	case warden.CodeOutsideWorkspace:
		return "Work on files inside the workspace, or ask the user to do this step."
	case warden.CodeRoleUnknown:
		return "Stop and tell the user: the agent must be started with one of the policy's roles, spelt as the policy spells it (the --role of the warden hook, or the subagent's type), or the policy must define role " + c.Role + "."
	case warden.CodeRoleToolDenied:
		return e.denial(c.Role, c.Tool, st.kind).hint
	case warden.CodeDepthExceeded:
		return "Do this step yourself instead of delegating further, or report back to your coordinator."
	case warden.CodeFirstTool:
		if r := e.roles[c.Role]; r != nil {
			return "Start the session with " + strings.Join(r.First, " or ") + "."
		}
		return "Start the session with the role's required first tool."
	case warden.CodeMissingIntent:
		if ids := e.intentIDs(); ids != "" {
			return "Select an active intent first (select_active_intent with intent_id, one of: " + ids + "), then retry."
		}
		return "Select an active intent first (select_active_intent with an id such as INT-001), then retry."
	case warden.CodeIntentNotFound:
		if ids := e.intentIDs(); ids != "" {
			return "Select one of the active intents (select_active_intent with intent_id): " + ids + "; or ask the user to add the one you need."
		}
		return "No intent is active: ask the user to add one to the intents file."
	case warden.CodeScopeViolation:
		return "Select an intent whose scope includes this path, or ask the user to widen intent " + it.extra + "'s scope."
	case warden.CodeUnknownTarget:
		return "Use a tool whose arguments name the file (file_path, path), or wait for the user's approval."
	case warden.CodeUnparsable:
		if it.extra == gitHistory {
			return "Name the files to show after -- (" + it.subject + " -p -- src/main.go), or show names only (--stat, --name-only); or wait for the user's approval."
		}
		if describedWrite(it.subject) {
			if strings.Contains(it.subject, "git ") {
				return "Wait for the user's approval, or use a form that names the files it writes (git restore PATH, git checkout REV -- PATH)."
			}
			return "Wait for the user's approval, or use a form that names the files it writes."
		}
		if it.note != "" {
			return "Wait for the user's approval, or write the command in a form warden can read whole (no program text or option it does not know)."
		}
		return "Write the command plainly, with a literal program name and literal paths, and try again."
	case warden.CodeDefault:
		if it.effect == warden.Ask {
			return "Wait for the user's approval, or use a command or tool the policy allows."
		}
		return "Use a command or tool the policy allows, or ask the user to add a rule for this."
	case warden.CodeBadInput:
		if it.extra == twinKeys {
			return "Send the call again with each argument once, spelled as the tool's schema spells it."
		}
		if it.extra == nulPath {
			return "Send the call again with the path written without the NUL byte."
		}
		return fmt.Sprintf("Send the call again with %q as %s.", it.subject, it.extra)
	}
	return "Ask the user how to proceed."
}

// delegateHint names the role a step denied to role should go to: a role
// whose tools include tool, preferring the roles role delegates to
// (directly or further down the chain) and roles with a tool list of their
// own over roles that may use any tool.
//
// It depends on the compiled policy alone (see denial).
func (e *Engine) delegateHint(role, tool, kind string) string {
	var listed, open []string
	for n, ri := range e.roles {
		switch {
		case n == role, e.deniedWhole(n, tool, kind):
		case ri.Tools == nil:
			open = append(open, n)
		case anyTool(ri.tools, tool, kind):
			listed = append(listed, n)
		}
	}
	cands := listed
	if len(cands) == 0 {
		cands = open
	}
	if len(cands) == 0 {
		return "Use one of your role's tools. No role of the policy may use " + tool + ": ask the user to do this step."
	}
	// Roles reachable down the chain from role come first.
	reach := map[string]bool{}
	next := e.pol.DelegatesOf(role)
	for len(next) > 0 {
		n := next[0]
		next = next[1:]
		if !reach[n] {
			reach[n] = true
			next = append(next, e.pol.DelegatesOf(n)...)
		}
	}
	var near []string
	for _, n := range cands {
		if reach[n] {
			near = append(near, n)
		}
	}
	if len(near) > 0 {
		cands = near
	}
	sort.Strings(cands)
	if len(cands) > 3 {
		cands = cands[:3]
	}
	who := "the " + cands[0] + " role"
	if len(cands) > 1 {
		who = "one of the roles " + strings.Join(cands, ", ")
	}
	if e.pol.MayDelegate(role) {
		return "Delegate this step to " + who + ", which may use " + tool + "; or use one of your role's tools."
	}
	return "This step belongs to " + who + ", which may use " + tool + ": report back to the role that delegated to you and say so, or use one of your role's tools."
}

// deniedWhole reports whether a deny rule with no matcher but its tools
// (and roles) takes tool from role: such a role is no place to send the
// work.
func (e *Engine) deniedWhole(role, tool, kind string) bool {
	for _, r := range e.callRules {
		if r.effect != warden.Deny || len(r.commands) > 0 || r.hasPath || len(r.args) > 0 || r.intent != nil {
			continue
		}
		if len(r.roles) > 0 && !slices.Contains(r.roles, role) {
			continue
		}
		if len(r.tools) == 0 || anyTool(r.tools, tool, kind) {
			return true
		}
	}
	return false
}

// describedWrite reports a computed write the program tables describe
// rather than spell: "(the files git switch rewrites from history)",
// "(files named by the input of tar)". No rewording of the command makes
// it plain; only the user's approval or another form does.
func describedWrite(subject string) bool {
	return strings.HasPrefix(subject, "(") && strings.HasSuffix(subject, ")")
}

// denialText is what a call of a tool its role may not use is told: the
// reason and the hint of the role to hand it to.
type denialText struct{ reason, hint string }

// maxDenials bounds the denial texts an engine keeps.
const maxDenials = 4096

// denial returns the text for role (a role of the policy) denied tool of
// kind. It depends on the compiled policy alone, so it is kept for each
// role, tool and kind met (up to maxDenials): a policy of many rules does
// not cost a denied call a pass over them, nor the text its allocations.
func (e *Engine) denial(role, tool, kind string) denialText {
	key := [3]string{role, tool, kind}
	e.denialsMu.RLock()
	d, ok := e.denials[key]
	e.denialsMu.RUnlock()
	if ok {
		return d
	}
	d = denialText{
		reason: "The " + role + " role may not use the tool " + tool + " (kind " + kind + "). Its tools are: " + e.roles[role].toolsText + ".",
		hint:   e.delegateHint(role, tool, kind),
	}
	e.denialsMu.Lock()
	if e.denials == nil {
		e.denials = map[[3]string]denialText{}
	}
	if len(e.denials) < maxDenials {
		e.denials[key] = d
	}
	e.denialsMu.Unlock()
	return d
}
