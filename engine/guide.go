package engine

import (
	"strings"

	"github.com/warden-run/warden"
)

// guide is the seed layout's part of a deny or ask (model_errors.layout:
// seed): the agent's role and what it does, the roles' hierarchy, and the
// next steps: the suggestion first, then what the role's rules point to
// (its first tools while the session has not started right, the roles it
// delegates to for a tool it may not use), then reading the task list.
func (e *Engine) guide(call *warden.ToolCall, d *warden.Decision) *warden.Guide {
	g := &warden.Guide{Role: "none (no role: the policy's rules apply as they are)"}
	role := call.Role
	if role == "" {
		role = e.pol.DefaultRole
	}
	r := e.pol.Roles[role]
	if r != nil {
		g.Role = role
		if r.Description != "" {
			g.Role += ": " + r.Description
		}
	} else if role != "" {
		g.Role = role + " (a role the policy does not define)"
	}
	var levels []string
	for _, l := range e.pol.Chain() {
		levels = append(levels, strings.Join(l, " / "))
	}
	g.Hierarchy = strings.Join(levels, " -> ")
	if d.Suggestion != "" {
		g.NextSteps = append(g.NextSteps, d.Suggestion)
	}
	switch {
	case r != nil && d.Code == warden.CodeFirstTool && len(r.First) > 0:
		g.NextSteps = append(g.NextSteps, "Start the session with one of: "+strings.Join(r.First, ", ")+".")
	case r != nil && d.Code == warden.CodeRoleToolDenied:
		if to := e.pol.DelegatesOf(role); len(to) > 0 {
			g.NextSteps = append(g.NextSteps, "Delegate this to "+strings.Join(to, " or ")+", whose role may do it.")
		} else {
			g.NextSteps = append(g.NextSteps, "Report to the agent that gave you the task: your role may not use "+call.Tool+".")
		}
	}
	if d.Decision == warden.Ask {
		g.NextSteps = append(g.NextSteps, "Wait for the human's answer before you retry the same call.")
	} else {
		g.NextSteps = append(g.NextSteps, "Check the task list for what is left, and go on with what the policy allows.")
	}
	return g
}
