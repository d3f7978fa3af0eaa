// Package engine compiles a policy once into a decider. Decide is pure: it
// reads the file system only through the Workspace view its caller built,
// never the disk, and it is safe for concurrent use.
//
// The engine has two entry points, one decision procedure behind both:
// Decide(call, session) returns a Result (the decision, the grants it used,
// the session rule it broke) and builds nothing else, for the hot path;
// Explain returns a Trace that embeds the same Result with the call's
// parts, the rules that matched each and the checks that decided, for
// showing a decision and naming what an approval covers. The session layer
// (package session) gives a call its Session state and counts the grants.
package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
)

// Engine is a compiled policy. It is safe for concurrent use.
type Engine struct {
	pol     *policy.Policy
	ws      Workspace // what the engine knows of the file system
	root    string    // workspace root with symlinks resolved
	rootRaw string
	// rootGit: the root had a .git when the policy was compiled: git run
	// there uses it. Without one, git takes the root itself for a
	// repository when it looks like one (HEAD, objects/, refs/), which an
	// agent could write.
	rootGit bool
	// rootGitPaths are gitPaths(root), which gitHere reads for most calls.
	rootGitPaths [4]string
	ownGit       string // the root's .git (ownRepo)
	home         string
	audit        bool
	protected    []pathGlob
	private      []pathGlob // no agent may read (or write) these
	protectedAbs []string
	// protectedASCII: every path of protectedAbs is ASCII.
	protectedASCII bool
	roles          map[string]*roleInfo
	roleList       []*roleInfo // roles in a list when they are few (role)
	// tools holds what a decision needs of each tool name the policy or
	// warden's tables name, read with one lookup (toolFactsOf).
	tools      map[string]toolFacts
	rules      []*rule
	cmdIndex   map[string]*progIndex // command patterns by literal program
	cmdAny     []patRef              // command patterns whose program is a glob
	nonCommand []*rule               // rules without command patterns
	callRules  []*rule               // rules with neither commands nor paths: they meet command parts too
	intents    *intentSet
	history    bool // the policy has sequence rules

	denialsMu sync.RWMutex
	denials   map[[3]string]denialText // by role, tool and kind
	// pastKeys keeps the repeat key of the earlier calls a session's
	// history holds (keyOf), by audit record, so that a decision reading a
	// long history analyses each earlier line once, not once per decision.
	pastKeysMu sync.Mutex
	pastKeys   map[pastRef]string
}

// Session is the per-call state the session layer knows and the call does
// not carry. A nil *Session means a stateless decision.
type Session struct {
	// First reports that this is the session's first tool call; the role's
	// `first` list is checked only then.
	First bool
	// Grants are the standing approvals that apply to this session, already
	// filtered for expiry and remaining uses by the store.
	Grants []warden.Grant
	// History is the session's earlier calls, oldest first (its audit
	// records), for the sequence rules; Now is the time of this call. Both
	// are needed only when the policy's NeedsHistory reports true.
	History []warden.AuditRecord
	Now     time.Time
}

// Policy returns the policy the engine was compiled from.
func (e *Engine) Policy() *policy.Policy { return e.pol }

// Result is what Decide decides: the decision, and what the session layer
// needs of it besides, without the cost of a trace (as cedar-go returns a
// decision and its diagnostics). Explain's Trace embeds it.
type Result struct {
	Decision warden.Decision
	// Grants are the ids of the grants that turned an ask into an allow;
	// the session layer counts them. When a grant decided the call,
	// Decision.Rule is "grant:<id>" of the first.
	Grants []string
	// Violation is the session rule the call broke (FIRST_TOOL,
	// DEPTH_EXCEEDED), also when it only warned; empty otherwise.
	Violation warden.Code
	// Denied are the distinct codes of every deny the call met, in the
	// order met (the decision's code among them): a call that breaks two
	// rules names both, for the project history. Nil when nothing denied.
	// A list of one code is shared by every decision denied for that code
	// alone (its capacity is one, so an append copies it): read it or
	// append to it, never write an element in place.
	Denied []warden.Code
}

// Decide decides one call with the session state s (nil: a stateless
// decision). It builds no trace: Explain is for showing a decision.
func (e *Engine) Decide(call warden.ToolCall, s *Session) Result {
	var r Result
	e.decide(&r, &call, s, nil)
	e.format(&r.Decision, &call)
	return r
}

