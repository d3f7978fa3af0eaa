package engine

import (
	"slices"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/shell"
)

// item is a candidate outcome: a whole-call check or a part's decision.
// Its text is formatted only if it decides.
type item struct {
	set    bool
	effect warden.Effect
	code   warden.Code
	rule   *rule
	// subject is what the item is about (a path, a command, a tool), extra
	// a detail for the message; note why an allow rule could not apply.
	subject, extra, note string
}

// prio orders codes of equal severity: the more specific reason wins. It
// is a switch, not a map: it runs for every part, and hashing the code
// cost more than the rest of the comparison.
func prio(c warden.Code) int {
	switch c {
	case warden.CodeBadInput, warden.CodePolicyError:
		return 0
	case warden.CodeProtectedPath:
		return 1
	case warden.CodeRoleToolDenied, warden.CodeRoleUnknown:
		return 2
	case warden.CodeDepthExceeded:
		return 3
	case warden.CodeFirstTool:
		return 4
	case warden.CodeMissingIntent:
		return 5
	case warden.CodeIntentNotFound:
		return 6
	case warden.CodeRuleDeny, warden.CodeRuleAsk:
		return 7
	case warden.CodeOutsideWorkspace:
		return 8
	case warden.CodeScopeViolation:
		return 9
	case warden.CodeUnparsable, warden.CodeUnknownTarget:
		return 10
	case warden.CodeDefault:
		return 11
	case warden.CodeAllowed:
		return 12
	}
	return 0
}

// ruleText reports that the item's reason is its rule's message.
func (a item) ruleText() bool {
	return a.rule != nil && a.rule.message != "" && (a.code == warden.CodeRuleDeny || a.code == warden.CodeRuleAsk)
}

func (a item) beats(b item) bool {
	if !b.set {
		return true
	}
	if sa, sb := a.effect.Severity(), b.effect.Severity(); sa != sb {
		return sa > sb
	}
	pa, pb := prio(a.code), prio(b.code)
	if pa != pb {
		return pa < pb
	}
	if a.rule != nil && b.rule != nil {
		return a.rule.idx < b.rule.idx
	}
	return false
}

// state is the working state of one decision. It lives on the stack.
type state struct {
	e           *Engine
	call        warden.ToolCall
	s           *Session
	tr          *Trace
	kind        string
	destructive bool
	search      bool // the tool is a search tool (searchTools)
	// toolRoles are the roles that may use the tool, when toolRolesKnown
	// (toolFacts.roles).
	toolRoles      uint64
	toolRolesKnown bool
	role           *roleInfo

	best      item
	allByRule bool  // every part was allowed by a rule or grant
	allowRule *rule // the first rule that allowed a part
	warnings  []string

	// The rules that matched some part, each once: the first eight in
	// matched (no allocation, and state stays on the stack), any more in
	// matchedMore.
	matched     [8]*rule
	nMatched    int
	matchedMore []*rule
	grants      []string
	// own: a part writes warden's own files (the policy, the store, the
	// intents file), denied in every mode.
	own bool
	// confined: a part was allowed by default.confined (confined.go).
	confined bool
	// ignoresWritten: the shell line writes a .gitignore, or a path
	// computed at run time, so what git leaves out when the line runs
	// cannot be read now (gitIgnore).
	ignoresWritten bool
	// violation is the session rule a call broke (FIRST_TOOL,
	// DEPTH_EXCEEDED), also when it only warned.
	violation warden.Code
	// past is the session's history, read once by the sequence rules;
	// seqShown the rules whose history explain already shows.
	past     []past
	seqShown []*rule
	key      string         // the call's normalised form, for repeat
	keyArgs  map[string]any // its arguments, redacted and cut
	// dir is the call's working folder (Engine.cwd), once known.
	dir    string
	dirSet bool
	// keys is what the argument names hold, once keysRead (argKeys).
	keys     argKeys
	keysRead bool
	// command is the call's one argument, named command, when scanArgs
	// found it so (shellParts reads it without a second lookup).
	command    any
	hasCommand bool
	// uncalled are the functions a shell line defines and does not
	// call; fnDenied the one whose body gave fnItem, the denial that
	// settled the call (funcs.go).
	uncalled map[string]bool
	fnDenied string
	fnItem   item
	// denied are the distinct codes of the denies offered (Result.Denied).
	denied []warden.Code
}

