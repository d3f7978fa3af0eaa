# The hook benchmark's policy in Rego, for `opa eval` beside `warden hook
# claude` (e2e/hookbench.sh). Rego cannot parse shell, so the command line is
# split on && || ; | (warden parses it with a real shell parser).
package warden

import rego.v1

parts := [trim_space(p) | some p in regex.split(`&&|\|\||;|\|`, input.tool_input.command)]

prefix_match(p, pre) if p == pre
prefix_match(p, pre) if startswith(p, concat("", [pre, " "]))

denied if {
	some p in parts
	prefix_match(p, "rm")
}

asked if {
	some p in parts
	prefix_match(p, "git push")
}

allowed_part(p) if prefix_match(p, "touch")
allowed_part(p) if prefix_match(p, "git status")
allowed_part(p) if prefix_match(p, "git diff")
allowed_part(p) if prefix_match(p, "git log")
allowed_part(p) if prefix_match(p, "git show")
allowed_part(p) if prefix_match(p, "echo")

decision := {"permissionDecision": "deny", "permissionDecisionReason": "Deleting files is blocked in this project."} if {
	denied
} else := {"permissionDecision": "ask", "permissionDecisionReason": "Pushing needs the user's approval."} if {
	asked
} else := {"permissionDecision": "allow"} if {
	every p in parts {
		allowed_part(p)
	}
} else := {"permissionDecision": "deny", "permissionDecisionReason": "No rule covers this call."}

hook_output := {"hookSpecificOutput": object.union({"hookEventName": "PreToolUse"}, decision)}
