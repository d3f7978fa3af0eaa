package session

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/notify"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// approval handles an ask the host cannot prompt for. Approvals belong to
// the project, not to the session that asked: a human's answer reaches the
// next identical call (same role, tool and normalised call; see
// Fingerprint) from any session within the approval's lifetime, since
// headless hosts (claude -p, codex exec, gemini -p) start a new session
// for every run. An answer is delivered once: an approval lets one call
// through (session and always answers also left grants, which the engine
// applied before this), a rejection denies one call with the human's
// message. Without an undelivered answer, the call's pending approval is
// reused or a new one queued, and waited for as opt says. Approvals past
// their lifetime (policy approvals.expires) are dropped first.
func (t *Tracker) approval(ctx context.Context, call *warden.ToolCall, opt Options, res *Result) error {
	now := t.now()
	life := ApprovalLifetime(t.policy())
	if _, err := t.Store.PurgeApprovals(ctx, now.Add(-life), now.Add(-life)); err != nil {
		return err
	}
	// The approval names the call's parts, which only Explain shows.
	parts := t.Engine.Explain(*call, nil)
	fp := Fingerprint(*call, parts)
	if opt.Agent != "" {
		// An agent token's approvals are its own: another agent's
		// identical call neither shares its pending approval nor takes
		// its answer, also from a new session.
		fp = agentFingerprint(fp, opt.Agent)
	}
	existing, err := t.Store.Approvals(ctx, warden.ApprovalFilter{Fingerprint: fp})
	if err != nil {
		return err
	}
	var pending *warden.Approval
	// The newest answer first.
	for i := len(existing) - 1; i >= 0; i-- {
		a := &existing[i]
		if a.Agent != opt.Agent {
			continue
		}
		if a.Status == warden.ApprovalPending {
			pending = a
			continue
		}
		if a.Consumed {
			continue
		}
		ok, err := t.Store.ConsumeApproval(ctx, a.ID)
		if err != nil {
			return err
		}
		if ok {
			a.Consumed = true
			res.Approval = a
			res.Decision = answered(res.Decision, a, call)
			return nil
		}
	}
	if pending == nil {
		// CreateApproval returns the pending approval another process
		// created for the same call meanwhile, if there is one.
		na := newApproval(call, parts, fp)
		na.Agent = opt.Agent
		a, err := t.Store.CreateApproval(ctx, na)
		if err != nil {
			return err
		}
		pending = &a
		res.Notice, res.NoticeErr = t.announce(ctx, a, opt.AnswerAt)
	}
	res.Approval = pending
	if opt.Wait <= 0 {
		res.Decision = waiting(res.Decision, pending, life, opt.AnswerAt)
		return nil
	}
	a, err := t.Wait(ctx, pending.ID, opt.Wait)
	if err != nil {
		return err
	}
	res.Approval = &a
	if a.Status == warden.ApprovalPending {
		res.Decision = timedOut(res.Decision, &a, opt.Wait, opt.AnswerAt)
		return nil
	}
	ok, err := t.Store.ConsumeApproval(ctx, a.ID)
	if err != nil {
		return err
	}
	if !ok {
		// Another process's identical call took this answer. A rejection
		// still holds for this call; an approval let that one through.
		if a.Status == warden.ApprovalRejected {
			res.Decision = rejected(res.Decision, &a)
		} else {
			res.Decision = timedOut(res.Decision, &a, opt.Wait, opt.AnswerAt)
		}
		return nil
	}
	a.Consumed = true
	res.Decision = answered(res.Decision, &a, call)
	return nil
}

// announce tells the people who can answer that the approval a waits, as
// the policy's approvals.notify says (internal/notify): a webhook, a
// desktop notification. It returns the notice's line, for the front end to
// show its human, and why a notice was not sent. The page linked is the
// policy's approvals.notify.page, else answerAt (Options.AnswerAt: the
// page of the warden serve that decides). A notice goes out once per
// approval, from the call that queued it; it never changes the decision.
func (t *Tracker) announce(ctx context.Context, a warden.Approval, answerAt string) (string, error) {
	cfg := t.policy().Approvals.Notify
	page := cfg.Page
	if page == "" {
		page = answerAt
	}
	n := notify.For(a, page)
	hook, err := cfg.WebhookURL()
	if err != nil {
		return n.Line(), err
	}
	// A notice is sent even when the call's own context ends: the approval
	// was queued and waits.
	return n.Line(), notify.Send(context.WithoutCancel(ctx), notify.Config{Webhook: hook, Desktop: cfg.Desktop}, n)
}