// cwd is the call's working folder (Engine.cwd), worked out once.
func (st *state) cwd() string {
	if !st.dirSet {
		st.dir, st.dirSet = st.e.cwdKeys(&st.call, st.kind, st.argKeys().workdir), true
	}
	return st.dir
}

func (st *state) offer(it item) {
	it.set = true
	if it.effect == warden.Deny && !slices.Contains(st.denied, it.code) {
		if st.denied == nil {
			st.denied = deniedOne(it.code)
		} else {
			st.denied = append(st.denied, it.code)
		}
	}
	if it.beats(st.best) {
		st.best = it
	}
}

// deniedOnes are the one-code lists of Result.Denied for the codes a
// deny has: a call denied for one reason shares the list, where it
// allocated one each decision. Their capacity is one, so that an append
// (a second code, a caller's) copies, never writes, them.
var deniedOnes = func() [][]warden.Code {
	codes := []warden.Code{warden.CodeRuleDeny, warden.CodeProtectedPath, warden.CodeRoleToolDenied,
		warden.CodeRoleUnknown, warden.CodeOutsideWorkspace, warden.CodeUnparsable, warden.CodeBadInput,
		warden.CodeFirstTool, warden.CodeDepthExceeded, warden.CodeMissingIntent, warden.CodeIntentNotFound,
		warden.CodeScopeViolation, warden.CodeDefault, warden.CodePolicyError, warden.CodeUnknownTarget}
	out := make([][]warden.Code, len(codes))
	for i, c := range codes {
		out[i] = []warden.Code{c}[:1:1]
	}
	return out
}()

// deniedOne returns the list of the one code c.
func deniedOne(c warden.Code) []warden.Code {
	for _, l := range deniedOnes {
		if l[0] == c {
			return l
		}
	}
	return []warden.Code{c}
}

func (st *state) check(name string, it item) {
	st.offer(it)
	if st.tr != nil {
		st.tr.Checks = append(st.tr.Checks, Check{Name: name, Effect: it.effect, Code: it.code, Detail: st.e.reason(st, it)})
	}
}

func (st *state) markMatched(r *rule) {
	for i := 0; i < st.nMatched && i < len(st.matched); i++ {
		if st.matched[i] == r {
			return
		}
	}
	for _, m := range st.matchedMore {
		if m == r {
			return
		}
	}
	if st.nMatched < len(st.matched) {
		st.matched[st.nMatched] = r
	} else {
		st.matchedMore = append(st.matchedMore, r)
	}
	st.nMatched++
}

var noStrings = []string{}

// decide is the one decision procedure behind Decide and Explain: it
// sets *r, which must be zero. tr is nil on the hot path. (It sets *r
// rather than returning a Result, and finish sets r.Decision: each
// return of the large struct copied it.)
func (e *Engine) decide(r *Result, call *warden.ToolCall, s *Session, tr *Trace) {
	// Field by field: a composite literal of the large state is built in
	// a temporary from a template and copied, three passes over it.
	var st state
	st.e, st.call, st.s, st.tr, st.allByRule = e, *call, s, tr, true
	if st.call.Role == "" {
		// A session without a role follows the policy's default role
		// (roles.default), its tool list and first tool included.
		st.call.Role = e.pol.DefaultRole
	}
	tf := e.toolFactsOf(call.Tool)
	st.kind, st.destructive, st.search = tf.kind, !tf.safe, tf.search
	st.toolRoles, st.toolRolesKnown = tf.roles, tf.rolesKnown
	if tr != nil {
		tr.Tool, tr.Kind, tr.Destructive = call.Tool, st.kind, st.destructive
		tr.Dir = e.evalPath(e.cwd(call))
	}
	e.checkRole(&st)
	// A role that may not use the tool at all decides the call: its parts
	// are not evaluated (no rule can make the call allowed).
	if st.best.code != warden.CodeRoleToolDenied && st.best.code != warden.CodeRoleUnknown {
		e.parts(&st)
	} else if tr != nil {
		tr.Checks = append(tr.Checks, Check{Name: "parts", Effect: warden.Deny, Code: st.best.code, Detail: "the role may not use this tool; its parts are shown but do not count"})
		e.traceOnly(&st, func() { e.parts(&st) })
	}
	e.finish(&r.Decision, &st)
	r.Grants, r.Violation, r.Denied = st.grants, st.violation, st.denied
}

