// Package warden holds the domain of the warden governance engine: the tool
// call an agent makes, the decision warden returns, the error codes, and the
// interfaces the rest of the system consumes. It imports only the standard
// library.
package warden

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ToolCall is one tool call an agent wants to make (docs/policy.md, "Rules").
type ToolCall struct {
	Tool     string         `json:"tool"`
	Args     map[string]any `json:"args"`
	Session  string         `json:"session,omitempty"`
	Role     string         `json:"role,omitempty"`
	Depth    int            `json:"depth,omitempty"`
	Intent   string         `json:"intent,omitempty"`
	IntentID string         `json:"intent_id,omitempty"`
	Cwd      string         `json:"cwd,omitempty"`
	// Host names the agent host the call came from (claude, codex, gemini,
	// opencode, mcp, http, ...). It is informational: audit records carry it.
	Host string `json:"host,omitempty"`
}

// toolCallFields are the names of a ToolCall's fields in JSON, as its
// tags spell them: the only names ParseToolCall takes.
var toolCallFields = [...]string{"tool", "args", "session", "role", "depth", "intent", "intent_id", "cwd", "host"}

// ToolCallFields returns the names of a ToolCall's fields in JSON, the
// only names ParseToolCall takes.
func ToolCallFields() []string { return slices.Clone(toolCallFields[:]) }

// ParseToolCall decodes one tool call from JSON. It rejects unknown fields,
// a missing tool and a missing args object, so that a typo never silently
// changes what is decided.
//
// Every error it returns has the code CodeBadInput.
func ParseToolCall(data []byte) (ToolCall, error) {
	c, err := parseToolCall(data)
	if err != nil {
		return c, &Error{Code: CodeBadInput, Message: err.Error()}
	}
	return c, nil
}

func parseToolCall(data []byte) (ToolCall, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return ToolCall{}, fmt.Errorf("tool call: not a JSON object: %w", err)
	}
	for k := range raw {
		if !slices.Contains(toolCallFields[:], k) {
			return ToolCall{}, fmt.Errorf("tool call: unknown field %q", k)
		}
	}
	var c ToolCall
	if err := json.Unmarshal(data, &c); err != nil {
		return ToolCall{}, fmt.Errorf("tool call: %w", err)
	}
	if c.Tool == "" {
		return ToolCall{}, errors.New(`tool call: field "tool" is required`)
	}
	if _, ok := raw["args"]; !ok {
		return ToolCall{}, errors.New(`tool call: field "args" is required (use {} for none)`)
	}
	if string(raw["args"]) == "null" {
		return ToolCall{}, errors.New(`tool call: field "args" must be an object, not null`)
	}
	if c.Args == nil {
		c.Args = map[string]any{}
	}
	if c.Depth < 0 {
		return ToolCall{}, errors.New(`tool call: field "depth" must not be negative`)
	}
	return c, nil
}

// Effect is the outcome of a decision: allow, ask or deny.
type Effect string

// The three effects, in increasing severity.
const (
	Allow Effect = "allow"
	Ask   Effect = "ask"
	Deny  Effect = "deny"
)

// Severity orders effects: deny > ask > allow. An unknown effect is the most
// severe, so a corrupted value never turns into an allow.
func (e Effect) Severity() int {
	switch e {
	case Allow:
		return 0
	case Ask:
		return 1
	default:
		return 2
	}
}

// Code is the machine-readable reason for a decision (docs/policy.md, "Decision codes").
type Code string

