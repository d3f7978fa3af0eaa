package warden

import "time"

// Grant is a standing approval a human gave ("approve for this session" or
// "always"). The engine honours grants after the policy's deny rules: a grant
// turns an ask into an allow for exactly the parts it covers, and never
// overrides a deny, a protected path or a role's tool list.
//
// By default a grant is exactly as wide as the call it was made from: Value
// holds the normalised simple command ("git push origin main"), the path
// relative to the workspace ("src/app.go"), or the canonical JSON of the
// arguments for a tool that has neither. Only a human widens it, by setting
// Pattern (a command glob or a path glob, as in policy rules).
type Grant struct {
	ID string `json:"id"`
	// Tool is the host tool name the grant is for.
	Tool string `json:"tool"`
	// Role is the role it is for; empty means calls without a role.
	Role string `json:"role,omitempty"`
	// Session, when set, limits the grant to one session.
	Session string `json:"session,omitempty"`
	// Subject is what Value describes: "command", "path" or "call".
	Subject string `json:"subject"`
	Value   string `json:"value"`
	Pattern string `json:"pattern,omitempty"`
	// Expires, when set, ends the grant. Stores do not return expired grants.
	Expires time.Time `json:"expires,omitempty"`
	// UsesLeft counts the uses left; -1 means unlimited. Stores do not
	// return grants with no uses left.
	UsesLeft  int       `json:"uses_left"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"`
	// Approval is the id of the approval the grant came from, if any.
	Approval string `json:"approval,omitempty"`
}

// Grant subjects.
const (
	SubjectCommand = "command"
	SubjectPath    = "path"
	SubjectCall    = "call"
)
