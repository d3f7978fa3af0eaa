package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/shell"
)

// Sequence rules decide a call by the session's history: the calls the
// session made before (warden's own audit records of it, oldest first).

// seqRule is the compiled after:, repeat: and rate: of a rule.
type seqRule struct {
	after  *afterCond
	repeat *policy.Window
	rate   *policy.Window
}

type afterCond struct {
	tools    []toolMatcher
	commands []shell.Pattern
	paths    []pathGlob
	samePath bool
	ok       bool // the earlier call succeeded (its outcome is OutcomeOK)
	since    *afterCond
	text     string // for explain: what it looks for
}

func (e *Engine) compileSeq(r *rule, pr *policy.Rule) error {
	if pr.After == nil && pr.Repeat == nil && pr.Rate == nil {
		return nil
	}
	r.seq = &seqRule{repeat: pr.Repeat, rate: pr.Rate}
	if pr.After != nil {
		a, err := e.compileAfter(pr.After)
		if err != nil {
			return err
		}
		r.seq.after = a
	}
	e.history = true
	return nil
}

func (e *Engine) compileAfter(pa *policy.After) (*afterCond, error) {
	a := &afterCond{samePath: pa.SamePath, ok: pa.OK}
	for _, t := range pa.Tool {
		a.tools = append(a.tools, compileTool(t))
	}
	for _, c := range pa.Command {
		p, err := shell.CompilePattern(c)
		if err != nil {
			return nil, err
		}
		a.commands = append(a.commands, p)
	}
	for _, s := range pa.Path {
		g, err := e.compilePath(s)
		if err != nil {
			return nil, err
		}
		a.paths = append(a.paths, g)
	}
	a.text = describeAfter(pa)
	if pa.Since != nil {
		s, err := e.compileAfter(pa.Since)
		if err != nil {
			return nil, err
		}
		a.since = s
	}
	return a, nil
}

func describeAfter(pa *policy.After) string {
	s := ""
	switch {
	case len(pa.Command) > 0:
		s = fmt.Sprintf("a command matching %q", pa.Command)
	case len(pa.Tool) > 0:
		s = fmt.Sprintf("a %v call", pa.Tool)
	default:
		s = "a call"
	}
	if len(pa.Path) > 0 {
		s += fmt.Sprintf(" on %v", pa.Path)
	}
	if pa.SamePath {
		s += " on the same path"
	}
	if pa.OK {
		s += " that succeeded"
	}
	if pa.Since != nil {
		s += " since the last " + strings.TrimPrefix(strings.TrimPrefix(describeAfter(pa.Since), "a "), "an ")
	}
	return s
}

// NeedsHistory reports whether the policy has sequence rules: only then
// does the session layer load the session's history for a decision.
func (e *Engine) NeedsHistory() bool { return e.history }

// HistoryWindow is how far back the sequence rules look for repeat and
// rate windows (after: looks at the whole history given).
func (e *Engine) HistoryWindow() time.Duration {
	var w time.Duration
	for _, r := range e.rules {
		if r.seq == nil {
			continue
		}
		for _, x := range []*policy.Window{r.seq.repeat, r.seq.rate} {
			if x != nil && x.Within > w {
				w = x.Within
			}
		}
	}
	return w
}

// past is one earlier call, read once per decision.
type past struct {
	rec      *warden.AuditRecord
	kind     string
	ran      bool // allowed (it ran)
	an       *shell.Analysis
	paths    []string // absolute paths it read or wrote
	analysed bool
	// okAn is the part of a shell line its success vouches for
	// (analyseOK), nil when none.
	okAn   *shell.Analysis
	okDone bool
	k      string // normalised form, for repeat
}

// seqHolds reports whether a rule's sequence conditions hold for part p:
// for deny, ask and warn, the prerequisite is missing or the window is
// full; for allow, the prerequisite is there.
func (e *Engine) seqHolds(st *state, r *rule, p *part) bool {
	holds, detail := e.seqEval(st, r, p)
	if st.tr != nil && !st.noted(r) {
		c := Check{Name: "sequence", Effect: warden.Allow, Code: warden.CodeAllowed, Detail: "rule " + r.id + " does not apply: " + detail}
		if holds {
			c.Effect, c.Code, c.Detail = r.effect, warden.CodeRuleAsk, "rule "+r.id+" applies: "+detail
			if r.effect == warden.Deny {
				c.Code = warden.CodeRuleDeny
			} else if r.effect == warden.Allow {
				c.Code = warden.CodeAllowed
			}
		}
		st.tr.Checks = append(st.tr.Checks, c)
	}
	return holds
}