// toolFacts is what a decision needs of a tool's name: its kind under
// the policy, whether the kind is safe (policy.SafeKinds), whether the
// tool is a search tool (searchTools).
type toolFacts struct {
	kind         string
	safe, search bool
	// roles has the bit (roleInfo.bit) of each role whose tool list lets
	// it use the tool, when rolesKnown (the names known at compile).
	roles      uint64
	rolesKnown bool
}

// toolFactsOf returns the facts of tool: kept at compile for the names the
// policy and warden's tables know, worked out for any other.
func (e *Engine) toolFactsOf(tool string) toolFacts {
	if tf, ok := e.tools[tool]; ok {
		return tf
	}
	return toolFactsFor(e.pol, tool)
}

func toolFactsFor(p *policy.Policy, tool string) toolFacts {
	kind := p.KindOf(tool)
	return toolFacts{kind: kind, safe: policy.SafeKinds[kind], search: searchTools[tool]}
}

// role returns the role named name: with a compare of each name when the
// policy has a few roles (most have two to five), a map lookup otherwise.
func (e *Engine) role(name string) (*roleInfo, bool) {
	if e.roleList == nil {
		r, ok := e.roles[name]
		return r, ok
	}
	for _, r := range e.roleList {
		if r.Name == name {
			return r, true
		}
	}
	return nil, false
}

// checkRole applies the role's tool list, first-tool rule and depth limit.
func (e *Engine) checkRole(st *state) {
	c := &st.call
	if c.Role == "" {
		return
	}
	r, ok := e.role(c.Role)
	if !ok {
		if len(e.roles) > 0 {
			// A policy with roles denies a role it does not define: a
			// misspelt or look-alike role name never loses the
			// restrictions the right one has.
			st.check("role-tools", item{effect: warden.Deny, code: warden.CodeRoleUnknown, subject: c.Role})
		}
		// A policy without roles has no role restrictions to lose: the
		// call is decided as it would be without a role, and the model is
		// not told of the operator's setting (the hook tells the operator,
		// as do init and doctor).
		return
	}
	st.role = r
	if r.Tools != nil && !st.mayUse(r) {
		st.check("role-tools", item{effect: warden.Deny, code: warden.CodeRoleToolDenied, subject: c.Tool})
	} else if st.tr != nil && r.Tools != nil {
		st.tr.Checks = append(st.tr.Checks, Check{Name: "role-tools", Effect: warden.Allow, Code: warden.CodeAllowed, Detail: "role " + c.Role + " may use " + c.Tool})
	}
	if st.kind == "delegate" && r.MaxDepth > 0 && c.Depth >= r.MaxDepth {
		st.check("depth", item{effect: warden.Deny, code: warden.CodeDepthExceeded, subject: c.Role})
		st.violation = warden.CodeDepthExceeded
	}
	if st.s != nil && st.s.First && len(r.first) > 0 && !anyTool(r.first, c.Tool, st.kind) {
		if r.FirstEnforce == "deny" {
			st.check("first-tool", item{effect: warden.Deny, code: warden.CodeFirstTool, subject: c.Tool})
			st.violation = warden.CodeFirstTool
		} else {
			st.warnings = append(st.warnings, e.reason(st, item{code: warden.CodeFirstTool, subject: c.Tool})+" "+e.suggestion(st, item{code: warden.CodeFirstTool}))
			st.violation = warden.CodeFirstTool
			if st.tr != nil {
				st.tr.Checks = append(st.tr.Checks, Check{Name: "first-tool", Effect: warden.Allow, Code: warden.CodeFirstTool, Detail: "warning only (first_enforce: warn)"})
			}
		}
	}
}

// mayUse reports whether role r's tool list lets it use the call's tool.
func (st *state) mayUse(r *roleInfo) bool {
	if st.toolRolesKnown && r.bit != 0 {
		return st.toolRoles&r.bit != 0
	}
	return anyTool(r.tools, st.call.Tool, st.kind)
}

func anyTool(ms []toolMatcher, tool, kind string) bool {
	for i := range ms {
		if ms[i].match(tool, kind) {
			return true
		}
	}
	return false
}

