package session_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// The second red-team pass on approvals and grants: an answer a human gave
// for one call must not let another call through. Each finding was
// allowed before its fix; the "handled" cases were tried and refused
// already.

// approveOnce queues the call's approval, answers it with scope, and
// returns the approval.
func approveAnswer(t *testing.T, e *env, call warden.ToolCall, scope string) warden.Approval {
	t.Helper()
	r := e.decide(t, call, session.Options{})
	if r.Decision.Decision != warden.Ask || r.Approval == nil {
		t.Fatalf("%v: %+v, want an ask with an approval", call.Args, r.Decision)
	}
	a, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: scope, By: "me"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRedteam2ApprovalForAnotherCall(t *testing.T) {
	for _, c := range []struct {
		name            string
		approved, other warden.ToolCall
	}{
		// Findings: the other call took the answer given for the first.
		{"relative file_path from another folder",
			warden.ToolCall{Tool: "Write", Session: "s1", Cwd: ".", Args: map[string]any{"file_path": "deploy.yaml", "content": "x"}},
			warden.ToolCall{Tool: "Write", Session: "s2", Cwd: "sub", Args: map[string]any{"file_path": "deploy.yaml", "content": "x"}}},
		{"a shell command in another working folder",
			warden.ToolCall{Tool: "bash", Session: "s1", Args: map[string]any{"command": "make deploy", "workdir": "."}},
			warden.ToolCall{Tool: "bash", Session: "s2", Args: map[string]any{"command": "make deploy", "workdir": "sub"}}},
		{"a shell command from another cwd",
			warden.ToolCall{Tool: "Bash", Session: "s1", Args: map[string]any{"command": "make deploy"}},
			warden.ToolCall{Tool: "Bash", Session: "s2", Cwd: "sub", Args: map[string]any{"command": "make deploy"}}},
		{"input redirection",
			bash("s1", "", "sh < setup.sh"), bash("s2", "", "sh < evil.sh")},
		{"pipe into a shell",
			bash("s1", "", "cat setup.sh | sh"), bash("s2", "", "cat evil.sh | sh")},
		{"here-document",
			bash("s1", "", "python3 - <<'EOF'\nprint(1)\nEOF"), bash("s2", "", "python3 - <<'EOF'\nimport shutil; shutil.rmtree('/')\nEOF")},
		{"here-string",
			bash("s1", "", "bash <<< 'echo hi'"), bash("s2", "", "bash <<< 'rm -rf ~'")},
		// Handled: the arguments of a file tool are the call.
		{"other content",
			warden.ToolCall{Tool: "Write", Session: "s1", Args: map[string]any{"file_path": "deploy.yaml", "content": "x"}},
			warden.ToolCall{Tool: "Write", Session: "s2", Args: map[string]any{"file_path": "deploy.yaml", "content": "evil"}}},
		{"other role",
			warden.ToolCall{Tool: "Bash", Session: "s1", Role: "builder", Args: map[string]any{"command": "make deploy"}},
			warden.ToolCall{Tool: "Bash", Session: "s2", Role: "strict", Args: map[string]any{"command": "make deploy"}}},
		{"a prefix of the command",
			bash("s1", "", "make deploy-docs"), bash("s2", "", "make deploy")},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, testPolicy)
			os.MkdirAll(filepath.Join(e.dir, "sub"), 0o755)
			if c.other.Role == "strict" {
				// A first call of the strict role's session, so that only
				// the approval could decide the call.
				e.decide(t, warden.ToolCall{Tool: "Read", Session: "s2", Role: "strict", Args: map[string]any{"file_path": "x"}}, session.Options{})
			}
			approveAnswer(t, e, c.approved, warden.ScopeOnce)
			if r := e.decide(t, c.other, session.Options{}); r.Decision.Decision == warden.Allow {
				t.Errorf("the answer for %v let %v (cwd %q) through: %+v", c.approved.Args, c.other.Args, c.other.Cwd, r.Decision)
			}
			// The approved call itself still takes its answer.
			if r := e.decide(t, c.approved, session.Options{}); r.Decision.Decision != warden.Allow {
				t.Errorf("the approved call %v: %+v", c.approved.Args, r.Decision)
			}
		})
	}
}

