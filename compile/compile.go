// Package compile turns plain-language rules into warden policy rules with
// an LLM behind an OpenAI-compatible chat API, and never trusts the answer:
// every compiled rule is loaded and linted by package policy, compiled by
// package engine, and must pass the tests the model wrote for it (a call it
// must catch and a near miss it must not). Lint errors and failing tests go
// back to the model for a bounded number of repairs; what still fails is
// reported, and nothing is written unless every rule compiled. A compiled
// rule may not loosen the current policy (turn a deny into ask or allow, or
// an ask into allow) unless the caller allows it, and compiling never
// touches protected paths or roles.
package compile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/cfgfile"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// Options configures a compile. Zero values mean defaults.
type Options struct {
	// Model is the chat endpoint; it is required unless every rule was
	// compiled before and Fresh is false.
	Model *Model
	// MaxRepairs bounds the repair requests per plain-language rule after
	// the first answer (default 2; negative means none).
	MaxRepairs int
	// AllowWiden accepts compiled rules that allow calls the current
	// policy asks about.
	AllowWiden bool
	// AllowWeakenDeny accepts compiled rules (or removed ones) that turn
	// calls the current policy denies into ask or allow.
	AllowWeakenDeny bool
	// Fresh asks the model again for rules compiled before; by default a
	// rule whose sentence is unchanged keeps its compiled rules.
	Fresh bool
	// Progress receives one line per step (nil: none).
	Progress io.Writer
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Result is the outcome of a compile.
type Result struct {
	PolicyFile, RulesFile string
	Sources               []Source
	// Old is the policy as it was; New the policy with the compiled rules,
	// nil unless every rule compiled and every check passed.
	Old, New []byte
	// Diff is the readable diff from Old to the new policy (also shown
	// when New is nil, for the rules that did compile).
	Diff string
	// Failures lists the rules that did not compile, the checks that
	// failed and the changes that were refused.
	Failures []Failure
	// Loosened lists the loosenings the options accepted.
	Loosened []string
	// Compiled counts the plain-language rules compiled now; Reused those
	// kept from an earlier compile.
	Compiled, Reused int
	// Calls, PromptTokens and CompletionTokens count the model's use.
	Calls, PromptTokens, CompletionTokens int
	Elapsed                               time.Duration
}

// OK reports whether the compile produced a policy to write.
func (r *Result) OK() bool { return r.New != nil && len(r.Failures) == 0 }

// Failure is one plain-language rule that did not compile, or a check of
// the whole policy that failed (Source.Line is 0 then).
type Failure struct {
	Source   Source
	Problems []string
	// Refused marks a compiled rule that passed its tests but would loosen
	// the policy; the model is not asked to repair those.
	Refused bool
}

type compiler struct {
	opt        Options
	res        *Result
	old        []byte
	oldPol     *policy.Policy
	oldEng     *engine.Engine
	handIDs    map[string]bool
	rules      []yamlRule // accepted so far
	cases      []yamlCase
	modelName  string
	prevRules  map[string][]yamlRule
	prevCases  map[string][]yamlCase
	sysPrompt  string
	polSummary string
}

// Compile compiles the plain-language rules in rulesFile into the policy
// policyFile and returns the result; it writes nothing (see Write). The
// error is for what stops the whole compile: a file that cannot be read, a
// policy that does not load, a model that cannot be reached or fails
// (a *ModelError). With a model error the result is returned too, for its
// counts of calls and tokens, and has no New policy.
func Compile(ctx context.Context, policyFile, rulesFile string, opt Options) (*Result, error) {
	if opt.MaxRepairs == 0 {
		opt.MaxRepairs = 2
	}
	if opt.MaxRepairs < 0 {
		opt.MaxRepairs = 0
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	start := opt.Now()
	policyFile, err := filepath.Abs(policyFile)
	if err != nil {
		return nil, err
	}
	srcs, err := ReadSources(rulesFile)
	if err != nil {
		return nil, err
	}
	old, err := os.ReadFile(policyFile)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	oldPol, err := policy.LoadBytes(policyFile, old)
	if err != nil {
		return nil, fmt.Errorf("the policy does not load; fix it first (warden lint):\n%w", err)
	}
	oldEng, err := engine.Compile(oldPol, workspace.Live())
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	c := &compiler{opt: opt, old: old, oldPol: oldPol, oldEng: oldEng, handIDs: map[string]bool{},
		res: &Result{PolicyFile: policyFile, RulesFile: rulesFile, Sources: srcs, Old: old}}
	for _, r := range oldPol.Rules {
		if r.Source == "" {
			c.handIDs[r.ID] = true
		}
	}
	c.prevRules, c.prevCases = fromPolicy(oldPol)
	if len(c.prevRules) > 0 && !opt.Fresh && (oldPol.Compiled == nil || RulesHash(oldPol) != oldPol.Compiled.Rules) {
		// Compiled rules edited by hand (or without a record) are not
		// kept: the model is asked again for every rule.
		c.prevRules, c.prevCases = nil, nil
		c.progress("the compiled rules in %s were edited after compiling; asking the model again for every rule", policyFile)
	}
	if opt.Model != nil {
		c.modelName = opt.Model.Name
	} else if oldPol.Compiled != nil {
		c.modelName = oldPol.Compiled.Model
	}
	c.sysPrompt = systemPrompt
	c.polSummary = summary(oldPol)
	c.progress("compiling %d rules from %s into %s%s", len(srcs), rulesFile, policyFile, c.modelText())
	for i, s := range srcs {
		c.progress("[%d/%d] %s: %s", i+1, len(srcs), s, s.Text)
		if prev := c.prevRules[s.Text]; len(prev) > 0 && !opt.Fresh {
			c.rules = append(c.rules, prev...)
			c.cases = append(c.cases, c.prevCases[s.Text]...)
			c.res.Reused++
			c.progress("      kept from the last compile: %s (no model call; --fresh asks again)", ids(prev))
			continue
		}
		if opt.Model == nil {
			return nil, errors.New("no model configured (set --base-url and --model, or WARDEN_LLM_BASE_URL and WARDEN_LLM_MODEL)")
		}
		if err := c.one(ctx, s); err != nil {
			c.res.Elapsed = opt.Now().Sub(start)
			return c.res, err
		}
	}
	c.finish()
	c.res.Elapsed = opt.Now().Sub(start)
	c.progress("done: %d of %d rules compiled (%d kept from the last compile), %d model calls, %d tokens (%d in, %d out), %s",
		len(srcs)-c.failedSources(), len(srcs), c.res.Reused, c.res.Calls, c.res.PromptTokens+c.res.CompletionTokens,
		c.res.PromptTokens, c.res.CompletionTokens, c.res.Elapsed.Round(time.Millisecond))
	return c.res, nil
}

func (c *compiler) modelText() string {
	if c.opt.Model == nil {
		return ""
	}
	return fmt.Sprintf(" with model %s at %s", c.opt.Model.Name, c.opt.Model.BaseURL)
}

func (c *compiler) failedSources() int {
	n := 0
	for _, f := range c.res.Failures {
		if f.Source.Line > 0 {
			n++
		}
	}
	return n
}

func (c *compiler) progress(format string, args ...any) {
	if c.opt.Progress != nil {
		fmt.Fprintf(c.opt.Progress, format+"\n", args...)
	}
}

// one compiles one plain-language rule, with repairs.
func (c *compiler) one(ctx context.Context, s Source) error {
	msgs := []Message{
		{Role: "system", Content: c.sysPrompt},
		{Role: "user", Content: c.userPrompt(s)},
	}
	var problems []string
	for attempt := 0; attempt <= c.opt.MaxRepairs; attempt++ {
		if attempt > 0 {
			c.progress("      asking for a repair (%d of %d)", attempt, c.opt.MaxRepairs)
			msgs = append(msgs, Message{Role: "user", Content: repairPrompt(problems)})
		}
		reply, err := c.opt.Model.Chat(ctx, msgs, answerSchema)
		c.res.Calls++
		c.res.PromptTokens += reply.PromptTokens
		c.res.CompletionTokens += reply.CompletionTokens
		if err != nil {
			return err
		}
		c.progress("      model call %d: %d tokens in, %d out, %s", c.res.Calls, reply.PromptTokens, reply.CompletionTokens,
			reply.Elapsed.Round(time.Millisecond))
		msgs = append(msgs, Message{Role: "assistant", Content: reply.Content})
		rules, cases, probs, refused := c.check(s, reply)
		if len(probs) == 0 && len(refused) == 0 {
			c.rules = append(c.rules, rules...)
			c.cases = append(c.cases, cases...)
			c.res.Compiled++
			c.progress("      ok: %s, %d tests pass", describe(rules), len(cases))
			return nil
		}
		if len(refused) > 0 {
			for _, p := range refused {
				c.progress("      refused: %s", p)
			}
			c.res.Failures = append(c.res.Failures, Failure{Source: s, Problems: refused, Refused: true})
			return nil
		}
		for _, p := range probs {
			c.progress("      problem: %s", p)
		}
		problems = probs
	}
	c.progress("      failed after %d repairs", c.opt.MaxRepairs)
	c.res.Failures = append(c.res.Failures, Failure{Source: s, Problems: problems})
	return nil
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// check verifies one answer: schema, shape, lint, the model's own tests,
// and that it does not loosen the policy. problems go back to the model;
// refused does not.
func (c *compiler) check(s Source, reply Reply) (rules []yamlRule, cases []yamlCase, problems, refused []string) {
	text := stripFence(reply.Content)
	if reply.FinishReason == "length" {
		return nil, nil, []string{"the answer was cut off because it was too long; answer with fewer rules and shorter tests"}, nil
	}
	if probs := validateAnswer(text); len(probs) > 0 {
		return nil, nil, probs, nil
	}
	var ans Answer
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		return nil, nil, []string{"the answer is not valid JSON: " + err.Error()}, nil
	}
	if len(ans.Rules) == 0 {
		return nil, nil, []string{"the answer has no rules; give at least one rule for the plain-language rule"}, nil
	}
	taken := map[string]bool{}
	for id := range c.handIDs {
		taken[id] = true
	}
	for _, r := range c.rules {
		taken[r.ID] = true
	}
	type testRef struct {
		rule, kind string
		expect     warden.Effect
		call       warden.ToolCall
	}
	var refs []testRef
	nearTools := map[string][]string{}
	for i, ar := range ans.Rules {
		where := fmt.Sprintf("rules[%d] (%s)", i, ar.ID)
		switch {
		case !idRE.MatchString(ar.ID):
			problems = append(problems, fmt.Sprintf("%s: the id must be lowercase letters, digits and hyphens", where))
		case taken[ar.ID]:
			problems = append(problems, fmt.Sprintf("%s: the id %q is already used by the policy; choose another", where, ar.ID))
		}
		taken[ar.ID] = true
		yr := yamlRule{ID: ar.ID, Effect: ar.Effect, Tool: nonEmpty(ar.Tool), Command: nonEmpty(ar.Command), Path: nonEmpty(ar.Path),
			Intent: strings.TrimSpace(ar.Intent), Roles: nonEmpty(ar.Roles), Message: strings.TrimSpace(ar.Message),
			Suggestion: strings.TrimSpace(ar.Suggestion), Source: s.Text}
		for _, a := range ar.Args {
			if yr.Args == nil {
				yr.Args = map[string]string{}
			}
			if _, dup := yr.Args[a.Name]; dup {
				problems = append(problems, fmt.Sprintf("%s.args: %q is given twice", where, a.Name))
			}
			yr.Args[a.Name] = a.Glob
		}
		rules = append(rules, yr)
		var catch, near int
		for j, t := range ar.Tests {
			call := warden.ToolCall{Tool: t.Call.Tool, Role: t.Call.Role, Intent: t.Call.Intent, Args: map[string]any{}}
			for _, a := range t.Call.Args {
				call.Args[a.Name] = a.Value
			}
			if strings.TrimSpace(call.Tool) == "" {
				problems = append(problems, fmt.Sprintf("%s.tests[%d]: the call needs a tool", where, j))
				continue
			}
			switch t.Kind {
			case "catch":
				catch++
			case "near_miss":
				near++
				nearTools[ar.ID] = append(nearTools[ar.ID], call.Tool)
			}
			name := strings.TrimSpace(t.Name)
			if name == "" {
				name = fmt.Sprintf("%s %d", strings.ReplaceAll(t.Kind, "_", " "), j+1)
			}
			label := "catches"
			if t.Kind == "near_miss" {
				label = "does not match"
			}
			cases = append(cases, yamlCase{Name: fmt.Sprintf("%s %s %s", ar.ID, label, strings.TrimRight(name, ".:")), Expect: t.Expect, Source: s.Text,
				Call: yamlCall{Tool: call.Tool, Role: call.Role, Intent: call.Intent, Args: call.Args}})
			refs = append(refs, testRef{rule: ar.ID, kind: t.Kind, expect: warden.Effect(t.Expect), call: call})
		}
		if catch == 0 || near == 0 {
			problems = append(problems, fmt.Sprintf("%s: needs at least one catch test (a call it must match) and one near_miss test (a similar call it must not match); it has %d and %d", where, catch, near))
		}
	}
	if len(problems) == 0 {
		problems = meaningProblems(c.oldPol, s.Text, rules, nearTools)
	}
	if len(problems) > 0 {
		return nil, nil, problems, nil
	}
	// Lint and compile with the same code as any policy, in the policy.
	text2, err := splice(c.old, append(slices.Clone(c.rules), rules...), append(slices.Clone(c.cases), cases...), nil)
	if err != nil {
		return nil, nil, []string{err.Error()}, nil
	}
	p, findings := policy.Parse(c.res.PolicyFile, text2)
	for _, f := range findings {
		mine := false
		for _, r := range rules {
			mine = mine || strings.Contains(f.Field, "("+r.ID+")")
		}
		if f.Severity == policy.SevError || mine {
			msg := f.Message
			if f.Field != "" {
				msg = f.Field + ": " + msg
			}
			problems = append(problems, "lint "+f.Severity+": "+msg)
		}
	}
	if len(problems) > 0 {
		return nil, nil, problems, nil
	}
	eng, err := engine.Compile(p, workspace.Live())
	if err != nil {
		return nil, nil, []string{"the policy does not compile: " + err.Error()}, nil
	}
	for i, t := range refs {
		d := eng.Decide(t.call, nil).Decision
		matched := slices.Contains(d.Matched, t.rule)
		name := cases[i].Name
		switch {
		case t.kind == "catch" && !matched:
			problems = append(problems, fmt.Sprintf("test %q: rule %s does not match %s, so it does not catch it (the policy decides %s)", name, t.rule, callText(t.call), decisionText(d)))
		case t.kind == "near_miss" && matched:
			problems = append(problems, fmt.Sprintf("test %q: rule %s matches %s, but a near miss must not match it; make the rule narrower or pick a call it does not cover", name, t.rule, callText(t.call)))
		case d.Decision != t.expect:
			problems = append(problems, fmt.Sprintf("test %q expects %s for %s, but the policy decides %s", name, t.expect, callText(t.call), decisionText(d)))
		}
		if t.kind == "catch" && d.Rule == t.rule {
			cases[i].Rule = t.rule
		}
	}
	if len(problems) > 0 {
		return nil, nil, problems, nil
	}
	// Safety: against the current policy, on its own tests and these.
	corpus := c.oldCalls()
	for _, t := range refs {
		corpus = append(corpus, t.call)
	}
	for _, r := range rules {
		corpus = append(corpus, probes(r, p)...)
	}
	refused, accepted := c.loosenings(eng, corpus)
	c.res.Loosened = append(c.res.Loosened, accepted...)
	return rules, cases, nil, refused
}

func (c *compiler) oldCalls() []warden.ToolCall {
	var out []warden.ToolCall
	for _, t := range c.oldPol.Tests {
		out = append(out, t.Call)
	}
	return out
}

// loosenings compares the current policy with eng on calls: every call eng
// decides less strictly is refused, unless the options accept it.
func (c *compiler) loosenings(eng *engine.Engine, calls []warden.ToolCall) (refused, accepted []string) {
	seen := map[string]bool{}
	for _, call := range calls {
		was, now := c.oldEng.Decide(call, nil).Decision, eng.Decide(call, nil).Decision
		if now.Decision.Severity() >= was.Decision.Severity() {
			continue
		}
		key := callText(call)
		if seen[key] {
			continue
		}
		seen[key] = true
		var msg string
		ok := false
		if was.Decision == warden.Deny {
			msg = fmt.Sprintf("would turn a deny into %s: %s is denied now (%s) and would be %s (%s)",
				now.Decision, key, decisionText(was), now.Decision, decisionText(now))
			ok = c.opt.AllowWeakenDeny
			if !ok {
				msg += "; pass --allow-weaken-deny to accept"
			}
		} else {
			msg = fmt.Sprintf("would widen what is allowed: %s is asked now (%s) and would be allowed (%s)",
				key, decisionText(was), decisionText(now))
			ok = c.opt.AllowWiden
			if !ok {
				msg += "; pass --allow-widen to accept"
			}
		}
		if ok {
			accepted = append(accepted, msg)
		} else {
			refused = append(refused, msg)
		}
	}
	return refused, accepted
}

// finish assembles the new policy and checks it as a whole.
func (c *compiler) finish() {
	res := c.res
	text, err := splice(c.old, c.rules, c.cases, nil)
	if err != nil {
		res.Failures = append(res.Failures, Failure{Problems: []string{err.Error()}})
		return
	}
	p, _ := policy.Parse(res.PolicyFile, text)
	rel, err := filepath.Rel(filepath.Dir(res.PolicyFile), mustAbs(res.RulesFile))
	if err != nil {
		rel = mustAbs(res.RulesFile)
	}
	comp := &yamlCompiled{From: filepath.ToSlash(rel), Model: c.modelName, Sources: SourcesHash(res.Sources), Rules: RulesHash(p)}
	text, err = splice(c.old, c.rules, c.cases, comp)
	if err != nil {
		res.Failures = append(res.Failures, Failure{Problems: []string{err.Error()}})
		return
	}
	if len(res.Failures) > 0 {
		// Show what did compile, without a compiled: section that would
		// claim every rule was.
		partial, _ := splice(c.old, c.rules, c.cases, nil)
		res.Diff = Diff(res.PolicyFile+" (now)", res.PolicyFile+" (compiled, not written)", string(c.old), string(partial))
		return
	}
	res.Diff = Diff(res.PolicyFile+" (now)", res.PolicyFile+" (compiled)", string(c.old), string(text))
	var probs []string
	p, findings := policy.Parse(res.PolicyFile, text)
	for _, f := range findings {
		if f.Severity == policy.SevError {
			probs = append(probs, "lint: "+f.String())
		}
	}
	var eng *engine.Engine
	if len(probs) == 0 {
		if eng, err = engine.Compile(p, workspace.Live()); err != nil {
			probs = append(probs, err.Error())
		}
	}
	if eng != nil {
		// Every test of the policy, hand-written ones included.
		for _, t := range p.Tests {
			if msg := checkCase(t, eng.Decide(t.Call, nil).Decision); msg != "" {
				probs = append(probs, fmt.Sprintf("test %s (%s): %s", t.Name, t.Pos, msg))
			}
		}
		// The whole set against the current policy: a recorded rule that
		// is gone, or rules that only loosen together, are caught here.
		corpus := c.oldCalls()
		for _, t := range p.Tests {
			corpus = append(corpus, t.Call)
		}
		for _, r := range c.rules {
			corpus = append(corpus, probes(r, p)...)
		}
		refused, _ := c.loosenings(eng, corpus)
		probs = append(probs, refused...)
		// Compiling never touches protected paths or roles.
		if !slices.Equal(p.Protected, c.oldPol.Protected) || !slices.Equal(p.Private, c.oldPol.Private) {
			probs = append(probs, "the protected or private paths would change; compiling must not touch them")
		}
		if !reflect.DeepEqual(rolesView(p), rolesView(c.oldPol)) {
			probs = append(probs, "the roles would change; compiling must not touch them")
		}
	}
	if len(probs) > 0 {
		res.Failures = append(res.Failures, Failure{Problems: probs})
		return
	}
	res.New = text
}

func rolesView(p *policy.Policy) map[string]policy.Role {
	out := map[string]policy.Role{}
	for k, r := range p.Roles {
		v := *r
		v.Pos = policy.Pos{}
		out[k] = v
	}
	return out
}

func mustAbs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// Write writes a successful result's policy atomically (a temporary file
// renamed over the old one). It refuses a result that is not OK, and a
// policy that changed on disk since it was read.
func Write(res *Result) error {
	if !res.OK() {
		return errors.New("nothing written: not every rule compiled")
	}
	cur, err := os.ReadFile(res.PolicyFile)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, res.Old) {
		return fmt.Errorf("%s changed while compiling; nothing written, run warden compile again", res.PolicyFile)
	}
	st, err := os.Stat(res.PolicyFile)
	if err != nil {
		return err
	}
	return cfgfile.WriteAtomic(res.PolicyFile, res.New, st.Mode().Perm())
}

// checkCase compares a decision with a case's expectations ("" when they
// hold), as warden test does.
func checkCase(c *policy.Case, d warden.Decision) string {
	got := decisionText(d)
	switch {
	case d.Decision != c.Expect:
		return fmt.Sprintf("expected %s, got %s", c.Expect, got)
	case c.Code != "" && d.Code != c.Code:
		return fmt.Sprintf("expected code %s, got %s", c.Code, got)
	case c.Rule == "-" && d.Rule != "":
		return fmt.Sprintf("expected no deciding rule, got %s", got)
	case c.Rule != "" && c.Rule != "-" && d.Rule != c.Rule:
		return fmt.Sprintf("expected rule %s, got %s", c.Rule, got)
	}
	return ""
}

func decisionText(d warden.Decision) string {
	s := fmt.Sprintf("%s, code %s", d.Decision, d.Code)
	if d.Rule != "" {
		s += ", rule " + d.Rule
	}
	return s
}

func callText(c warden.ToolCall) string {
	args, _ := json.Marshal(c.Args)
	s := fmt.Sprintf("%s %s", c.Tool, args)
	if c.Role != "" {
		s += " as role " + c.Role
	}
	if c.Intent != "" {
		s += fmt.Sprintf(" with intent %q", c.Intent)
	}
	return s
}

func nonEmpty(l []string) []string {
	var out []string
	for _, s := range l {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func ids(rs []yamlRule) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return strings.Join(out, ", ")
}

func describe(rs []yamlRule) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s (%s)", r.ID, r.Effect))
	}
	return "rule " + strings.Join(out, ", rule ")
}

// stripFence removes a ```json fence some models put around JSON.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimPrefix(s, "json")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}