// part is one thing a call does.
type part struct {
	subject string // warden.SubjectCommand, SubjectPath or SubjectCall
	cmd     int    // index into the analysis for commands
	an      *shell.Analysis
	// paths
	raw      string // as given
	clean    string // absolute and clean, symlinks not resolved
	abs, rel string
	inside   bool
	write    bool
	vkind    string // virtual kind of a shell write: "write" or "delete"
	op       string // what writes the path (">", "rm", ...)
	dynamic  bool   // computed: can never be allowed by a rule
	// computed: a command warden cannot read all of (shell.Command.Risk):
	// no rule and no default allow it, as a dynamic one; a grant of its
	// exact text still may.
	computed bool
	destr    bool // class for the default
	// unknownTarget: a write, edit or delete call with no path warden can
	// read.
	unknownTarget bool
}

// evalPart decides one part and offers the result. Its steps are the
// precedence of one part in docs/policy.md ("Parts and precedence"); the
// checks of the call as a whole (role tools, depth, first tool) ran
// before, in checkRole, and the most severe result over all parts and
// checks is the decision (finish).
func (e *Engine) evalPart(st *state, p *part) {
	// The cheap conditions of each step are tested here, so that a part
	// pays only for the steps that can apply to it.
	path := p.subject == warden.SubjectPath && !p.dynamic
	m := e.matchRules(st, p)
	var res item
	if path {
		res = e.pathCheck(st, p, &m)
	}
	if res.code == "" {
		res = e.ruleOrDefault(p, &m)
	}
	if p.unknownTarget && res.effect == warden.Allow {
		unknownTarget(st, &res)
	}
	if path && (p.vkind == "delete" || st.kind == "delete" && p.write) && res.effect != warden.Deny {
		e.folderCheck(st, p)
	}
	m.raise(&res)
	// The subject text is made only for an item whose reason may show it:
	// an ask or deny that is now the call's most severe, unless its rule's
	// own message is the reason.
	if st.tr != nil || res.effect != warden.Allow && res.beats(st.best) && !res.ruleText() {
		res.subject = p.display()
	}
	if res.effect != warden.Deny && p.subject == warden.SubjectPath && p.write {
		e.intentScope(st, p, &res)
	}
	grant := ""
	if res.effect == warden.Ask && !p.dynamic && st.s != nil && len(st.s.Grants) > 0 {
		grant = e.applyGrant(st, p, &res)
	}
	st.noteAllow(res, grant)
	res.set = true
	st.offer(res)
	if st.tr != nil {
		e.tracePart(st, p, res, grant)
	}
}

// matches are the rules that match a part: the first (in file order) of
// each effect; an allow includes the warn rules.
type matches struct {
	deny, ask, allow *rule
}

// matchRules finds the rules that match p (step 2 of docs/policy.md), through the
// index of command rules by program and first operand, and adds the
// messages of the warn rules among them to the call's warnings.
func (e *Engine) matchRules(st *state, p *part) matches {
	var m matches
	var warnRules []*rule
	try := func(r *rule, pat *shell.Pattern) {
		if !e.ruleMatchesPat(st, r, p, pat) {
			return
		}
		st.markMatched(r)
		switch {
		case r.effect == warden.Deny:
			if m.deny == nil || r.idx < m.deny.idx {
				m.deny = r
			}
		case r.effect == warden.Ask:
			if m.ask == nil || r.idx < m.ask.idx {
				m.ask = r
			}
		default:
			// Outside the workspace only an allow that names the path
			// counts.
			if p.subject == warden.SubjectPath && !p.inside && !r.hasPath {
				return
			}
			if m.allow == nil || r.idx < m.allow.idx {
				m.allow = r
			}
			if r.warn {
				warnRules = append(warnRules, r)
			}
		}
	}
	if p.subject == warden.SubjectCommand {
		c := &p.an.Commands[p.cmd]
		if pi := e.cmdIndex[c.Prog]; pi != nil {
			op, dyn := c.FirstOperand()
			refs := pi.any
			if dyn {
				refs = pi.all
			} else {
				for _, ref := range pi.byOp[op] {
					try(ref.r, ref.p)
				}
			}
			for _, ref := range refs {
				try(ref.r, ref.p)
			}
		}
		for _, ref := range e.cmdAny {
			try(ref.r, ref.p)
		}
	}
	rest := e.nonCommand
	if p.subject == warden.SubjectCommand {
		rest = e.callRules // a rule with paths never matches a command
	}
	for _, r := range rest {
		try(r, nil)
	}
	for _, r := range warnRules {
		st.warnings = append(st.warnings, r.message)
	}
	return m
}

