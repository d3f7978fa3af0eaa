package warden

import "time"

// Approval is a tool call that is waiting for, or got, a human's answer
// (docs/sessions.md). It is recorded when a
// decision is ask and the host has no prompt of its own.
type Approval struct {
	ID      string `json:"id"`
	Session string `json:"session,omitempty"`
	Role    string `json:"role,omitempty"`
	Host    string `json:"host,omitempty"`
	// Agent is who sent the call that asked (AuditRecord.Agent).
	Agent string `json:"agent,omitempty"`
	Tool  string `json:"tool"`
	// Args are the call's arguments with secrets redacted (RedactArgs).
	Args map[string]any `json:"args"`
	// Summary is a one-line, redacted description of the call for humans.
	Summary string `json:"summary"`
	// Code, Rule and Reason are those of the ask decision.
	Code   Code   `json:"code"`
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Parts are the parts of the call that asked: what an "always" or
	// "session" answer grants, exactly as wide as the call.
	Parts []GrantPart `json:"parts"`
	// Fingerprint identifies the call (tool, role, session and arguments)
	// so that a retried call finds its approval again. It is a hash; it
	// never holds the arguments.
	Fingerprint string `json:"fingerprint"`
	Status      string `json:"status"`
	// Scope is how far an approval reaches: ScopeOnce, ScopeSession or
	// ScopeAlways. Empty while pending and for rejections.
	Scope string `json:"scope,omitempty"`
	// Message is the human's message; for a rejection the model sees it.
	Message   string    `json:"message,omitempty"`
	DecidedBy string    `json:"decided_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	DecidedAt time.Time `json:"decided_at,omitempty"`
	// Grants lists the ids of the grants a session or always answer made.
	Grants []string `json:"grants,omitempty"`
	// Consumed reports that the answer was delivered: an approval let one
	// identical call through, a rejection denied one with its message. An
	// answer is delivered once, to a call from any session.
	Consumed bool `json:"consumed,omitempty"`
	// ExpiresAt is when the approval's lifetime ends (the policy's
	// approvals.expires after it was asked, or after it was answered).
	// Stores do not keep it; the session layer fills it in for display.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// GrantPart is one part of a call a grant can cover: a normalised simple
// command, a workspace-relative path, or the call as a whole.
type GrantPart struct {
	Subject string `json:"subject"`
	Value   string `json:"value"`
}

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
)

// Approval scopes.
const (
	ScopeOnce    = "once"
	ScopeSession = "session"
	ScopeAlways  = "always"
)

// Resolution is a human's answer to a pending approval.
type Resolution struct {
	// Status is ApprovalApproved or ApprovalRejected.
	Status string
	// Scope is required for an approval (once, session or always).
	Scope     string
	Message   string
	DecidedBy string
}

// ApprovalFilter selects approvals. Zero fields select everything.
type ApprovalFilter struct {
	Status      string
	Session     string
	Fingerprint string
	Limit       int
}
