package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

func findPolicy() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return policy.Find(wd)
}

func runTest(ctx context.Context, env *Env) int {
	fs := newFlags(env, "test", "[--policy FILE] [CASES.yaml ...]")
	policyPath := fs.String("policy", "", "policy file (default: warden.yaml here or in the nearest parent folder)")
	verbose := fs.Bool("v", false, "print every case, not only failures")
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	eng, err := loadEngine(*policyPath, workspace.Live())
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden test: %v\n", err)
		return ExitError
	}
	cases := eng.Policy().Tests
	for _, f := range fs.Args() {
		cs, findings, err := policy.LoadCases(f)
		if err != nil {
			fmt.Fprintf(env.Stderr, "warden test: %v\n", err)
			return ExitError
		}
		bad := false
		for _, fd := range findings {
			fmt.Fprintln(env.Stderr, fd.String())
			bad = bad || fd.Severity == policy.SevError
		}
		if bad {
			return ExitError
		}
		cases = append(cases, cs...)
	}
	if len(cases) == 0 {
		fmt.Fprintf(env.Stderr, "warden test: no test cases (add tests: to the policy or pass a CASES file)\n")
		return ExitError
	}
	passed, failed := 0, 0
	for _, c := range cases {
		d := eng.Decide(c.Call, caseSession(c)).Decision
		if msg := checkCase(c, d); msg != "" {
			failed++
			fmt.Fprintf(env.Stdout, "FAIL %s: %s: %s\n", c.Pos, c.Name, msg)
			continue
		}
		passed++
		if *verbose {
			fmt.Fprintf(env.Stdout, "ok   %s: %s: %s (%s)\n", c.Pos, c.Name, d.Decision, d.Code)
		}
	}
	fmt.Fprintf(env.Stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return ExitError
	}
	return ExitOK
}

// checkCase compares a decision with a case's expectations; it returns ""
// when they hold.
func checkCase(c *policy.Case, d warden.Decision) string {
	got := fmt.Sprintf("got %s (%s", d.Decision, d.Code)
	if d.Rule != "" {
		got += ", rule " + d.Rule
	}
	got += ")"
	if d.Reason != "" {
		got += ": " + d.Reason
	}
	if d.Decision != c.Expect {
		return fmt.Sprintf("expected %s, %s", c.Expect, got)
	}
	if c.Code != "" && d.Code != c.Code {
		return fmt.Sprintf("expected code %s, %s", c.Code, got)
	}
	switch c.Rule {
	case "":
	case "-":
		if d.Rule != "" {
			return fmt.Sprintf("expected no deciding rule, %s", got)
		}
	default:
		if d.Rule != c.Rule {
			return fmt.Sprintf("expected rule %s, %s", c.Rule, got)
		}
	}
	return ""
}

// caseSession gives a test case its history: the calls before it, allowed,
// a minute apart, ending a minute before the case.
func caseSession(c *policy.Case) *engine.Session {
	if len(c.History) == 0 {
		return nil
	}
	now := time.Now()
	s := &engine.Session{Now: now}
	for i, h := range c.History {
		var outcome string
		if i < len(c.Outcomes) {
			outcome = c.Outcomes[i]
		}
		s.History = append(s.History, warden.AuditRecord{Time: now.Add(-time.Duration(len(c.History)-i) * time.Minute),
			Tool: h.Tool, Args: h.Args, Decision: warden.Allow, Mode: "enforce", Outcome: outcome})
	}
	return s
}