// The decision codes of docs/policy.md. Their names and meanings are fixed.
const (
	CodeAllowed          Code = "ALLOWED"
	CodeRuleDeny         Code = "RULE_DENY"
	CodeRuleAsk          Code = "RULE_ASK"
	CodeDefault          Code = "DEFAULT"
	CodeProtectedPath    Code = "PROTECTED_PATH"
	CodeOutsideWorkspace Code = "OUTSIDE_WORKSPACE"
	CodeRoleToolDenied   Code = "ROLE_TOOL_DENIED"
	CodeFirstTool        Code = "FIRST_TOOL"
	CodeDepthExceeded    Code = "DEPTH_EXCEEDED"
	CodeMissingIntent    Code = "MISSING_INTENT"
	CodeIntentNotFound   Code = "INTENT_NOT_FOUND"
	CodeScopeViolation   Code = "SCOPE_VIOLATION"
	CodeUnparsable       Code = "UNPARSABLE_COMMAND"
	CodeApprovalRejected Code = "APPROVAL_REJECTED"
	CodeApprovalTimeout  Code = "APPROVAL_TIMEOUT"
	CodePolicyError      Code = "POLICY_ERROR"
	// CodeUnknownTarget: a write, edit or delete call whose files warden
	// cannot identify; it is never allowed by the default or by a rule
	// that does not name the tool.
	CodeUnknownTarget Code = "UNKNOWN_TARGET"
	// CodeHalted: a person halted the session or the project (warden halt).
	CodeHalted Code = "HALTED"
	// CodeBadInput: warden could not read the call it was given (empty
	// or invalid JSON from the host, a call over MaxInput). Not a policy
	// problem.
	CodeBadInput Code = "BAD_INPUT"
	// CodeTimeout: no decision was made within the hook's deadline.
	CodeTimeout Code = "DECISION_TIMEOUT"
	// CodeUnavailable: the warden service (warden serve) that decides
	// for this machine gave no decision: it could not be reached, gave no
	// answer in time, or failed. Retrying may succeed.
	CodeUnavailable Code = "SERVICE_UNAVAILABLE"
	// CodeRefused: the warden service refused to decide, or this machine
	// is not set up to ask it: no agent token, a token it does not know or
	// of the wrong kind, a URL that is not one. A person fixes the setup.
	CodeRefused Code = "SERVICE_REFUSED"
	// CodeReportInvalid: at the end of a turn, the final report or a
	// plugin's metadata the policy's report section requires was missing
	// or invalid (audit records of the pseudo-tool "final_report").
	CodeReportInvalid Code = "REPORT_INVALID"
	// CodeStoreUnavailable: the store (the SQLite file, PostgreSQL) did
	// not answer at decision time: the policy did not fail (StoreError).
	CodeStoreUnavailable Code = "STORE_UNAVAILABLE"
	// CodeRoleUnknown: the call's role is not one the policy defines, and
	// the policy has roles: a misspelt role never loses the restrictions
	// of the right one. The operator's setup, not the model, is at fault.
	CodeRoleUnknown Code = "ROLE_UNKNOWN"
)

// Decision is warden's answer to one tool call (docs/policy.md, "Decision codes"). Every
// deny and ask carries a non-empty Reason and Suggestion.
type Decision struct {
	Decision    Effect   `json:"decision"`
	Code        Code     `json:"code"`
	Rule        string   `json:"rule"`
	Reason      string   `json:"reason"`
	Suggestion  string   `json:"suggestion"`
	Recoverable bool     `json:"recoverable"`
	Warnings    []string `json:"warnings"`
	Matched     []string `json:"matched"`
	// Mode is "audit" when the policy runs in audit mode; then Decision is
	// always allow and Enforced holds what enforce mode would have decided.
	Mode     string  `json:"mode,omitempty"`
	Enforced *Effect `json:"enforced,omitempty"`
	// ModelFormat is "json" when the policy's model_errors option gives
	// the call's host the structured error (ModelError) instead of text;
	// empty means text.
	ModelFormat string `json:"model_format,omitempty"`
	// Sandbox is the confinement of a shell call under a policy with
	// sandbox.shell on or required (confinement.go); nil otherwise.
	Sandbox *Confinement `json:"sandbox,omitempty"`
	// Guide, under the seed layout (policy model_errors.layout: seed), is
	// the role, hierarchy and next steps a deny or ask also tells the
	// model (Text renders them); nil otherwise.
	Guide *Guide `json:"guide,omitempty"`
}

