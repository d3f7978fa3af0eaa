package session

import (
	"fmt"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
)

// IntentArg is the argument of select_active_intent that names the
// intent to select (docs/policy.md, Intents).
const IntentArg = "intent_id"

// SelectsIntent reports whether a tool is warden's select_active_intent,
// under any host's name for it (kind intent: select_active_intent itself,
// or warden's MCP tool as Claude Code and Codex, Gemini CLI and OpenCode
// name it).
func SelectsIntent(p *policy.Policy, tool string) bool {
	return p != nil && p.KindOf(tool) == "intent"
}

// selectIntent is the intent handshake inside the session's decision:
// an allowed select_active_intent call with an intent_id makes that intent
// the session's (returned, to be stored with the session); an id the
// intents file does not hold turns the decision into an INTENT_NOT_FOUND
// deny that lists the ids to select. A call without an id (a listing), a
// policy without an intents section, or a call the policy did not allow
// changes nothing.
func (t *Tracker) selectIntent(call *warden.ToolCall, tr *engine.Result) string {
	p := t.policy()
	if tr == nil || tr.Decision.Decision != warden.Allow || p == nil || p.Intents == nil || !SelectsIntent(p, call.Tool) {
		return ""
	}
	id, _ := call.Args[IntentArg].(string)
	id = strings.TrimSpace(id)
	if id == "" {
		return ""
	}
	list, err := t.Engine.Intents()
	if err == nil {
		for _, in := range list {
			if in.ID == id {
				if tr.Decision.Mode == "audit" && tr.Decision.Enforced != nil && *tr.Decision.Enforced != warden.Allow {
					return "" // the policy would not have let it through
				}
				return id
			}
		}
	}
	d := warden.Decision{Decision: warden.Deny, Code: warden.CodeIntentNotFound, Recoverable: true,
		Reason:   fmt.Sprintf("Intent %q is not in %s.", id, p.Intents.File),
		Warnings: nonNil(tr.Decision.Warnings), Matched: nonNil(tr.Decision.Matched)}
	switch ids := policy.IntentList(list); {
	case err != nil:
		d.Reason = fmt.Sprintf("The intents file cannot be read, so intent %q cannot be selected: %v.", id, err)
		d.Suggestion = "Ask the user to fix the intents file (warden lint names the line), then select the intent again."
	case ids == "":
		d.Suggestion = "No intent is active: ask the user to add one to the intents file."
	default:
		d.Suggestion = "Select one of the active intents (select_active_intent with intent_id): " + ids + "."
	}
	if p.ModelFormat(call.Host) == "json" {
		d.ModelFormat = "json"
	}
	if tr.Decision.Mode == "audit" {
		// Audit mode answers allow and records what it would have done;
		// the intent is not selected.
		deny := warden.Deny
		d.Decision, d.Mode, d.Enforced = warden.Allow, "audit", &deny
		d.ModelFormat = ""
	}
	tr.Decision = d
	return ""
}
