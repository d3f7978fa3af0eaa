// Package policy loads, validates and lints warden policy files (YAML, or
// JSON) as docs/policy.md defines them. Every error and finding
// names the file, line and column it is about.
package policy

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// Policy is a loaded, validated policy file. Paths in it are absolute.
type Policy struct {
	// File is the absolute path of the policy file; Dir is its folder.
	File string
	Dir  string

	Version   int
	Mode      string // "enforce" (default) or "audit"
	Default   Default
	Workspace Workspace
	// Protected holds gitignore-style globs no role may write, edit or
	// delete. The loader always adds the policy file itself and the store
	// folder (.warden/**).
	Protected []string
	// Private holds gitignore-style globs no agent may read (secrets:
	// .env files, keys, cloud credentials); they are protected from
	// writing too. Patterns starting with "~/" or "/" are absolute.
	Private []string
	// Tools maps extra host tool names to kinds (shell, read, write, ...).
	Tools map[string]string
	Roles map[string]*Role
	// DefaultRole is the role of a call whose session has none
	// (roles.default: NAME); "" leaves such calls without a role.
	DefaultRole string
	Rules       []*Rule
	// Digest is the SHA-256 of the policy file's bytes as parsed: a
	// command allowed under it and run later (warden sandbox
	// --policy-sha256) refuses to run under a policy changed since.
	Digest [32]byte
	// Intents is nil when the policy has no intents section.
	Intents   *Intents
	State     State
	Audit     Audit
	Approvals Approvals
	// Tests are the policy's own test cases (the `tests:` section).
	Tests []*Case
	// Compiled is nil unless `warden compile` wrote rules into the policy.
	Compiled *Compiled
	// ModelErrors says how hosts give a deny or ask to the model.
	ModelErrors ModelErrors
	// Report is nil unless the policy has a report section (see Report).
	Report *Report
	// Sandbox confines allowed shell commands (see Sandbox).
	Sandbox Sandbox
	// Governance says what each delegation depth reads at session start
	// (see Governance).
	Governance Governance
}

// ModelErrors is the `model_errors` option: the format of the text a model
// gets for a deny or ask, for hosts whose tool results are JSON.
type ModelErrors struct {
	// Format is "text" (default) or "json": the structured error
	// {"error", "reason", "suggestion", "recoverable"}.
	Format string
	// Hosts lists the hosts (claude, codex, gemini, opencode, ...) that
	// get Format; empty means every host.
	Hosts []string
	// Layout is "plain" (default) or "seed": a deny or ask also names the
	// agent's role, the roles' hierarchy and numbered next steps, as the
	// seed plans laid them out (docs/policy.md, "What the model reads").
	Layout string
}

// ModelFormat returns the format for a call from host: "json" or "text".
func (p *Policy) ModelFormat(host string) string {
	if p.ModelErrors.Format != "json" {
		return "text"
	}
	if len(p.ModelErrors.Hosts) > 0 && !contains(p.ModelErrors.Hosts, host) {
		return "text"
	}
	return "json"
}

// Compiled records where the policy's compiled rules (those with a Source)
// came from: the plain-language rules file and two hashes `warden compile
// --check` verifies.
type Compiled struct {
	// From is the plain-language rules file, relative to the policy's
	// folder as written (absolute here).
	From string
	// Sources is "sha256:<hex>" of the rule sentences; Rules is
	// "sha256:<hex>" of the compiled rules and their tests.
	Sources string
	Rules   string
	// Model names the model that compiled them (informational).
	Model string
	Pos   Pos
}

// Default is the decision for parts no rule matches, per tool class.
type Default struct {
	Safe        warden.Effect
	Destructive warden.Effect
	// Confined is the decision for a shell command warden cannot fully
	// judge (no rule covers it, or its effects cannot be read from the
	// line) when it runs confined: sandbox.shell on or required. Empty:
	// such a command takes Destructive (docs/policy.md, "Unknown but
	// confined").
	Confined warden.Effect
	Pos      Pos
}

// Workspace is the folder agents work in.
type Workspace struct {
	Root    string        // absolute
	Outside warden.Effect // decision for paths outside Root (default deny)
}

// Role is an agent role: which tools it may use, what it must do first, how
// deep it may delegate, and the governance text it is given.
type Role struct {
	Name        string
	Description string
	// Tools lists tool names or kinds the role may use; nil means any tool.
	Tools []string
	// First lists tools or kinds the first tool call of a session must use.
	First []string
	// FirstEnforce is "warn" (default) or "deny".
	FirstEnforce string
	// MaxDepth is the delegation depth limit: a delegate call at depth >=
	// MaxDepth is denied. Zero means no limit.
	MaxDepth int
	// Delegates names the roles this role hands work to (the hierarchy the
	// governance text shows, and where a denied tool's work should go).
	Delegates    []string
	delegatesPos Pos
	// Prompt overrides the session-start governance text; Reminder the
	// post-compaction reminder. Both are Go text/template sources.
	Prompt   string
	Reminder string
	Pos      Pos
}