// ModelError is the structured error a model sees for a deny or ask
// ({error, reason, suggestion, recoverable}; docs/policy.md, "What the model reads").
type ModelError struct {
	Error       Code   `json:"error"`
	Reason      string `json:"reason"`
	Suggestion  string `json:"suggestion"`
	Recoverable bool   `json:"recoverable"`
}

// ModelError returns the model-facing subset of the decision, its text
// made terminal-safe (TerminalSafe).
func (d Decision) ModelError() ModelError {
	return ModelError{Error: d.Code, Reason: TerminalSafe(d.Reason), Suggestion: TerminalSafe(d.Suggestion), Recoverable: d.Recoverable}
}

// Text renders the decision as plain model-facing text: no emoji, no box
// drawing, markdown headings at most (docs/policy.md, "What the model reads").
func (d Decision) Text() string {
	if d.Guide != nil && d.Decision != Allow {
		return d.guideText()
	}
	var title string
	switch d.Decision {
	case Allow:
		title = "ALLOWED"
	case Ask:
		title = "APPROVAL REQUIRED"
	default:
		title = "BLOCKED"
	}
	s := "## " + title + ": " + string(d.Code) + "\n\n"
	if d.Reason != "" {
		s += "Reason: " + d.Reason + "\n"
	}
	if d.Rule != "" {
		s += "Rule: " + d.Rule + "\n"
	}
	if d.Suggestion != "" {
		s += "Suggestion: " + d.Suggestion + "\n"
	}
	for _, w := range d.Warnings {
		s += "Warning: " + w + "\n"
	}
	return TerminalSafe(s)
}

// Error is warden's one application error type: a code and a message.
// Edges map the code once (hook JSON, HTTP status, MCP tool error).
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an *Error in err's chain, or POLICY_ERROR.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodePolicyError
}

// StoreError marks err, a failure of the store (it could not be opened,
// read or written), with the code CodeStoreUnavailable, unless err has a
// code already or is the end of the caller's deadline (CodeTimeout): the
// deny then says that the store, not the policy, failed. errors.Is and
// errors.As see err through it. nil stays nil.
func StoreError(err error) error {
	var e *Error
	switch {
	case err == nil || errors.As(err, &e):
		return err
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return &codedError{code: &Error{Code: CodeTimeout, Message: "no decision in time: " + err.Error()}, err: err}
	}
	return &codedError{code: &Error{Code: CodeStoreUnavailable, Message: "the warden store did not answer: " + err.Error()}, err: err}
}

// codedError is an error with a code of its own (StoreError).
type codedError struct {
	code *Error
	err  error
}

func (e *codedError) Error() string   { return e.code.Error() }
func (e *codedError) Unwrap() []error { return []error{e.code, e.err} }