// pathCheck is step 3, for a path warden can read: a private path (read
// or written), a protected path written, a path outside the workspace
// that no allow rule names. These come before the rules: an allow rule
// cannot lift them.
func (e *Engine) pathCheck(st *state, p *part, m *matches) item {
	switch {
	case e.isPrivate(p):
		res := item{effect: warden.Deny, code: warden.CodeProtectedPath, extra: "read"}
		if p.write {
			res.extra = ""
		}
		return res
	case p.write && e.isProtected(p):
		if e.isOwn(p) {
			st.own = true
		}
		return item{effect: warden.Deny, code: warden.CodeProtectedPath}
	case !p.inside && e.pol.Workspace.Outside != warden.Allow && m.allow == nil:
		return item{effect: e.pol.Workspace.Outside, code: warden.CodeOutsideWorkspace}
	}
	return item{}
}

// ruleOrDefault is step 4, for a part no path check decided: a deny rule,
// then an ask rule, then a part warden cannot read (UNPARSABLE_COMMAND),
// then an allow or warn rule, then a builtin without side effects, then
// the default of the part's class.
func (e *Engine) ruleOrDefault(p *part, m *matches) item {
	switch {
	case m.deny != nil:
		return item{effect: warden.Deny, code: warden.CodeRuleDeny, rule: m.deny}
	case m.ask != nil:
		return item{effect: warden.Ask, code: warden.CodeRuleAsk, rule: m.ask}
	case p.dynamic || p.computed:
		res := item{effect: warden.Ask, code: warden.CodeUnparsable}
		if p.subject == warden.SubjectCommand {
			res.note = p.an.Commands[p.cmd].Risk
			if c := &p.an.Commands[p.cmd]; c.Dynamic && describedWrite(shell.Display(c.Prog)) {
				// A computed command the analysis describes: (the
				// text eval runs, partly computed at run time).
				res.extra = strings.TrimSuffix(strings.TrimPrefix(shell.Display(c.Prog), "("), ")")
			}
		}
		if d := e.defaultFor(p); d == warden.Deny {
			res.effect = warden.Deny
		} else if p.subject == warden.SubjectCommand && !p.dynamic {
			// What a known program does that warden cannot read runs
			// confined where the policy says so (default.confined): the
			// sandbox bounds it. A computed program ($X) keeps asking:
			// nothing is known of what it is, and the sandbox leaves the
			// workspace writable (a delete there is not bounded).
			conf := item{effect: res.effect, code: warden.CodeDefault, note: res.note}
			if e.confinedDefault(p, &conf); conf.extra == "confined" {
				res.effect, res.code, res.extra = conf.effect, warden.CodeDefault, "confined"
			}
		}
		return res
	case m.allow != nil:
		return item{effect: warden.Allow, code: warden.CodeAllowed, rule: m.allow}
	case p.subject == warden.SubjectCommand && p.an.Commands[p.cmd].Free:
		// A builtin that changes nothing outside the shell (cd, true,
		// test, read, exit): no rule is needed.
		return item{effect: warden.Allow, code: warden.CodeAllowed, extra: "builtin"}
	}
	res := item{effect: e.defaultFor(p), code: warden.CodeDefault, extra: e.classOf(p)}
	if p.subject == warden.SubjectCommand {
		res.note = p.an.Commands[p.cmd].Risk
	}
	e.confinedDefault(p, &res)
	return res
}

// unknownTarget is step 5, for an allowed write whose files are unknown:
// only a rule that names its tool allows it (else UNKNOWN_TARGET).
func unknownTarget(st *state, res *item) {
	if res.rule == nil || !namesTool(res.rule, st.call.Tool) {
		*res = item{effect: warden.Ask, code: warden.CodeUnknownTarget, subject: st.call.Tool}
	}
}

// raise is the end of step 5 (after a folder removed or moved away is
// checked for what is inside it): a deny or ask rule still raises a path
// check's severity.
func (m *matches) raise(res *item) {
	if res.code != warden.CodeOutsideWorkspace && res.code != warden.CodeProtectedPath {
		return
	}
	if m.deny != nil && res.effect != warden.Deny {
		*res = item{effect: warden.Deny, code: warden.CodeRuleDeny, rule: m.deny}
	} else if m.ask != nil && res.effect == warden.Allow {
		*res = item{effect: warden.Ask, code: warden.CodeRuleAsk, rule: m.ask}
	}
}

