package session_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

// historyOf returns a session's history entries as "ACTION RESULT".
func historyOf(t *testing.T, st warden.Store, sid string) []string {
	t.Helper()
	ps, err := st.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range ps.History {
		if h.Session == sid {
			out = append(out, h.Action+" "+h.Result)
		}
	}
	return out
}

// TestHistoryTwoRules: a call that breaks two rules has a history entry
// for each (seed 000 records a first-tool violation and the deny of the
// same call apart), on SQLite (its group commit) and on PostgreSQL (a
// transaction of its own), and for a call outside a session; a call that
// breaks one has one.
func TestHistoryTwoRules(t *testing.T) {
	stores := map[string]func(t *testing.T) warden.Store{
		"sqlite": func(t *testing.T) warden.Store {
			st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.DefaultFile))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) warden.Store {
			st, err := postgres.Open(ctx, pgtest.Schema(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			e := setup(t, testPolicy)
			eng, err := engine.Compile(e.pol, workspace.Live())
			if err != nil {
				t.Fatal(err)
			}
			st := open(t)
			tr := session.New(eng, st)
			decide := func(call warden.ToolCall) warden.Decision {
				t.Helper()
				if call.Args == nil {
					call.Args = map[string]any{}
				}
				res, err := tr.Decide(ctx, call, session.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return res.Decision
			}
			// builder's first tool must be a read (a warning): a force push
			// first breaks that rule and the no-force-push rule.
			if d := decide(bash("b1", "builder", "git push --force origin main")); d.Decision != warden.Deny {
				t.Fatalf("force push: %+v", d)
			}
			if got := historyOf(t, st, "b1"); len(got) != 2 || got[0] != "violation:first_tool:Bash fail" || !strings.HasPrefix(got[1], "violation:"+strings.ToLower(string(warden.CodeRuleDeny))+":Bash fail") {
				t.Errorf("first tool and a deny rule: history %q", got)
			}
			// strict may not write, and must read first (first_enforce:
			// deny): a write first breaks both.
			if d := decide(warden.ToolCall{Tool: "Write", Session: "s1", Role: "strict", Args: map[string]any{"file_path": "x.go", "content": "x"}}); d.Decision != warden.Deny {
				t.Fatalf("strict write: %+v", d)
			}
			if got := historyOf(t, st, "s1"); len(got) != 2 || got[0] != "violation:first_tool:Write fail" || got[1] != "violation:role_tool_denied:Write fail" {
				t.Errorf("first tool and the role's tools: history %q", got)
			}
			// strict must read first (first_enforce: deny), and a force
			// push is denied by a rule: the first-tool deny settles the
			// call, and the deny rule it also met is recorded too.
			if d := decide(bash("s2", "strict", "git push --force origin main")); d.Decision != warden.Deny {
				t.Fatalf("strict force push: %+v", d)
			}
			if got := historyOf(t, st, "s2"); len(got) != 2 || got[0] != "violation:first_tool:Bash fail" || !strings.HasPrefix(got[1], "violation:"+strings.ToLower(string(warden.CodeRuleDeny))+":Bash fail") {
				t.Errorf("a first-tool deny and a deny rule: history %q", got)
			}
			// One rule broken, one entry.
			if d := decide(warden.ToolCall{Tool: "Read", Session: "b3", Role: "builder", Args: map[string]any{"file_path": "README.md"}}); d.Decision != warden.Allow {
				t.Fatalf("read first: %+v", d)
			}
			decide(bash("b3", "builder", "git push --force origin dev"))
			if got := historyOf(t, st, "b3"); len(got) != 1 || !strings.HasPrefix(got[0], "violation:rule_deny:Bash fail") {
				t.Errorf("a deny alone: history %q", got)
			}
			// A first-tool warning alone: one warn entry.
			decide(bash("b2", "builder", "git status --short"))
			if got := historyOf(t, st, "b2"); len(got) != 1 || got[0] != "violation:first_tool:Bash warn" {
				t.Errorf("a first-tool warning: history %q", got)
			}
		})
	}
}

// TestOutcomeUnknown: the history records an outcome as the host gave
// it: pass, fail, or unknown when the host did not say (never a pass).
func TestOutcomeUnknown(t *testing.T) {
	e := setup(t, testPolicy)
	e.tr.Start(ctx, session.StartOptions{ID: "o", Role: "builder"})
	for _, o := range []string{warden.OutcomeOK, warden.OutcomeFail, ""} {
		if err := e.tr.RecordOutcome(ctx, "o", "task", o, "the subagent's answer"); err != nil {
			t.Fatal(err)
		}
	}
	got := historyOf(t, e.store, "o")
	want := []string{"outcome:task the subagent's answer pass", "outcome:task the subagent's answer fail", "outcome:task the subagent's answer unknown"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("history %q, want %q", got, want)
	}
	if session.HistoryResult("") != "unknown" || session.HistoryResult(warden.OutcomeOK) != "pass" {
		t.Error("HistoryResult")
	}
}