// FailClosed returns the deny decision for an infrastructure failure: a policy
// that does not load, a store that does not answer. warden never turns a
// failure into an allow.
func FailClosed(err error) Decision {
	code := ErrorCode(err)
	suggestion := "Fix the warden policy or store: ask the user to, as warden's own files are closed to tool calls (`warden lint` shows what is wrong). Retrying before that fails the same way."
	switch code {
	case CodeBadInput:
		suggestion = "This is not a policy problem: the call reached warden incomplete or malformed. " +
			"Retry it; if it keeps failing, ask the user to check the host's hook setup (`warden hook HOST` reads the host's hook JSON on stdin)."
	case CodeTimeout:
		suggestion = "Retry the call. If calls keep timing out, ask the user to check the load on this machine and `warden hookd status`."
	case CodeStoreUnavailable:
		suggestion = "Retry the call in a moment: this is not a policy problem. If it keeps failing, ask the user to check that warden's store (the database in .warden/, or the PostgreSQL server of --store) is reachable and has room."
	case CodeUnavailable:
		suggestion = "Retry the call in a moment. If it keeps failing, ask the user to check that the warden service is running and reachable from this machine (its /healthz answers)."
	case CodeRefused:
		suggestion = "Ask the user to check how this machine reaches the warden service: its URL (warden init HOST --serve URL, or WARDEN_SERVE_URL) and its agent token (WARDEN_SERVE_TOKEN, or ~/.config/warden/serve-token; `warden serve token add --kind agent NAME` makes one). Retrying before that fails the same way."
	}
	return Decision{
		Decision: Deny,
		Code:     code,
		// The code is said once, in Code.
		Reason:      "warden could not decide this call: " + strings.Replace(err.Error(), string(code)+": ", "", 1),
		Suggestion:  suggestion,
		Recoverable: code == CodeBadInput || code == CodeTimeout || code == CodeUnavailable || code == CodeStoreUnavailable,
		Warnings:    []string{},
		Matched:     []string{},
	}
}

// MaxInput bounds the input warden reads for one call (a tool call for
// check, a host's hook JSON): 32 MiB.
const MaxInput = 32 << 20

// ReadInput reads one call's input from r, at most MaxInput bytes. Input
// that is empty or longer is an error with the code CodeBadInput, which
// says so: warden never decides on a cut or missing input.
func ReadInput(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, &Error{Code: CodeBadInput, Message: "read the input: " + err.Error()}
	}
	return data, CheckInput(data)
}

// CheckInput reports input that is empty or over MaxInput, with the code
// CodeBadInput.
func CheckInput(data []byte) error {
	if len(data) > MaxInput {
		return &Error{Code: CodeBadInput, Message: fmt.Sprintf("the input is over warden's limit of %d MiB; warden does not decide a call it cannot read whole", MaxInput>>20)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Code: CodeBadInput, Message: "the input is empty: warden expected a JSON object"}
	}
	return nil
}

// Guide is what a deny or an ask tells the model beside its reason under
// the seed layout (policy model_errors.layout: seed): the agent's role, the
// roles' hierarchy and the next steps.
type Guide struct {
	// Role is the agent's role and what it does ("builder: Edits code
	// and runs commands."), or that it has none.
	Role string `json:"role"`
	// Hierarchy is the roles' chain of delegation on one line
	// ("coordinator -> builder"); empty without roles.
	Hierarchy string `json:"hierarchy,omitempty"`
	// NextSteps are what to do now, in order.
	NextSteps []string `json:"next_steps"`
}

// guideText renders a deny or ask in the seed layout: a markdown heading,
// plain labels and a numbered list, no emoji or box drawing.
func (d Decision) guideText() string {
	var title string
	if d.Decision == Ask {
		title = "APPROVAL REQUIRED"
	} else {
		title = "BLOCKED"
	}
	var b strings.Builder
	b.WriteString("## " + title + ": " + string(d.Code) + "\n\n")
	if d.Reason != "" {
		b.WriteString("Reason: " + d.Reason + "\n")
	}
	if d.Rule != "" {
		b.WriteString("Rule: " + d.Rule + "\n")
	}
	b.WriteString("Agent Role: " + d.Guide.Role + "\n")
	if d.Guide.Hierarchy != "" {
		b.WriteString("Hierarchy: " + d.Guide.Hierarchy + "\n")
	}
	if d.Suggestion != "" {
		b.WriteString("Suggestion: " + d.Suggestion + "\n")
	}
	if len(d.Guide.NextSteps) > 0 {
		b.WriteString("Next Steps:\n")
		for i, s := range d.Guide.NextSteps {
			b.WriteString(strconv.Itoa(i+1) + ". " + s + "\n")
		}
	}
	for _, w := range d.Warnings {
		b.WriteString("Warning: " + w + "\n")
	}
	return TerminalSafe(b.String())
}