// ApprovalLifetime is the lifetime of an approval under a policy
// (approvals.expires, default policy.DefaultApprovalExpiry).
func ApprovalLifetime(p *policy.Policy) time.Duration {
	if p == nil || p.Approvals.Expires <= 0 {
		return policy.DefaultApprovalExpiry
	}
	return p.Approvals.Expires
}

// ApprovalExpiry is when an approval's lifetime ends: for a pending one,
// lifetime after it was asked; for an answered one, lifetime after the
// answer (until then the answer waits for the next identical call).
func ApprovalExpiry(a warden.Approval, lifetime time.Duration) time.Time {
	if a.Status == warden.ApprovalPending || a.DecidedAt.IsZero() {
		return a.CreatedAt.Add(lifetime)
	}
	return a.DecidedAt.Add(lifetime)
}

// answered is the decision a human's answer gives the call it reaches.
func answered(d warden.Decision, a *warden.Approval, call *warden.ToolCall) warden.Decision {
	if a.Status == warden.ApprovalRejected {
		return rejected(d, a)
	}
	return approved(d, a, call)
}

// Wait polls the store until the approval is answered or the timeout runs
// out, and returns it as it then is (still pending on timeout). A store
// error or a cancelled context is an error.
func (t *Tracker) Wait(ctx context.Context, id string, timeout time.Duration) (warden.Approval, error) {
	poll := t.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	for {
		a, err := t.Store.Approval(ctx, id)
		if err != nil || a.Status != warden.ApprovalPending {
			return a, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return a, nil
		}
		timer := time.NewTimer(min(poll, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return a, ctx.Err()
		case <-timer.C:
		}
	}
}

func newApproval(call *warden.ToolCall, tr *engine.Trace, fp string) warden.Approval {
	d := tr.Decision
	return warden.Approval{
		Session: call.Session, Role: call.Role, Host: call.Host, Tool: call.Tool,
		Args: warden.RedactArgs(call.Args), Summary: Summary(*call, tr),
		Code: d.Code, Rule: d.Rule, Reason: warden.RedactString(d.Reason),
		Parts: askParts(tr, call), Fingerprint: fp,
	}
}

// askParts are the parts of the call that asked: what a session or always
// answer grants. Without such parts (an ask from a whole-call check), the
// call as a whole.
func askParts(tr *engine.Trace, call *warden.ToolCall) []warden.GrantPart {
	var out []warden.GrantPart
	seen := map[warden.GrantPart]bool{}
	for _, p := range tr.Parts {
		if p.Effect != warden.Ask || p.Value == "" {
			continue
		}
		gp := warden.GrantPart{Subject: p.Subject, Value: grantValue(p, call.Args)}
		if !seen[gp] {
			seen[gp] = true
			out = append(out, gp)
		}
	}
	if len(out) == 0 {
		for _, p := range tr.Parts {
			if p.Subject == warden.SubjectCall {
				return []warden.GrantPart{{Subject: p.Subject, Value: p.GrantValue()}}
			}
		}
	}
	return out
}

// grantValue is what a grant or an approval made from part p of a call
// with args covers, as the engine matches it: Part.GrantValue, and for a
// command a secret only its line shows kept redacted (warden.RedactPart).
func grantValue(p engine.Part, args map[string]any) string {
	if p.Subject != warden.SubjectCommand {
		return p.GrantValue()
	}
	return warden.RedactPart(p.GrantValue(), warden.CommandLine(args))
}

// Summary is a one-line, redacted description of a call for humans.
func Summary(call warden.ToolCall, tr *engine.Trace) string {
	var vals []string
	if tr != nil {
		for _, p := range tr.Parts {
			if p.Effect == warden.Ask && p.Value != "" {
				vals = append(vals, warden.RedactPart(warden.RedactText(p.Text()), warden.CommandLine(call.Args)))
			}
		}
	}
	if len(vals) == 0 {
		for _, k := range []string{"command", "cmd", "file_path", "path", "filePath", "url"} {
			if v, ok := call.Args[k].(string); ok && v != "" {
				vals = append(vals, v)
				break
			}
		}
	}
	s := call.Tool
	if len(vals) > 0 {
		s += ": " + strings.Join(vals, "; ")
	}
	s = warden.RedactString(s)
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

func approved(d warden.Decision, a *warden.Approval, call *warden.ToolCall) warden.Decision {
	var reason string
	switch {
	case a.Scope == warden.ScopeSession && call != nil && a.Session != "" && a.Session != call.Session:
		reason = "A human approved this call for session " + a.Session + ", the session that asked (approval " + a.ID +
			"). This is another session (headless hosts start a new one for every run), so this one call goes through; " +
			"the same call later in this session needs approval again."
	case a.Scope == warden.ScopeSession:
		reason = "A human approved this call for the rest of this session (approval " + a.ID + ")."
	case a.Scope == warden.ScopeAlways:
		reason = "A human approved this call from now on (approval " + a.ID + ")."
	default:
		reason = "A human approved this call once (approval " + a.ID + "); the same call later needs approval again."
	}
	if a.Message != "" {
		reason += " Their note: " + a.Message
	}
	return warden.Decision{Decision: warden.Allow, Code: warden.CodeAllowed, Rule: "approval:" + a.ID,
		Reason: reason, Recoverable: true, Warnings: nonNil(d.Warnings), Matched: nonNil(d.Matched), Mode: d.Mode,
		Sandbox: d.Sandbox} // what a human released runs confined as the policy says
}

// AnswerCommands is how a human answers a pending approval, as commands
// that run as printed from the project folder.
func AnswerCommands(id string) string {
	return "warden approvals approve " + id + " --once (this call, once), " +
		"warden approvals approve " + id + " --session (the rest of the session that asked), " +
		"warden approvals approve " + id + " --always (this exact call from now on), or " +
		"warden approvals reject " + id + " --message \"why not\" (you get their message)"
}

// askToAnswer is the instruction to have a person answer approval id:
// on the page at at, or else with the commands.
func askToAnswer(id, at string) string {
	if at != "" {
		return "Ask the user to answer approval " + id + " on the warden approvals page, " + at +
			"#approvals (approve it once, for the rest of the session or always, or reject it with a message)"
	}
	return "Ask the user to answer it from the project folder with one of: " + AnswerCommands(id)
}

func waiting(d warden.Decision, a *warden.Approval, life time.Duration, at string) warden.Decision {
	d.Reason = strings.TrimSpace(d.Reason + " Approval " + a.ID + " is waiting for a human (it expires after " +
		FormatDuration(life) + " without an answer).")
	d.Suggestion = strings.TrimSpace(d.Suggestion + " " + askToAnswer(a.ID, at) +
		". Then retry exactly the same call: the answer reaches it, also from a new session.")
	return d
}

// FormatDuration writes a duration as people write it: 24h, 90m, 1h30m, 45s.
func FormatDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func rejected(d warden.Decision, a *warden.Approval) warden.Decision {
	reason := "A human rejected this call (approval " + a.ID + ")."
	if a.Message != "" {
		reason += " Their message: " + a.Message
	}
	return warden.Decision{Decision: warden.Deny, Code: warden.CodeApprovalRejected, Rule: d.Rule, Reason: reason,
		Suggestion:  "Do not retry this call. Follow the human's message, or ask them how to proceed.",
		Recoverable: true, Warnings: nonNil(d.Warnings), Matched: nonNil(d.Matched), Mode: d.Mode}
}

func timedOut(d warden.Decision, a *warden.Approval, wait time.Duration, at string) warden.Decision {
	return warden.Decision{Decision: warden.Deny, Code: warden.CodeApprovalTimeout, Rule: d.Rule,
		Reason: fmt.Sprintf("No human answered approval %s within %s. %s", a.ID, wait, d.Reason),
		Suggestion: askToAnswer(a.ID, at) +
			". Then retry exactly the same call; or choose an action that needs no approval.",
		Recoverable: true, Warnings: nonNil(d.Warnings), Matched: nonNil(d.Matched), Mode: d.Mode}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Answer is a human's answer to a pending approval.
type Answer struct {
	// Scope is warden.ScopeOnce, ScopeSession or ScopeAlways.
	Scope string
	// Pattern widens a session or always grant beyond the call: a command
	// glob ("git push *") or a path glob ("src/**"). Empty grants exactly
	// what the call did.
	Pattern string
	// Expires, when positive, ends the grant after that long; Uses, when
	// positive, after that many calls.
	Expires time.Duration
	Uses    int
	Message string
	By      string
	// Kind, when set, makes the grants for the call's kind (shell, write,
	// ...) rather than its host's tool name: they cover the same call from
	// every host's tool of that kind.
	Kind string
}

// Approve answers a pending approval yes. For the session and always
// scopes it records, in the same transaction, grants exactly as wide as
// the call (one per part that asked, for this tool and role; for a session
// answer, for this session only), or as wide as a.Pattern. It returns the
// approval as stored.
func Approve(ctx context.Context, store warden.ApprovalStore, id string, a Answer, now time.Time) (warden.Approval, error) {
	switch a.Scope {
	case warden.ScopeOnce, warden.ScopeSession, warden.ScopeAlways:
	default:
		return warden.Approval{}, fmt.Errorf("approve %s: scope %q: want once, session or always", id, a.Scope)
	}
	if a.Scope == warden.ScopeOnce && (a.Pattern != "" || a.Expires != 0 || a.Uses != 0) {
		return warden.Approval{}, fmt.Errorf("approve %s: --pattern, --expires and --uses need --session or --always", id)
	}
	if a.Expires < 0 || a.Uses < 0 {
		return warden.Approval{}, fmt.Errorf("approve %s: --expires and --uses must not be negative", id)
	}
	ap, err := store.Approval(ctx, id)
	if err != nil {
		return ap, err
	}
	if ap.Status != warden.ApprovalPending {
		return ap, fmt.Errorf("approval %s is %s already: %w", id, ap.Status, warden.ErrConflict)
	}
	grants, err := grantsFor(ap, a, now)
	if err != nil {
		return ap, err
	}
	return store.ResolveApproval(ctx, id, warden.Resolution{Status: warden.ApprovalApproved, Scope: a.Scope,
		Message: a.Message, DecidedBy: a.By}, grants)
}

func grantsFor(ap warden.Approval, a Answer, now time.Time) ([]warden.Grant, error) {
	if a.Scope == warden.ScopeOnce {
		return nil, nil
	}
	base := warden.Grant{Tool: ap.Tool, Role: ap.Role, UsesLeft: a.Uses, CreatedBy: a.By, CreatedAt: now}
	if a.Kind != "" {
		if !policy.IsKind(a.Kind) {
			return nil, fmt.Errorf("approve %s: %q is not a kind", ap.ID, a.Kind)
		}
		base.Tool = a.Kind
	}
	if a.Scope == warden.ScopeSession {
		if ap.Session == "" {
			return nil, fmt.Errorf("approve %s --session: the call has no session; use --once or --always", ap.ID)
		}
		base.Session = ap.Session
	}
	if a.Expires > 0 {
		base.Expires = now.Add(a.Expires)
	}
	if len(ap.Parts) == 0 {
		return nil, fmt.Errorf("approve %s: the call has no part a grant can cover; use --once", ap.ID)
	}
	var out []warden.Grant
	if a.Pattern != "" {
		// One grant per kind of part, widened by the human's pattern.
		subjects := map[string]string{}
		for _, p := range ap.Parts {
			if _, ok := subjects[p.Subject]; !ok {
				subjects[p.Subject] = p.Value
			}
		}
		keys := make([]string, 0, len(subjects))
		for k := range subjects {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			g := base
			g.Subject, g.Value, g.Pattern = k, subjects[k], a.Pattern
			out = append(out, g)
		}
		return out, nil
	}
	for _, p := range ap.Parts {
		g := base
		g.Subject, g.Value = p.Subject, p.Value
		out = append(out, g)
	}
	return out, nil
}

// Reject answers a pending approval no, with a message the model will see.
func Reject(ctx context.Context, store warden.ApprovalStore, id, message, by string) (warden.Approval, error) {
	if strings.TrimSpace(message) == "" {
		return warden.Approval{}, errors.New("reject " + id + ": a message for the model is required (--message)")
	}
	return store.ResolveApproval(ctx, id, warden.Resolution{Status: warden.ApprovalRejected, Message: message, DecidedBy: by}, nil)
}

// NewGrants makes the grants a person adds by hand (`warden grants add`,
// warden serve): for a command or a path,
// one per part the policy's engine finds in it, normalised exactly as a
// call's parts are (so the grant covers that call and nothing wider); for
// a pattern, one grant of the tool's subject (command for shell tools,
// path for the others).
func NewGrants(pol *policy.Policy, base warden.Grant, command, path, pattern string) ([]warden.Grant, error) {
	if err := pol.ToolName(base.Tool); err != nil {
		return nil, err
	}
	eng, err := engine.Compile(pol, workspace.New())
	if err != nil {
		return nil, err
	}
	kind := base.Tool
	if !policy.IsKind(kind) {
		kind = pol.KindOf(base.Tool)
	}
	shellTool := kind == "shell"
	if pattern != "" {
		if !shellTool && !FileTool(pol, base.Tool) {
			return nil, fmt.Errorf("--pattern: %s has no paths or commands for a pattern to match (kind %s); use --all to allow every call of it, or approve one call's arguments with warden approvals approve ID --always", base.Tool, kind)
		}
		g := base
		g.Subject, g.Pattern = warden.SubjectPath, pattern
		if shellTool {
			g.Subject = warden.SubjectCommand
		}
		return []warden.Grant{g}, nil
	}
	tool := base.Tool
	if policy.IsKind(tool) {
		// A grant for a kind: its parts are found as one of its tools
		// has them.
		tool = map[string]string{"shell": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "delete": "delete_file", "list": "LS"}[kind]
		if tool == "" {
			return nil, fmt.Errorf("%s: a kind without paths or commands takes --all", base.Tool)
		}
	}
	call := warden.ToolCall{Tool: tool, Role: base.Role, Args: map[string]any{"command": command}}
	subject := warden.SubjectCommand
	if path != "" {
		call.Args = map[string]any{"file_path": path}
		subject = warden.SubjectPath
	}
	if command != "" && !shellTool {
		return nil, fmt.Errorf("--command: %s is not a shell tool in this policy (use --path or --pattern)", base.Tool)
	}
	tr := eng.Explain(call, nil)
	var out []warden.Grant
	seen := map[string]bool{}
	for _, p := range tr.Parts {
		v := grantValue(p, call.Args)
		if p.Subject != subject || p.Value == "" || seen[v] {
			continue
		}
		seen[v] = true
		g := base
		g.Subject, g.Value = p.Subject, v
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("found no %s in the call to grant", subject)
	}
	return out, nil
}

// AllGrant is a grant of every call of a tool (warden grants add TOOL
// --all): for a file tool or kind, every path inside the workspace; for a
// tool without paths or commands, every call. A shell tool is refused: its
// every call is every program.
func AllGrant(pol *policy.Policy, base warden.Grant) (warden.Grant, error) {
	if err := pol.ToolName(base.Tool); err != nil {
		return warden.Grant{}, err
	}
	if base.Tool == "shell" || pol.KindOf(base.Tool) == "shell" {
		return warden.Grant{}, fmt.Errorf("--all: a grant of every %s command is every program; grant the commands with --pattern (\"git push origin *\") instead", base.Tool)
	}
	g := base
	if FileTool(pol, base.Tool) {
		g.Subject, g.Pattern = warden.SubjectPath, "**"
	} else {
		g.Subject, g.Pattern = warden.SubjectCall, "*"
	}
	return g, nil
}

// FileTool reports whether a tool's calls name files: a file kind, or a
// host's file tool. A tool of the policy's own (gmail.draft: write) has no
// path arguments warden knows, so a path pattern would match none of its
// calls.
func FileTool(pol *policy.Policy, tool string) bool {
	switch tool {
	case "read", "write", "edit", "delete", "list":
		return true
	}
	if _, own := pol.Tools[tool]; own {
		return false
	}
	kind := pol.KindOf(tool)
	_, builtin := policy.BuiltinKinds[tool]
	return (builtin || strings.HasPrefix(tool, "mcp_")) && (kind == "read" || kind == "write" || kind == "edit" || kind == "delete" || kind == "list")
}
