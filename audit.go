package warden

import "time"

// MaxAuditString is the longest string argument the audit trail keeps
// whole; a longer one is cut (RedactArgsCut).
const MaxAuditString = 64 << 10

// FailureRecord is the audit record of a call that got no decision (a
// timeout, a crash, a store that did not answer), answered with d (a deny
// from FailClosed), its secrets redacted: the record of the call under
// callID, sent by agent.
func FailureRecord(call ToolCall, callID, agent string, d Decision) AuditRecord {
	return AuditRecord{Time: time.Now().UTC(), Session: call.Session, Role: call.Role, Host: call.Host,
		Tool: call.Tool, Depth: call.Depth, Args: RedactArgsCut(call.Args, MaxAuditString), Decision: d.Decision, Code: d.Code,
		Reason: RedactString(d.Reason), Mode: "enforce", CallID: callID, Agent: agent}
}

// AuditRecord is the record of one decision. Arguments are redacted before a
// record is built (RedactArgs); stores write what they are given.
type AuditRecord struct {
	// ID is assigned by the store, increasing in the order of appends.
	ID      int64     `json:"id"`
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"`
	Role    string    `json:"role,omitempty"`
	Host    string    `json:"host,omitempty"`
	Tool    string    `json:"tool"`
	Depth   int       `json:"depth,omitempty"`
	// Args holds the call's arguments with secrets redacted.
	Args     map[string]any `json:"args"`
	Decision Effect         `json:"decision"`
	Code     Code           `json:"code"`
	Rule     string         `json:"rule,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Matched  []string       `json:"matched,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	// Grants are the ids of the grants that allowed the call; Approval the
	// approval that was asked or honoured.
	Grants   []string `json:"grants,omitempty"`
	Approval string   `json:"approval,omitempty"`
	// Mode is "enforce" or "audit"; in audit mode Enforced is what enforce
	// mode would have decided.
	Mode     string `json:"mode"`
	Enforced Effect `json:"enforced,omitempty"`
	// Latency is the time the decision took, waiting for a human included.
	Latency time.Duration `json:"latency_ns"`
	// CallID identifies the host's call when the caller gave it one (the
	// hooks do): a store keeps at most one record per CallID, so a call
	// retried after a crash is decided once.
	CallID string `json:"call_id,omitempty"`
	// Agent is who sent the call, where warden knows: the name of the
	// agent token a call to warden serve came with.
	Agent string `json:"agent,omitempty"`
	// CallSum is the digest of the call CallID was given for (its tool
	// and arguments, salted with the id; see session.CallSum): a later
	// call with the same id gets this record's decision only when it is
	// the same call from the same agent in the same session.
	CallSum string `json:"call_sum,omitempty"`
	// Source is the plain-language sentence the deciding rule was compiled
	// from (warden compile), if it was.
	Source string `json:"source,omitempty"`
	// ToolUse is the host's own id for the call (Claude Code's and Codex's
	// tool_use_id, OpenCode's call id), when it gives one: the host's
	// post-tool event names it, and the outcome goes to this record.
	ToolUse string `json:"tool_use,omitempty"`
	// Outcome is what the call did once it ran, as the host's post-tool
	// event reported it: OutcomeOK, OutcomeFail, or "" when no host event
	// said (unknown).
	Outcome string `json:"outcome,omitempty"`
	// Sandbox is the confinement of a shell call under a policy with
	// sandbox.shell on or required: the settings, and whether the hook
	// rewrote the call to run confined (Ran) and what the kernel enforces.
	Sandbox *Confinement `json:"sandbox,omitempty"`
}

// Outcomes of a call that ran (AuditRecord.Outcome).
const (
	OutcomeOK   = "ok"
	OutcomeFail = "fail"
)

// Outcome is a host's report of what a call it ran did (a post-tool
// event), for AuditLog.SetOutcome.
type Outcome struct {
	Session string
	Tool    string
	// ToolUse is the host's id for the call ("" when the host gives none).
	ToolUse string
	OK      bool
}

// AuditFilter selects audit records. Zero fields select everything; Since is
// inclusive and Until exclusive. Records come oldest first.
type AuditFilter struct {
	Session  string
	Decision Effect
	// Enforced keeps the calls enforce mode decides this way: the
	// decision itself in enforce mode, what would have been decided in
	// audit mode.
	Enforced Effect
	Tool     string
	Rule     string
	Since    time.Time
	Until    time.Time
	// Limit, when positive, keeps the newest Limit records.
	Limit int
	// CallID selects the record of one call.
	CallID string
	// Agent keeps the calls one agent token sent (AuditRecord.Agent).
	Agent string
}