// noted reports whether explain already shows rule r's history, and marks
// it shown.
func (st *state) noted(r *rule) bool {
	for _, x := range st.seqShown {
		if x == r {
			return true
		}
	}
	st.seqShown = append(st.seqShown, r)
	return false
}

func (e *Engine) seqEval(st *state, r *rule, p *part) (bool, string) {
	var hist []warden.AuditRecord
	var now time.Time
	if st.s != nil {
		hist, now = st.s.History, st.s.Now
	}
	if now.IsZero() && len(hist) > 0 {
		now = time.Now() // only the history's times are compared with it
	}
	sq := r.seq
	var notes []string
	tracing := st.tr != nil
	if sq.repeat != nil && sq.repeat.Failures > 0 {
		n := 0
		if len(hist) > 0 {
			n = e.failuresInRow(st, sq.repeat, hist, now)
		}
		if tracing {
			notes = append(notes, fmt.Sprintf("the same call failed %d time(s) in a row (limit %d)", n, sq.repeat.Failures))
		}
		if n < sq.repeat.Failures {
			return false, strings.Join(notes, "; ")
		}
	} else if sq.repeat != nil {
		n := 0
		if len(hist) > 0 {
			ps := st.pastCalls(e, hist)
			for i := range ps {
				if now.Sub(ps[i].rec.Time) <= sq.repeat.Within && st.sameCall(&ps[i]) {
					n++
				}
			}
		}
		if tracing {
			notes = append(notes, fmt.Sprintf("the same call %d time(s) in the last %s (limit %d)", n, sq.repeat.Within, sq.repeat.Count))
		}
		if n < sq.repeat.Count {
			return false, strings.Join(notes, "; ")
		}
	}
	if sq.rate != nil {
		n := 0
		for i := range hist {
			if now.Sub(hist[i].Time) <= sq.rate.Within {
				n++
			}
		}
		if tracing {
			notes = append(notes, fmt.Sprintf("%d call(s) in the last %s (limit %d)", n, sq.rate.Within, sq.rate.Count))
		}
		if n < sq.rate.Count {
			return false, strings.Join(notes, "; ")
		}
	}
	if sq.after != nil {
		found := e.findAfter(st, sq.after, p, hist, sq.after.ok)
		switch {
		case !tracing:
		case found != nil:
			notes = append(notes, fmt.Sprintf("found %s: %s at %s", sq.after.text, found.rec.Tool, found.rec.Time.Format(time.RFC3339)))
		default:
			note := "no earlier " + sq.after.text + " in this session"
			if sq.after.ok {
				// Say what the latest such call did: failed, or no outcome.
				if last := e.findAfter(st, sq.after, p, hist, false); last != nil {
					note += fmt.Sprintf("; the latest such call (%s at %s) %s", last.rec.Tool, last.rec.Time.Format(time.RFC3339), outcomeText(last.rec.Outcome))
				}
			}
			notes = append(notes, note)
		}
		if r.effect == warden.Allow {
			return found != nil, strings.Join(notes, "; ")
		}
		return found == nil, strings.Join(notes, "; ")
	}
	return true, strings.Join(notes, "; ")
}

// findAfter returns the latest earlier call that meets the condition (after
// the last call meeting its since:, if any); with needOK, only one whose
// outcome is a success.
func (e *Engine) findAfter(st *state, a *afterCond, p *part, hist []warden.AuditRecord, needOK bool) *past {
	ps := st.pastCalls(e, hist)
	start := 0
	if a.since != nil {
		for i := len(ps) - 1; i >= 0; i-- {
			if (!a.since.ok || ps[i].rec.Outcome == warden.OutcomeOK) && e.pastMatches(st, a.since, &ps[i], nil) {
				start = i + 1
				break
			}
		}
	}
	for i := len(ps) - 1; i >= start; i-- {
		if ps[i].ran && (!needOK || ps[i].rec.Outcome == warden.OutcomeOK) && e.pastMatches(st, a, &ps[i], p) {
			return &ps[i]
		}
	}
	return nil
}