// intentScope is step 6, for a path written and not denied: a write
// outside the session's intent scope (MISSING_INTENT, INTENT_NOT_FOUND,
// SCOPE_VIOLATION) when that is more severe.
func (e *Engine) intentScope(st *state, p *part, res *item) {
	if st.needsIntent(p) {
		if sc := e.scope(st, p); sc.set && sc.beats(*res) {
			*res = sc
		}
	}
}

// applyGrant is step 7, for an ask the session has grants for: a grant
// turns it into an allow for exactly what it covers. It returns the grant
// used, if any.
func (e *Engine) applyGrant(st *state, p *part, res *item) string {
	g := e.grantFor(st, p)
	if g != "" {
		st.grants = append(st.grants, g)
		*res = item{effect: warden.Allow, code: warden.CodeAllowed, subject: "grant:" + g}
	}
	return g
}

// noteAllow records what an allowed part was allowed by: whether every
// part had a rule, a grant or a builtin, and the first allow rule.
func (st *state) noteAllow(res item, grant string) {
	if res.effect != warden.Allow {
		return
	}
	if res.extra == "confined" && grant == "" {
		st.confined = true
	}
	if res.rule == nil && grant == "" && res.extra != "builtin" {
		st.allByRule = false
	}
	if res.rule != nil && (st.allowRule == nil || res.rule.idx < st.allowRule.idx) {
		st.allowRule = res.rule
	}
}

// tracePart adds the part and every rule that matches it to the trace
// (explain only).
func (e *Engine) tracePart(st *state, p *part, res item, grant string) {
	tp := Part{Subject: p.subject, Value: e.partValue(st, p), Write: p.write, Effect: res.effect, Code: res.code, Grant: grant}
	if p.subject == warden.SubjectCommand {
		c := &p.an.Commands[p.cmd]
		tp.Note, tp.Via = c.Risk, c.Via
		tp.Input = inputLine(&st.call, p.an, p.cmd)
		if c.Free && res.rule == nil && res.effect == warden.Allow {
			tp.Note = "a builtin without side effects, or a shell or wrapper that only runs the command judged on its own: no rule is needed"
		} else if !p.destr && res.code == warden.CodeDefault {
			tp.Note = "kind safe: every word is one warden's tables know to only read and print"
		}
	} else {
		tp.Via = p.op
	}
	if res.rule != nil {
		tp.Rule = res.rule.id
	}
	for _, r := range e.rules {
		if e.ruleMatchesQuiet(st, r, p) {
			tp.Matched = append(tp.Matched, r.id)
		}
	}
	st.tr.Parts = append(st.tr.Parts, tp)
}

// namesTool reports whether a rule names a tool by its name (not by its
// kind): such a rule vouches for the tool's calls as a whole.
func namesTool(r *rule, tool string) bool {
	for _, m := range r.tools {
		if m.name == tool || m.glob != "" && globText(m.glob, tool) || m.re != nil && m.re.MatchString(tool) {
			return true
		}
	}
	return false
}

// ruleMatchesQuiet is ruleMatches for the trace (it records nothing).
func (e *Engine) ruleMatchesQuiet(st *state, r *rule, p *part) bool { return e.ruleMatches(st, r, p) }

func (e *Engine) defaultFor(p *part) warden.Effect {
	if p.destr {
		return e.pol.Default.Destructive
	}
	return e.pol.Default.Safe
}

func (e *Engine) classOf(p *part) string {
	if p.destr {
		return "destructive"
	}
	return "safe"
}

// ruleMatches reports whether rule r matches part p of the call, trying
// every command pattern of the rule.
func (e *Engine) ruleMatches(st *state, r *rule, p *part) bool {
	if len(r.commands) == 0 {
		return e.ruleMatchesPat(st, r, p, nil)
	}
	for i := range r.commands {
		if e.ruleMatchesPat(st, r, p, &r.commands[i]) {
			return true
		}
	}
	return false
}