// Rule is one policy rule. Empty matcher fields match everything.
type Rule struct {
	ID     string
	Effect string // allow | ask | deny | warn
	// Tool holds names, kinds, globs (mcp__github__*) or /regex/.
	Tool    []string
	Command []string
	Path    []string
	// Args maps a top-level argument name to a glob on its string value.
	Args       map[string]string
	Intent     string // regex on the call's intent text
	Roles      []string
	Message    string
	Suggestion string
	// After, Repeat and Rate make the rule depend on the session's
	// history (sequence rules): see docs/policy.md, "Sequence rules".
	After  *After
	Repeat *Window
	Rate   *Window
	// Source is the plain-language sentence the rule was compiled from
	// (`warden compile`); empty for rules written by hand.
	Source string
	Pos    Pos
	// Field positions, for errors about one matcher.
	FieldPos map[string]Pos
}

// After names an earlier call of the session a call needs: a deny or ask
// rule with After applies when no such call came first; an allow or warn
// rule with After allows only when one did.
type After struct {
	Tool    []string // names or kinds
	Command []string // command patterns
	Path    []string // path globs of the earlier call
	// SamePath: the earlier call read or wrote the path this call is about.
	SamePath bool
	// OK: the earlier call must have succeeded, as the host's post-tool
	// event reported it; a call whose outcome is unknown does not count.
	OK bool
	// Since: only earlier calls after the last call matching Since count
	// (a test run since the last edit).
	Since *After
	Pos   Pos
}

// Window is a count of calls within a time window: Repeat counts the same
// normalised call, Rate every call of the session. Failures (Repeat only)
// counts the same call's failed runs in a row instead of Count.
type Window struct {
	Count    int
	Within   time.Duration
	Failures int
	Pos      Pos
}

// Intents configures intent-scoped writes (docs/policy.md, "Intents").
type Intents struct {
	// File is the absolute path of the active intents file
	// (.orchestration/active_intents.yaml shape).
	File string
	// Require lists the kinds that need an active intent.
	Require []string
	// OutOfScope is ask (default) or deny.
	OutOfScope warden.Effect
	Pos        Pos
}

// State holds the project-state retention limits (docs/policy.md, top level `state`).
type State struct {
	AnchorsMax        int           // default 20
	AnchorDemoteAfter time.Duration // default 48h
	HistoryMax        int           // default 50
	SessionMaxAge     time.Duration // default 168h
}

// Audit configures the audit trail.
type Audit struct {
	// Retention is how long audit records are kept; zero keeps them forever.
	Retention time.Duration
}

// Approvals configures warden's own approval queue.
type Approvals struct {
	// Timeout is how long a caller waits for a human; default 5m.
	Timeout time.Duration
	// Expires is an approval's lifetime: a pending approval no human
	// answered within it is dropped, and an answer reaches the next
	// identical call only within it after it was given. Default
	// DefaultApprovalExpiry.
	Expires time.Duration
	// Notify is who is told that an approval waits (approvals.notify).
	Notify Notify
}

// Notify says where warden tells people that an approval waits
// (approvals.notify; docs/policy.md).
type Notify struct {
	// Webhook is an http(s) URL, or env:NAME for the URL in the variable
	// NAME (a webhook's address is a secret: keep it out of the policy
	// file). "" posts nothing.
	Webhook string
	// Desktop shows a desktop notification where one is available;
	// default true.
	Desktop bool
	// Page is the approvals page's address for the notices' link
	// (warden serve's, http(s)); "" links none.
	Page string
}

// WebhookURL is the webhook's address: Webhook, or the value of its env:
// variable. An env: variable that is unset or empty is an error that names
// it.
func (n Notify) WebhookURL() (string, error) {
	name, ok := strings.CutPrefix(n.Webhook, "env:")
	if !ok {
		return n.Webhook, nil
	}
	v := os.Getenv(name)
	if v == "" {
		return "", fmt.Errorf("approvals.notify.webhook: the variable %s is not set", name)
	}
	return v, nil
}

// DefaultApprovalExpiry is the lifetime of an approval when the policy
// sets no approvals.expires.
const DefaultApprovalExpiry = 24 * time.Hour

// Case is one policy test case: a call and its expected decision.
type Case struct {
	Name   string
	Call   warden.ToolCall
	Expect warden.Effect
	Code   warden.Code // optional
	Rule   string      // optional; "-" means no rule decided
	// History is the calls the case's session made before it, oldest
	// first, for sequence rules.
	History []warden.ToolCall
	// Outcomes are the History calls' outcomes (warden.OutcomeOK,
	// OutcomeFail, or "" unknown), one per call.
	Outcomes []string
	// Source is the plain-language sentence a compiled case tests.
	Source string
	Pos    Pos
}

// Pos is a position in a policy file.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	switch {
	case p.File == "":
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	case p.Line == 0:
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}
