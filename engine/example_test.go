package engine_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// A policy is loaded and compiled once; Decide is then pure and safe for
// concurrent use.
func Example() {
	dir, _ := os.MkdirTemp("", "warden-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(`version: 1
default: ask
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: Recursive forced deletion is blocked.
    suggestion: Delete specific files, or ask the user to do it.
  - id: allow-git-read
    effect: allow
    tool: shell
    command: ["git status *", "git diff *"]
`), 0o644)
	p, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := engine.Compile(p, workspace.New())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, cmd := range []string{"git status", "git status && rm -rf build", "make deploy"} {
		d := e.Decide(warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": cmd}}, nil).Decision
		fmt.Printf("%-28s %-5s %-10s %s\n", cmd, d.Decision, d.Code, d.Rule)
	}
	// Output:
	// git status                   allow ALLOWED    allow-git-read
	// git status && rm -rf build   deny  RULE_DENY  no-rm-rf
	// make deploy                  ask   DEFAULT
}

// Explain shows the parts of a call and what decided each.
func ExampleEngine_Explain() {
	dir, _ := os.MkdirTemp("", "warden-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(`version: 1
protected: ["**/.env"]
rules:
  - {id: allow-echo, effect: allow, tool: shell, command: "echo *"}
`), 0o644)
	p, _ := policy.Load(filepath.Join(dir, "warden.yaml"))
	e, _ := engine.Compile(p, workspace.New())
	tr := e.Explain(warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "echo TOKEN=1 > .env"}}, nil)
	for _, part := range tr.Parts {
		fmt.Println(part.Subject, part.Value, part.Effect, part.Code)
	}
	fmt.Println(tr.Decision.Decision, tr.Decision.Code)
	// Output:
	// command echo TOKEN=1 allow ALLOWED
	// path .env deny PROTECTED_PATH
	// deny PROTECTED_PATH
}

// A grant a human gave ("always") turns an ask into an allow for exactly
// the call it was given for; the Result names the grants the session layer
// then counts.
func ExampleEngine_Decide() {
	dir, _ := os.MkdirTemp("", "warden-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\ndefault: ask\n"), 0o644)
	p, _ := policy.Load(filepath.Join(dir, "warden.yaml"))
	e, _ := engine.Compile(p, workspace.New())
	s := &engine.Session{Grants: []warden.Grant{{ID: "g1", Tool: "Bash", Subject: warden.SubjectCommand, Value: "make test", UsesLeft: -1}}}
	for _, cmd := range []string{"make test", "make deploy"} {
		r := e.Decide(warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": cmd}}, s)
		fmt.Println(cmd, r.Decision.Decision, r.Decision.Rule, r.Grants)
	}
	// Output:
	// make test allow grant:g1 [g1]
	// make deploy ask  []
}