// ruleMatchesPat reports whether rule r matches part p, with pat the one
// command pattern to try (nil for rules without command patterns).
func (e *Engine) ruleMatchesPat(st *state, r *rule, p *part, pat *shell.Pattern) bool {
	c := &st.call
	if len(r.tools) > 0 {
		ok := false
		for i := range r.tools {
			if r.tools[i].match(c.Tool, st.kind) || p.vkind != "" && r.tools[i].kind == p.vkind {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if !policy.RolesMatch(r.roles, c.Role) {
		return false
	}
	if r.intent != nil && !r.intent.MatchString(c.Intent) {
		return false
	}
	for _, a := range r.args {
		if !a.matches(c.Args) {
			return false
		}
	}
	if r.seq != nil {
		// The static matchers first; the history only if they match.
		if !e.ruleMatchesStatic(st, r, p, pat) {
			return false
		}
		return e.seqHolds(st, r, p)
	}
	return e.ruleMatchesStatic(st, r, p, pat)
}

// ruleMatchesStatic is ruleMatchesPat without the sequence conditions.
func (e *Engine) ruleMatchesStatic(st *state, r *rule, p *part, pat *shell.Pattern) bool {
	if pat != nil {
		return p.subject == warden.SubjectCommand && pat.Match(p.an, p.cmd, r.effect == warden.Allow)
	}
	if r.hasPath {
		if p.subject != warden.SubjectPath {
			return false
		}
		if p.dynamic {
			// A computed path may be anything: deny and ask rules meet it,
			// allow rules cannot vouch for it.
			return r.effect != warden.Allow
		}
		for _, g := range r.excl {
			if g.match(p.abs, p.rel, p.inside) {
				return false
			}
		}
		for _, g := range r.paths {
			if g.match(p.abs, p.rel, p.inside) {
				return true
			}
		}
		return len(r.paths) == 0
	}
	return true
}

// isOwn reports whether a path is one of warden's own files: the policy,
// the store folder or the intents file.
func (e *Engine) isOwn(p *part) bool { return e.ownAbs(p.abs) || e.ownAbs(p.rawAbs()) }

func (e *Engine) isProtected(p *part) bool {
	if e.isOwn(p) {
		return true
	}
	// The path as written, before symlinks were resolved, is checked too.
	ra := p.rawAbs()
	rrel, rinside := p.rel, p.inside
	if ra != p.abs {
		rrel, rinside = e.relTo(ra)
	}
	for _, g := range e.protected {
		if g.match(p.abs, p.rel, p.inside) || ra != p.abs && g.match(ra, rrel, rinside) {
			return true
		}
	}
	return false
}

// finish turns the state into the decision, in *d, which must be zero.
func (e *Engine) finish(d *warden.Decision, st *state) {
	d.Warnings, d.Matched, d.Recoverable = noStrings, noStrings, true
	b := st.best
	if !b.set {
		b = item{set: true, effect: e.pol.Default.Destructive, code: warden.CodeDefault, subject: st.call.Tool}
	}
	if b.effect == warden.Allow {
		d.Decision = warden.Allow
		if st.allByRule {
			d.Code = warden.CodeAllowed
		} else {
			d.Code = warden.CodeDefault
		}
		// A grant that turned an ask into an allow decided the call: without
		// it the call would ask, whatever allowed its other parts.
		if len(st.grants) > 0 {
			d.Rule = "grant:" + st.grants[0]
		} else if st.allowRule != nil {
			d.Rule = st.allowRule.id
		}
	} else {
		d.Decision = b.effect
		d.Code = b.code
		if b.rule != nil {
			d.Rule = b.rule.id
		}
		d.Reason = e.fnReason(st, b, e.reason(st, b))
		d.Suggestion = e.suggestion(st, b)
		d.Recoverable = b.code != warden.CodePolicyError && b.code != warden.CodeRoleUnknown
	}
	if len(st.warnings) > 0 {
		d.Warnings = st.warnings
	}
	switch {
	case st.nMatched == 1:
		d.Matched = st.matched[0].one
	case st.nMatched > 1:
		// In policy order: sort the few matched rules by index (not a scan
		// of every rule of the policy).
		ms := make([]*rule, 0, st.nMatched)
		ms = append(ms, st.matched[:min(st.nMatched, len(st.matched))]...)
		ms = append(ms, st.matchedMore...)
		for i := 1; i < len(ms); i++ {
			for j := i; j > 0 && ms[j].idx < ms[j-1].idx; j-- {
				ms[j], ms[j-1] = ms[j-1], ms[j]
			}
		}
		d.Matched = make([]string, len(ms))
		for i, r := range ms {
			d.Matched[i] = r.id
		}
	}
	d.Sandbox = e.confinement(st)
	if e.audit {
		enforced := d.Decision
		d.Mode = "audit"
		d.Enforced = &enforced
		// Audit mode never lets a call change warden's own files (the
		// policy, the store, the intents file): the audit could be erased.
		if !st.own {
			d.Decision = warden.Allow
		}
	}
}
