package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

func runExplain(ctx context.Context, env *Env) int {
	fs := newFlags(env, "explain", "[--policy FILE] [--session ID [--store URL]] < call.json")
	sf := addStoreFlags(fs)
	policyPath := sf.policy
	first := fs.Bool("first", false, "explain the call as the first tool call of its session")
	sessionID := fs.String("session", "", "explain the call in this session, as the hook would decide it: its role, first tool and grants from the store (nothing is changed)")
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	eng, err := loadEngine(*policyPath, workspace.New())
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden explain: %v\n", err)
		return ExitError
	}
	data, err := io.ReadAll(env.Stdin)
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden explain: read stdin: %v\n", err)
		return ExitError
	}
	call, err := warden.ParseToolCall(data)
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden explain: stdin: %v\n", err)
		return ExitError
	}
	if *sessionID != "" || *sf.store != "" {
		if call.Session == "" {
			call.Session = *sessionID
		}
		if *sf.policy == "" {
			*sf.policy = eng.Policy().File
		}
		_, st, err := sf.open(ctx)
		if err != nil {
			fmt.Fprintf(env.Stderr, "warden explain: %v\n", err)
			return ExitError
		}
		defer st.Close()
		tr, full, sess, err := session.New(eng, st).Explain(ctx, call)
		if err != nil {
			fmt.Fprintf(env.Stderr, "warden explain: %v\n", err)
			return ExitError
		}
		if call.Session != "" {
			if sess.ID == "" {
				fmt.Fprintf(env.Stdout, "session: %s (not in the store yet: explained as a new session)\n", call.Session)
			} else {
				fmt.Fprintf(env.Stdout, "session: %s (role %s, %d calls, first tool %s, %d violations)\n", sess.ID,
					orDash(sess.Role), sess.Calls, orDash(sess.FirstTool), sess.Violations)
			}
		}
		io.WriteString(env.Stdout, FormatTrace(full, tr))
		return exitFor(tr.Decision)
	}
	var s *engine.Session
	if *first {
		s = &engine.Session{First: true}
	}
	tr := eng.Explain(call, s)
	io.WriteString(env.Stdout, FormatTrace(call, tr))
	return exitFor(tr.Decision)
}

// FormatTrace renders a decision trace as readable plain text.
func FormatTrace(call warden.ToolCall, tr *engine.Trace) string {
	var b strings.Builder
	class := "safe"
	if tr.Destructive {
		class = "destructive"
	}
	fmt.Fprintf(&b, "call: %s (kind %s, %s)\n", call.Tool, tr.Kind, class)
	if cmd, ok := call.Args["command"].(string); ok {
		fmt.Fprintf(&b, "command: %s\n", cmd)
	}
	if call.Role != "" || call.Depth != 0 {
		fmt.Fprintf(&b, "role: %s, depth %d\n", orDash(call.Role), call.Depth)
	}
	if call.Intent != "" || call.IntentID != "" {
		fmt.Fprintf(&b, "intent: %s %s\n", orDash(call.IntentID), call.Intent)
	}
	if len(tr.Checks) > 0 {
		b.WriteString("\nchecks:\n")
		for _, c := range tr.Checks {
			fmt.Fprintf(&b, "  %-11s %s (%s): %s\n", c.Name, c.Effect, c.Code, c.Detail)
		}
	}
	if len(tr.Parts) == 0 {
		b.WriteString("\nparts: none\n")
	} else {
		b.WriteString("\nparts:\n")
	}
	for i, p := range tr.Parts {
		label := p.Subject
		if p.Subject == warden.SubjectPath {
			if p.Write {
				label = "path write"
			} else {
				label = "path read"
			}
		}
		fmt.Fprintf(&b, "  %d. %s: %s", i+1, label, p.Value)
		if p.Via != "" {
			fmt.Fprintf(&b, "   (via %s)", p.Via)
		}
		b.WriteString("\n")
		if len(p.Matched) > 0 {
			fmt.Fprintf(&b, "     matched: %s\n", strings.Join(p.Matched, ", "))
		} else {
			b.WriteString("     matched: no rule\n")
		}
		if p.Uncounted {
			b.WriteString("     (does not count: the call was already settled)\n")
		}
		if p.Note != "" {
			if p.Effect == warden.Allow && p.Rule == "" {
				fmt.Fprintf(&b, "     note: %s\n", p.Note)
			} else {
				fmt.Fprintf(&b, "     no allow rule can apply: %s\n", p.Note)
			}
		}
		fmt.Fprintf(&b, "     -> %s (%s)", p.Effect, p.Code)
		switch {
		case p.Rule != "":
			fmt.Fprintf(&b, " by rule %s", p.Rule)
		case p.Grant != "":
			fmt.Fprintf(&b, " by grant %s", p.Grant)
		}
		b.WriteString("\n")
	}
	d := tr.Decision
	fmt.Fprintf(&b, "\ndecision: %s (%s)", d.Decision, d.Code)
	if d.Rule != "" {
		fmt.Fprintf(&b, " by rule %s", d.Rule)
	}
	b.WriteString("\n")
	if tr.Source != "" {
		fmt.Fprintf(&b, "source: %s\n", tr.Source)
	}
	if d.Mode == "audit" && d.Enforced != nil {
		fmt.Fprintf(&b, "mode: audit (enforce mode would %s)\n", *d.Enforced)
	}
	if d.Reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", d.Reason)
	}
	if d.Suggestion != "" {
		fmt.Fprintf(&b, "suggestion: %s\n", d.Suggestion)
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	if d.ModelFormat == "json" {
		b.WriteString("the model gets: the structured error (model_errors: json)\n")
	}
	if d.Sandbox != nil {
		fmt.Fprintf(&b, "confinement: %s (what this kernel enforces: warden sandbox --explain)\n", d.Sandbox)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