// format marks a deny or ask for the structured error when the policy's
// model_errors option gives it to the call's host, and gives it the seed
// layout's guide when the policy asks for that layout.
func (e *Engine) format(d *warden.Decision, call *warden.ToolCall) {
	if d.Decision == warden.Allow {
		return
	}
	if e.pol.ModelFormat(call.Host) == "json" {
		d.ModelFormat = "json"
	}
	if e.pol.ModelErrors.Layout == "seed" {
		d.Guide = e.guide(call, d)
	}
}

// Explain decides one call as Decide does and returns the full trace of
// how: the same Result, with the call's parts, the rules that matched
// each and the checks that decided.
func (e *Engine) Explain(call warden.ToolCall, s *Session) *Trace {
	tr := &Trace{}
	e.decide(&tr.Result, &call, s, tr)
	e.format(&tr.Decision, &call)
	if id := tr.Decision.Rule; id != "" {
		for _, r := range e.pol.Rules {
			if r.ID == id {
				tr.Source = r.Source
				break
			}
		}
	}
	return tr
}

// Trace is the record of one decision: the parts of the call, the rules
// that matched each, and the check that decided.
type Trace struct {
	// Result is the decision, as Decide returns it.
	Result
	// Tool is the call's tool name; Kind its kind; Destructive its class.
	Tool        string
	Kind        string
	Destructive bool
	// Dir is the folder the call's relative paths resolve against (its
	// cwd, and a shell tool's working folder), symlinks resolved: the
	// same arguments mean another call in another folder.
	Dir    string
	Parts  []Part
	Checks []Check
	// Source is the plain-language sentence the deciding rule was compiled
	// from (`warden compile`); empty for a rule written by hand.
	Source string
}

// Part is one thing the call would do: a simple command it would run, a
// path it would read or write, or the call as a whole.
type Part struct {
	// Subject is "command", "path" or "call" (as in warden.Grant).
	Subject string
	// Value is the normalised text: the simple command with quoting
	// removed, the path relative to the workspace root (or absolute when
	// outside), or the canonical JSON of the arguments.
	Value string
	// Write reports that the part writes (a path written, edited or
	// deleted, an output redirection).
	Write bool
	// Effect is the part's own decision, Rule the rule that decided it,
	// Matched every rule that matched it.
	Effect  warden.Effect
	Code    warden.Code
	Rule    string
	Matched []string
	// Grant is the id of the grant that allowed the part, if any.
	Grant string
	// Uncounted marks a part shown in a trace that did not count: the call
	// was already settled (a role without the tool, a command a rule
	// denies) when it was reached.
	Uncounted bool
	// Note says why no allow rule could vouch for a command (an option or
	// variable warden does not know, or one that runs another program),
	// or that a builtin needed no rule.
	Note string
	// Input is, for a command that may read its input from elsewhere on
	// its line (a pipe, a redirection, a here-document or here-string),
	// the line as written: sh < setup.sh is not sh < evil.sh, though both
	// run the simple command sh.
	Input string
	// Via names the wrapper or construct a command was found through
	// ("sudo", "bash -c", "$(...)", ...); Op what writes a path (">",
	// "rm", ...).
	Via string
}

// GrantValue is what a grant or an approval made from the part covers:
// its Value, and for a command with Input, the line it is in, as a hash
// (the line may hold a secret); a Value that holds a secret is kept
// redacted, with a hash of it (warden.RedactExact): grants and approvals
// are stored, and nothing warden stores keeps a secret in clear.
func (p Part) GrantValue() string {
	if p.Input == "" {
		return warden.RedactExact(p.Value)
	}
	sum := sha256.Sum256([]byte(p.Input))
	return warden.RedactExact(p.Value) + " (with its input from line " + hex.EncodeToString(sum[:16]) + ")"
}

// Text is the part as a person reads it: its Value, and for a command
// with Input, the line it is in.
func (p Part) Text() string {
	if p.Input == "" {
		return p.Value
	}
	return p.Value + " (in the line: " + p.Input + ")"
}

// Check is one whole-call check (role tools, depth, first tool, intents,
// protected paths, workspace) and what it found.
type Check struct {
	Name   string
	Effect warden.Effect
	Code   warden.Code
	Detail string
}
