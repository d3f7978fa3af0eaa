package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

// A hook's view of a session: start it (governance text), decide calls
// (first tool, approvals), answer an approval "always", and see the grant
// honoured.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "warden-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(testPolicy), 0o644)
	pol, _ := policy.Load(filepath.Join(dir, "warden.yaml"))
	eng, _ := engine.Compile(pol, workspace.New())
	store, _ := sqlite.Open(ctx, filepath.Join(dir, sqlite.DefaultFile))
	defer store.Close()
	tr := session.New(eng, store)

	_, text, _ := tr.Start(ctx, session.StartOptions{ID: "s1", Role: "builder", Host: "claude"})
	fmt.Println(strings.Split(text, "\n")[0])

	call := func(cmd string) session.Result {
		res, _ := tr.Decide(ctx, warden.ToolCall{Tool: "Bash", Session: "s1", Args: map[string]any{"command": cmd}}, session.Options{})
		return res
	}
	r := call("git status")
	fmt.Println(r.Decision.Decision, r.Decision.Code, len(r.Decision.Warnings), "warning")
	r = call("git push origin main")
	fmt.Println(r.Decision.Decision, r.Decision.Code, r.Approval.Status)
	session.Approve(ctx, store, r.Approval.ID, session.Answer{Scope: warden.ScopeAlways}, r.Approval.CreatedAt)
	r = call("git push origin main")
	fmt.Println(r.Decision.Decision, strings.HasPrefix(r.Decision.Rule, "grant:"))
	fmt.Println(r.Session.Calls, "calls,", r.Session.Violations, "violation, first tool", r.Session.FirstTool)
	// Output:
	// ## WARDEN GOVERNANCE
	// allow ALLOWED 1 warning
	// ask RULE_ASK pending
	// allow true
	// 3 calls, 1 violation, first tool Bash
}