// outcomeText says what an earlier call did, for explain.
func outcomeText(o string) string {
	switch o {
	case warden.OutcomeOK:
		return "succeeded"
	case warden.OutcomeFail:
		return "failed"
	}
	return "has no outcome the host reported, so it does not count as passed"
}

// failuresInRow counts the latest runs of the decided call (its normalised
// form) that failed in a row, newest first: a run that succeeded or whose
// outcome is unknown ends the row; calls that were not let through, and
// other calls in between, do not. With Within, only runs in the window
// count.
func (e *Engine) failuresInRow(st *state, w *policy.Window, hist []warden.AuditRecord, now time.Time) int {
	ps := st.pastCalls(e, hist)
	n := 0
	for i := len(ps) - 1; i >= 0; i-- {
		pc := &ps[i]
		if w.Within > 0 && now.Sub(pc.rec.Time) > w.Within {
			break
		}
		if !pc.ran || !st.sameCall(pc) {
			continue
		}
		if pc.rec.Outcome != warden.OutcomeFail {
			break
		}
		n++
	}
	return n
}

// pastCalls reads the history once per decision.
func (st *state) pastCalls(e *Engine, hist []warden.AuditRecord) []past {
	if st.past != nil || len(hist) == 0 {
		return st.past
	}
	st.past = make([]past, len(hist))
	for i := range hist {
		h := &hist[i]
		ran := h.Decision == warden.Allow
		if h.Mode == "audit" && h.Enforced != "" {
			ran = true // it ran: audit mode answers allow
		}
		st.past[i] = past{rec: h, kind: e.pol.KindOf(h.Tool), ran: ran}
	}
	return st.past
}