// An always answer grants exactly the call: a command that reads its input
// from elsewhere on the line is granted with that line.
func TestRedteam2GrantForAnotherInput(t *testing.T) {
	e := setup(t, testPolicy)
	approveAnswer(t, e, bash("s1", "", "cat setup.sh | sh"), warden.ScopeAlways)
	if r := e.decide(t, bash("s1", "", "cat setup.sh | sh"), session.Options{HostPrompts: true}); r.Decision.Decision != warden.Allow {
		t.Errorf("the granted line: %+v", r.Decision)
	}
	for _, cmd := range []string{"cat evil.sh | sh", "sh < evil.sh", "sh"} {
		if r := e.decide(t, bash("s1", "", cmd), session.Options{HostPrompts: true}); r.Decision.Decision == warden.Allow {
			t.Errorf("a grant for cat setup.sh | sh allowed %q: %+v", cmd, r.Decision)
		}
	}
	// Handled: a grant used up, or for one session, reaches no other call.
	e = setup(t, testPolicy)
	r := e.decide(t, bash("s1", "", "make deploy"), session.Options{})
	if _, err := session.Approve(ctx, e.store, r.Approval.ID, session.Answer{Scope: warden.ScopeSession, Uses: 1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := e.decide(t, bash("s1", "", "make deploy"), session.Options{HostPrompts: true}); r.Decision.Decision != warden.Allow {
		t.Errorf("the one use: %+v", r.Decision)
	}
	for _, c := range []warden.ToolCall{bash("s1", "", "make deploy"), bash("s9", "", "make deploy")} {
		if r := e.decide(t, c, session.Options{HostPrompts: true}); r.Decision.Decision == warden.Allow {
			t.Errorf("a used-up or other session's grant: %s %+v", c.Session, r.Decision)
		}
	}
}

// The arguments of a shell tool that change how its command runs are part
// of the call an answer is for; the ones that describe it are not.
func TestRedteam2ApprovalShellArguments(t *testing.T) {
	exec := func(sess string, args map[string]any) warden.ToolCall {
		return warden.ToolCall{Tool: "exec_command", Session: sess, Args: args}
	}
	// Finding: the answer for one shell program let another through.
	e := setup(t, testPolicy)
	approveAnswer(t, e, exec("s1", map[string]any{"cmd": "git status", "shell": "./tools/sh1"}), warden.ScopeOnce)
	if r := e.decide(t, exec("s2", map[string]any{"cmd": "git status", "shell": "./tools/evil"}), session.Options{}); r.Decision.Decision == warden.Allow {
		t.Errorf("the answer for shell ./tools/sh1 let shell ./tools/evil through: %+v", r.Decision)
	}
	// Finding: run in the sandbox, approved; run outside it, not approved.
	approveAnswer(t, e, bash("s1", "", "make deploy"), warden.ScopeOnce)
	out := bash("s2", "", "make deploy")
	out.Args["dangerouslyDisableSandbox"] = true
	if r := e.decide(t, out, session.Options{}); r.Decision.Decision == warden.Allow {
		t.Errorf("the answer for make deploy let it through outside the sandbox: %+v", r.Decision)
	}
	// Allowed: another description is the same call.
	e = setup(t, testPolicy)
	c := bash("s1", "", "make deploy")
	c.Args["description"] = "Deploy"
	approveAnswer(t, e, c, warden.ScopeOnce)
	c = bash("s2", "", "make deploy")
	c.Args["description"] = "Deploy the site"
	if r := e.decide(t, c, session.Options{}); r.Decision.Decision != warden.Allow {
		t.Errorf("another description: %+v", r.Decision)
	}
}