func (e *Engine) pastMatches(st *state, a *afterCond, pc *past, p *part) bool {
	if len(a.tools) > 0 && !anyTool(a.tools, pc.rec.Tool, pc.kind) {
		// A shell call that reads counts as a read, one that writes as a
		// write and an edit (cat f is a read of f; sed -i an edit).
		if pc.kind != "shell" {
			return false
		}
		e.analysePast(st, pc)
		ok := pc.an != nil && (len(pc.an.Reads) > 0 && anyTool(a.tools, "", "read") ||
			len(pc.an.Writes) > 0 && (anyTool(a.tools, "", "write") || anyTool(a.tools, "", "edit") || anyTool(a.tools, "", "delete")))
		if !ok {
			return false
		}
	}
	if len(a.commands) > 0 || len(a.paths) > 0 || a.samePath {
		e.analysePast(st, pc)
	}
	if len(a.commands) > 0 {
		an := pc.an
		if a.ok {
			// A passing run is a command whose exit status the line's
			// success vouches for, run with options that run the tests.
			e.analyseOK(st, pc)
			an = pc.okAn
		}
		ok := false
		for i := 0; an != nil && i < len(an.Commands) && !ok; i++ {
			if a.ok && !runsTests(&an.Commands[i]) {
				continue
			}
			for k := range a.commands {
				if a.commands[k].Match(an, i, false) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	if len(a.paths) > 0 {
		ok := false
		for _, abs := range pc.paths {
			rel, in := e.relTo(abs)
			for _, g := range a.paths {
				if g.match(abs, rel, in) {
					ok = true
				}
			}
		}
		if !ok {
			return false
		}
	}
	if a.samePath {
		if p == nil || p.subject != warden.SubjectPath || p.dynamic {
			return false
		}
		ok := false
		for _, abs := range pc.paths {
			if abs == p.abs {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// analyseOK reads the part of an earlier shell line whose success the
// line's success implies (shell.Succeeded): only there can a command have
// passed when the host says the line succeeded.
func (e *Engine) analyseOK(st *state, pc *past) {
	if pc.okDone {
		return
	}
	pc.okDone = true
	if pc.kind != "shell" {
		return
	}
	if line := shellLine(pc.rec.Args); line != "" {
		if part := shell.Succeeded(line); part != "" {
			pc.okAn = shell.Analyze(part)
		}
	}
}

// noRun lists, by program and subcommand, the options with which a test
// runner or build tool does not run the tests it names (it prints, lists,
// compiles or plans them): such a run passing proves nothing. From each
// tool's --help: go 1.26 (go help testflag), pytest 7.2, cargo 1.8x, GNU
// make 4.3, jest 29, vitest 3, dotnet 8, tox 4.
var noRun = map[string][]string{
	"go test":     {"-n", "-list", "-c"},
	"pytest":      {"--collect-only", "--co", "--setup-plan", "--setup-only", "--fixtures", "--fixtures-per-test", "--markers", "--version", "-V"},
	"py.test":     {"--collect-only", "--co", "--setup-plan", "--setup-only", "--fixtures", "--fixtures-per-test", "--markers", "--version", "-V"},
	"cargo test":  {"--no-run", "--list"},
	"make":        {"-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p", "--print-data-base"},
	"jest":        {"--listTests", "--showConfig", "--list-tests"},
	"vitest":      {"list", "--list"},
	"dotnet test": {"--list-tests", "-t"},
	"tox":         {"--listenvs", "-l", "--notest", "--list-dependencies"},
	"npm test":    {"--dry-run"},
	"npm run":     {"--dry-run"},
}

// runsTests reports whether a command really runs what it names: no
// option of noRun, no --help or --version, and for go test no -run that
// matches nothing (^$). A runner named by python -m or a package runner
// (npx jest, python3 -m pytest) is read through its words.
func runsTests(c *shell.Command) bool {
	key, words := c.Prog+" "+c.Sub, c.Flags
	switch c.Prog {
	case "python", "python3", "npx", "pnpx", "bunx":
		if len(c.Ops) > 0 {
			key, words = c.Ops[0], c.Ops[1:]
		}
	}
	key = strings.TrimSpace(key)
	bad := noRun[key]
	for _, f := range words {
		name, _, _ := strings.Cut(f, "=")
		if name == "--help" || name == "--version" || slices.Contains(bad, name) {
			return false
		}
	}
	if key == "go test" {
		for _, v := range c.Vals {
			if v.Opt == "-run" && (v.Val == "^$" || v.Val == "$^") {
				return false
			}
		}
	}
	return true
}

// shellLine is the command line of a shell call's arguments: "command" or
// "cmd", a string or an argv array (joined as bash -c would see it when
// it is a shell, word by word otherwise).
func shellLine(args map[string]any) string {
	v, ok := args["command"]
	if !ok {
		v = args["cmd"]
	}
	switch v := v.(type) {
	case string:
		return v
	case []any:
		words := make([]string, 0, len(v))
		for _, w := range v {
			s, ok := w.(string)
			if !ok {
				return ""
			}
			words = append(words, s)
		}
		if len(words) == 3 && (words[1] == "-c" || words[1] == "-lc") && slices.Contains([]string{"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"}, words[0]) {
			return words[2]
		}
		for i, w := range words {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		return strings.Join(words, " ")
	}
	return ""
}

// analysePast reads the commands and paths of an earlier call.
func (e *Engine) analysePast(st *state, pc *past) {
	if pc.analysed {
		return
	}
	pc.analysed = true
	call := warden.ToolCall{Tool: pc.rec.Tool, Args: pc.rec.Args, Cwd: st.call.Cwd}
	base := e.cwd(&call)
	add := func(raw string) {
		if raw == "" || shell.IsDyn(raw) {
			return
		}
		abs, _, _ := e.resolve(raw, base)
		pc.paths = append(pc.paths, abs)
	}
	for _, k := range pathKeys {
		if s, ok := call.Args[k].(string); ok {
			add(s)
		}
	}
	if l, ok := call.Args["paths"].([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				add(s)
			}
		}
	}
	if e.pol.KindOf(call.Tool) != "shell" {
		return
	}
	cmd, _ := call.Args["command"].(string)
	if cmd == "" {
		cmd, _ = call.Args["cmd"].(string)
	}
	if cmd == "" {
		return
	}
	pc.an = shell.Analyze(cmd)
	for _, w := range pc.an.Writes {
		add(w.Path)
	}
	for _, r := range pc.an.Reads {
		add(r.Path)
	}
}

// callKey is the decided call's normalised form, made once per decision.
func (st *state) callKey() string {
	if st.key == "" {
		st.key = keyOf(st.call.Tool, st.kind, st.auditArgs())
	}
	return st.key
}

// auditArgs are the call's arguments as the audit trail keeps them.
func (st *state) auditArgs() map[string]any {
	if st.keyArgs == nil {
		st.keyArgs = warden.RedactArgsCut(st.call.Args, 64<<10)
	}
	return st.keyArgs
}

// sameCall reports whether an earlier call is this one for repeat: the
// same normalised form (callKey), whatever the host's other arguments.
func (st *state) sameCall(pc *past) bool {
	if (st.kind == "shell") != (pc.kind == "shell") || st.kind != "shell" && pc.rec.Tool != st.call.Tool {
		return false
	}
	return st.e.pastKey(pc) == st.callKey()
}

// pastRef names an audit record for Engine.pastKeys: its id, time and
// tool, so that records of two stores an engine may read never meet.
type pastRef struct {
	id   int64
	at   int64
	tool string
}

// maxPastKeys bounds Engine.pastKeys; when full it starts again.
const maxPastKeys = 8192

// pastKey is an earlier call's repeat key: made once per record and kept
// across decisions (a record does not change), or once per decision for a
// record without an id.
func (e *Engine) pastKey(pc *past) string {
	if pc.k != "" || pc.rec.ID == 0 {
		return pc.key()
	}
	ref := pastRef{pc.rec.ID, pc.rec.Time.UnixNano(), pc.rec.Tool}
	e.pastKeysMu.Lock()
	k, ok := e.pastKeys[ref]
	e.pastKeysMu.Unlock()
	if ok {
		pc.k = k
		return k
	}
	k = pc.key()
	e.pastKeysMu.Lock()
	if e.pastKeys == nil || len(e.pastKeys) >= maxPastKeys {
		e.pastKeys = make(map[pastRef]string, 256)
	}
	e.pastKeys[ref] = k
	e.pastKeysMu.Unlock()
	return k
}

// key is an earlier call's normalised form, made once per decision. Its
// arguments are the audit trail's, redacted and cut already: redacting
// them again would cost the most of a decision that reads a long history.
func (pc *past) key() string {
	if pc.k == "" {
		pc.k = keyOf(pc.rec.Tool, pc.kind, pc.rec.Args)
	}
	return pc.k
}

// cosmetic are arguments the hosts send beside what a call does: Claude
// Code's description and timeout, running in the background. A model
// looping on a failing call changes its description every time.
var cosmetic = map[string]bool{"description": true, "timeout": true, "run_in_background": true, "is_background": true}

// keyOf is a call's normalised form for repeat, made of what it does, not
// of the host's argument map (docs/policy.md, "Sequence rules"). A shell
// call is the commands its line runs, each as the engine reads it (program,
// subcommand, options in their canonical spelling, operands, values and
// the variables set before it), whatever the host's shell tool is called,
// however the line is spaced, and without the no-ops true and : (true &&
// deploy is deploy). Another call is its tool and its arguments but the
// cosmetic ones, as the audit trail keeps them (redacted, long strings
// cut).
func keyOf(tool, kind string, args map[string]any) string {
	if kind == "shell" {
		if line := shellLine(args); line != "" {
			an := shell.Analyze(line)
			if an.Err == nil {
				var b strings.Builder
				b.WriteString("shell")
				for i := range an.Commands {
					c := &an.Commands[i]
					if c.Prog == "true" || c.Prog == ":" {
						continue
					}
					b.WriteString("\x00")
					b.WriteString(c.Via)
					flags := slices.Clone(c.Flags) // -fr is -rf
					slices.Sort(flags)
					for _, part := range [][]string{c.Env, {c.Prog, c.Sub}, flags, c.Ops} {
						b.WriteString("\x1e")
						b.WriteString(strings.Join(part, "\x1f"))
					}
					for _, v := range c.Vals {
						b.WriteString("\x1f" + v.Opt + "=" + v.Val)
					}
					if !c.Known {
						b.WriteString("\x1e" + strings.Join(c.Args[1:], "\x1f"))
					}
				}
				return b.String()
			}
		}
	}
	kept := make(map[string]any, len(args))
	for k, v := range args {
		if !cosmetic[k] {
			kept[k] = v
		}
	}
	data, _ := json.Marshal(kept)
	return tool + " " + string(data)
}
