package engine_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

const testPolicy = `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
protected: [".git/**", "**/.env", "secrets/**"]
tools:
  deploy_site: shell
  gmail.delete: delete
roles:
  coordinator:
    tools: [read, list, delegate, todo]
    first: [todo]
    max_depth: 2
  builder:
    tools: [read, list, write, edit, shell, todo]
    first: [read]
    first_enforce: deny
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: Recursive forced deletion is blocked.
    suggestion: Delete specific files.
  - id: no-force-push
    effect: deny
    tool: shell
    command: "git push --force *"
    message: No force push.
    suggestion: Push normally.
  - id: ask-push
    effect: ask
    tool: shell
    command: "git push *"
  - id: warn-curl
    effect: warn
    tool: shell
    command: "curl *"
    message: Network access; say so in your report.
  - id: allow-read
    effect: allow
    tool: shell
    command: ["echo *", "grep *", "ls *", "cat *", "git status *", "cd *", "true"]
  - id: edit-src
    effect: allow
    tool: [write, edit]
    path: ["src/**", "!src/**/*.pem"]
  - id: allow-tmp-abs
    effect: allow
    tool: write
    path: "/tmp/warden-allowed/**"
  - id: spam-cleanup
    effect: allow
    tool: gmail.delete
    intent: "(?i)spam"
    roles: [builder]
    args: {folder: "Spam*"}
  - id: mcp-github
    effect: allow
    tool: "mcp__github__*"
  - id: regex-tool
    effect: deny
    tool: "/^danger_.*$/"
    message: Dangerous tools are off.
    suggestion: Use a safe tool.
`

// newEngine writes a policy into a fresh workspace and compiles it.
func newEngine(t testing.TB, src string) (*engine.Engine, string) {
	t.Helper()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	return compileIn(t, dir, src), dir
}

// compileIn writes the policy src as dir/warden.yaml and compiles it.
func compileIn(t testing.TB, dir, src string) *engine.Engine {
	t.Helper()
	file := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Compile(p, testView())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func bash(cmd string) warden.ToolCall {
	return warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": cmd}}
}

func file(tool, path string) warden.ToolCall {
	return warden.ToolCall{Tool: tool, Args: map[string]any{"file_path": path, "content": "x"}}
}

type want struct {
	effect warden.Effect
	code   warden.Code
	rule   string
}

func TestDecide(t *testing.T) {
	t.Parallel()
	e, dir := newEngine(t, testPolicy)
	// A symlink into a protected folder, and one out of the workspace.
	os.MkdirAll(filepath.Join(dir, "secrets"), 0o755)
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.Symlink(filepath.Join(dir, "secrets"), filepath.Join(dir, "src", "innocent"))
	os.Symlink("/etc", filepath.Join(dir, "src", "etc-link"))
	os.Symlink("../.env", filepath.Join(dir, "src", "dangling-env"))
	home, _ := os.UserHomeDir()

	cases := []struct {
		name string
		call warden.ToolCall
		want want
	}{
		// The bypasses of a deny on rm -rf *.
		{"compound", bash("git status && rm -rf build"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"command substitution", bash("echo $(rm -rf build)"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"backticks", bash("echo `rm -rf build`"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"bash -c", bash("bash -c 'rm -rf build'"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"sudo", bash("sudo rm -rf build"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"env and path", bash("FOO=1 /bin/rm -rf build"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"backslash and swapped flags", bash(`\rm -fr build`), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"split flags", bash("rm -r -f build"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"long flags", bash("rm --recursive --force build"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"find -exec", bash(`find . -exec rm -rf {} \;`), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"xargs", bash("ls | xargs rm -rf"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"heredoc to bash", bash("bash <<EOF\nrm -rf build\nEOF"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"eval", bash("eval rm -rf build"), want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"argv array", warden.ToolCall{Tool: "shell", Args: map[string]any{"command": []any{"bash", "-lc", "rm -rf build"}}}, want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"cmd key", warden.ToolCall{Tool: "exec_command", Args: map[string]any{"cmd": "rm -rf build"}}, want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"mapped tool", warden.ToolCall{Tool: "deploy_site", Args: map[string]any{"command": "rm -rf /srv"}}, want{warden.Deny, warden.CodeRuleDeny, "no-rm-rf"}},
		{"force push flag last", bash("git push origin main --force"), want{warden.Deny, warden.CodeRuleDeny, "no-force-push"}},
		{"force push -f", bash("git push -f"), want{warden.Deny, warden.CodeRuleDeny, "no-force-push"}},
		{"plain push asks", bash("git push origin main"), want{warden.Ask, warden.CodeRuleAsk, "ask-push"}},
		// Quoted text is data.
		{"echo quoted", bash(`echo "rm -rf /"`), want{warden.Allow, warden.CodeAllowed, "allow-read"}},
		{"grep quoted", bash(`grep -r "rm -rf" src`), want{warden.Allow, warden.CodeAllowed, "allow-read"}},
		// Every part must be allowed.
		{"allowed and unknown", bash("echo hi && make"), want{warden.Ask, warden.CodeDefault, ""}},
		{"warn allows with a warning", bash("curl -s example.com"), want{warden.Allow, warden.CodeAllowed, "warn-curl"}},
		// Unparsable and computed.
		{"does not parse", bash("echo 'oops"), want{warden.Deny, warden.CodeUnparsable, ""}},
		{"computed program", bash("$x -rf build"), want{warden.Ask, warden.CodeUnparsable, ""}},
		{"no command", warden.ToolCall{Tool: "Bash", Args: map[string]any{}}, want{warden.Deny, warden.CodeUnparsable, ""}},
		{"command not a string", warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": 42.0}}, want{warden.Deny, warden.CodeUnparsable, ""}},
		// Redirections.
		{"redirect to .env", bash("echo x > .env"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"redirect to /dev/null", bash("echo x > /dev/null"), want{warden.Allow, warden.CodeAllowed, "allow-read"}},
		{"redirect into src", bash("echo x > src/a.txt"), want{warden.Allow, warden.CodeAllowed, "allow-read"}},
		{"redirect outside", bash("echo x > /etc/motd"), want{warden.Deny, warden.CodeOutsideWorkspace, ""}},
		{"redirect to a computed path", bash("echo x > $OUT"), want{warden.Ask, warden.CodeUnparsable, ""}},
		{"tee into .git", bash("echo x | tee .git/config"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"rm a protected file", bash("rm .env"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"cd then write", bash("cd secrets && echo x > key"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		// Path normalisation.
		{"dot-dot", file("Write", "src/../.env"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		// A backslash is part of a file name to the kernel: this is one file in
		// the root named src\..\.env, not .env.
		{"backslashes are literal", file("Write", `src\..\.env`), want{warden.Ask, warden.CodeDefault, ""}},
		{"symlink into protected", file("Write", "src/innocent/key"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"dangling symlink to protected", file("Write", "src/dangling-env"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"symlink out of the workspace", file("Write", "src/etc-link/passwd"), want{warden.Deny, warden.CodeOutsideWorkspace, ""}},
		{"home", file("Write", "~/notes.txt"), want{warden.Deny, warden.CodeOutsideWorkspace, ""}},
		{"absolute into workspace", file("Edit", filepath.Join(dir, "src", "main.go")), want{warden.Allow, warden.CodeAllowed, "edit-src"}},
		{"relative with cwd", warden.ToolCall{Tool: "Edit", Cwd: filepath.Join(dir, "src"), Args: map[string]any{"file_path": "main.go"}}, want{warden.Allow, warden.CodeAllowed, "edit-src"}},
		{"the policy file", file("Edit", "warden.yaml"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"the store", file("Write", ".warden/warden.db"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"excluded path", file("Edit", "src/k/server.pem"), want{warden.Ask, warden.CodeDefault, ""}},
		{"absolute allow outside", file("Write", "/tmp/warden-allowed/x"), want{warden.Allow, warden.CodeAllowed, "allow-tmp-abs"}},
		{"reading outside", warden.ToolCall{Tool: "Read", Args: map[string]any{"file_path": "/etc/hosts"}}, want{warden.Deny, warden.CodeOutsideWorkspace, ""}},
		{"reading protected is fine", warden.ToolCall{Tool: "Read", Args: map[string]any{"file_path": ".env"}}, want{warden.Allow, warden.CodeDefault, ""}},
		{"patch body paths", warden.ToolCall{Tool: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Update File: src/a.go\n*** Add File: .env\n*** End Patch"}}, want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"patch in codex argv", warden.ToolCall{Tool: "shell", Args: map[string]any{"command": []any{"apply_patch", "*** Begin Patch\n*** Delete File: .git/HEAD\n*** End Patch"}}}, want{warden.Deny, warden.CodeProtectedPath, ""}},
		{"paths list", warden.ToolCall{Tool: "read_many_files", Args: map[string]any{"paths": []any{"src/a", "/etc/shadow"}}}, want{warden.Deny, warden.CodeOutsideWorkspace, ""}},
		// Tools, kinds and classes.
		{"unknown tool is destructive", warden.ToolCall{Tool: "mystery", Args: map[string]any{}}, want{warden.Ask, warden.CodeDefault, ""}},
		{"safe kind default", warden.ToolCall{Tool: "TodoWrite", Args: map[string]any{}}, want{warden.Allow, warden.CodeDefault, ""}},
		{"tool glob", warden.ToolCall{Tool: "mcp__github__create_issue", Args: map[string]any{}}, want{warden.Allow, warden.CodeAllowed, "mcp-github"}},
		{"tool regex", warden.ToolCall{Tool: "danger_zone", Args: map[string]any{}}, want{warden.Deny, warden.CodeRuleDeny, "regex-tool"}},
		// Intent, role and args matchers together.
		{"spam cleanup", warden.ToolCall{Tool: "gmail.delete", Role: "builder", Intent: "clean up the SPAM folder", Args: map[string]any{"folder": "Spam/2026"}}, want{warden.Deny, warden.CodeRoleToolDenied, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := e.Decide(c.call, nil).Decision
			if d.Decision != c.want.effect || d.Code != c.want.code || d.Rule != c.want.rule {
				t.Errorf("got %s %s rule=%q (%s), want %s %s rule=%q\n%s", d.Decision, d.Code, d.Rule, d.Reason,
					c.want.effect, c.want.code, c.want.rule, explain(e, c.call))
			}
			if d.Decision != warden.Allow && (d.Reason == "" || d.Suggestion == "") {
				t.Errorf("a %s must carry a reason and a suggestion: %+v", d.Decision, d)
			}
		})
	}
	_ = home
}

func explain(e *engine.Engine, c warden.ToolCall) string {
	tr := e.Explain(c, nil)
	var b strings.Builder
	for _, p := range tr.Parts {
		fmt.Fprintf(&b, "  part %s %q -> %s %s %s matched=%v\n", p.Subject, p.Value, p.Effect, p.Code, p.Rule, p.Matched)
	}
	for _, c := range tr.Checks {
		fmt.Fprintf(&b, "  check %s -> %s %s %s\n", c.Name, c.Effect, c.Code, c.Detail)
	}
	return b.String()
}

func TestIntentArgsRoleMatchers(t *testing.T) {
	t.Parallel()
	src := strings.Replace(testPolicy, "    tools: [read, list, write, edit, shell, todo]\n    first: [read]", "    tools: [read, list, write, edit, shell, todo, delete]\n    first: [read]", 1)
	e, _ := newEngine(t, src)
	base := warden.ToolCall{Tool: "gmail.delete", Role: "builder", Intent: "please remove the spam", Args: map[string]any{"folder": "Spam"}}
	if d := e.Decide(base, nil).Decision; d.Decision != warden.Allow || d.Rule != "spam-cleanup" {
		t.Fatalf("all matchers hold: %+v", d)
	}
	for name, mod := range map[string]func(c *warden.ToolCall){
		"intent":    func(c *warden.ToolCall) { c.Intent = "delete my inbox" },
		"no intent": func(c *warden.ToolCall) { c.Intent = "" },
		"role":      func(c *warden.ToolCall) { c.Role = "" },
		"args":      func(c *warden.ToolCall) { c.Args = map[string]any{"folder": "Inbox"} },
		"args type": func(c *warden.ToolCall) { c.Args = map[string]any{"folder": 3.0} },
	} {
		c := base
		mod(&c)
		if d := e.Decide(c, nil).Decision; d.Decision != warden.Ask || d.Code != warden.CodeDefault {
			t.Errorf("%s differs: want the default ask, got %+v", name, d)
		}
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, testPolicy)
	task := func(depth int) warden.ToolCall {
		return warden.ToolCall{Tool: "Task", Role: "coordinator", Depth: depth, Args: map[string]any{"prompt": "x"}}
	}
	if d := e.Decide(task(1), nil).Decision; d.Code == warden.CodeDepthExceeded {
		t.Errorf("depth 1 < 2: %+v", d)
	}
	if d := e.Decide(task(2), nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeDepthExceeded {
		t.Errorf("depth 2 >= 2: %+v", d)
	}
	// Role tool list: the coordinator has no shell, even for an allowed command.
	c := bash("echo hi")
	c.Role = "coordinator"
	if d := e.Decide(c, nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeRoleToolDenied {
		t.Errorf("role tools: %+v", d)
	}
	// First tool: warn for the coordinator, deny for the builder, and only
	// on the session's first call.
	first := &engine.Session{First: true}
	r := warden.ToolCall{Tool: "Read", Role: "coordinator", Args: map[string]any{"file_path": "a"}}
	d := e.Decide(r, first).Decision
	if d.Decision != warden.Allow || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "TodoWrite") && !strings.Contains(d.Warnings[0], "todo") {
		t.Errorf("first tool warn: %+v", d)
	}
	if d := e.Decide(r, &engine.Session{}).Decision; len(d.Warnings) != 0 {
		t.Errorf("not the first call: %+v", d)
	}
	b := bash("echo hi")
	b.Role = "builder"
	if d := e.Decide(b, first).Decision; d.Decision != warden.Deny || d.Code != warden.CodeFirstTool {
		t.Errorf("first tool deny: %+v", d)
	}
	if d := e.Decide(b, &engine.Session{}).Decision; d.Decision != warden.Allow {
		t.Errorf("builder after the first call: %+v", d)
	}
	// A role the policy does not define is denied, ROLE_UNKNOWN: a
	// misspelt or differently cased role never loses the right one's
	// restrictions, and the model is told it is the setup, not itself.
	for _, role := range []string{"stranger", "Builder", "builder "} {
		u := bash("echo hi")
		u.Role = role
		if d := e.Decide(u, nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeRoleUnknown || d.Recoverable ||
			!strings.Contains(d.Reason, "does not define (its roles are: builder, coordinator)") || !strings.Contains(d.Reason, "not something you did") {
			t.Errorf("undefined role %q: %+v", role, d)
		}
	}
	// A policy without roles has no restrictions a role could lose: the
	// call is decided as without a role, and the model gets no warning.
	plain, _ := newEngine(t, "version: 1\ndefault: allow\n")
	u := bash("echo hi")
	u.Role = "builder"
	if d := plain.Decide(u, nil).Decision; d.Decision != warden.Allow || len(d.Warnings) != 0 {
		t.Errorf("a role under a policy without roles: %+v", d)
	}
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	// Protected beats an explicit allow; deny beats ask beats allow; rule
	// order does not matter.
	src := `version: 1
default: allow
protected: ["conf/**"]
rules:
  - {id: allow-all-writes, effect: allow, tool: write, args: {}}
  - {id: ask-conf, effect: ask, tool: write, path: "conf/**"}
  - {id: allow-x, effect: allow, tool: shell, command: "x *"}
  - {id: ask-x, effect: ask, tool: shell, command: "x -a *"}
  - {id: deny-x, effect: deny, tool: shell, command: "x -a -b *", message: no, suggestion: no}
`
	e, _ := newEngine(t, src)
	for _, c := range []struct {
		call warden.ToolCall
		want want
	}{
		{file("Write", "conf/app.yaml"), want{warden.Deny, warden.CodeProtectedPath, ""}},
		{file("Write", "other.txt"), want{warden.Allow, warden.CodeAllowed, "allow-all-writes"}},
		{bash("x y"), want{warden.Allow, warden.CodeAllowed, "allow-x"}},
		{bash("x -a y"), want{warden.Ask, warden.CodeRuleAsk, "ask-x"}},
		{bash("x -ba y"), want{warden.Deny, warden.CodeRuleDeny, "deny-x"}},
		{bash("unknown"), want{warden.Allow, warden.CodeDefault, ""}},
	} {
		d := e.Decide(c.call, nil).Decision
		if d.Decision != c.want.effect || d.Code != c.want.code || d.Rule != c.want.rule {
			t.Errorf("%v: got %s %s %q, want %+v", c.call.Args, d.Decision, d.Code, d.Rule, c.want)
		}
	}
}

func TestAuditMode(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, strings.Replace(testPolicy, "version: 1\n", "version: 1\nmode: audit\n", 1))
	d := e.Decide(bash("rm -rf build"), nil).Decision
	if d.Decision != warden.Allow || d.Mode != "audit" || d.Enforced == nil || *d.Enforced != warden.Deny || d.Code != warden.CodeRuleDeny {
		t.Errorf("audit mode: %+v", d)
	}
}

func TestIntents(t *testing.T) {
	t.Parallel()
	src := testPolicy + `intents:
  file: .orchestration/active_intents.yaml
  require: [write, edit, delete]
  out_of_scope: ask
`
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".orchestration"), 0o755)
	os.WriteFile(filepath.Join(dir, ".orchestration", "active_intents.yaml"), []byte(`active_intents:
  - id: INT-001
    name: JWT migration
    status: IN_PROGRESS
    owned_scope: ["src/auth/**", "!src/auth/legacy/**"]
`), 0o644)
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(src), 0o644)
	p, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Compile(p, testView())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(id, path string) warden.ToolCall {
		return warden.ToolCall{Tool: "Edit", IntentID: id, Args: map[string]any{"file_path": path}}
	}
	for _, c := range []struct {
		call warden.ToolCall
		want want
	}{
		{edit("", "src/auth/jwt.go"), want{warden.Deny, warden.CodeMissingIntent, ""}},
		{edit("INT-404", "src/auth/jwt.go"), want{warden.Deny, warden.CodeIntentNotFound, ""}},
		{edit("INT-001", "src/auth/jwt.go"), want{warden.Allow, warden.CodeAllowed, "edit-src"}},
		{edit("INT-001", "src/auth/legacy/old.go"), want{warden.Ask, warden.CodeScopeViolation, ""}},
		{edit("INT-001", "src/billing/pay.go"), want{warden.Ask, warden.CodeScopeViolation, ""}},
		{warden.ToolCall{Tool: "Read", Args: map[string]any{"file_path": "src/x.go"}}, want{warden.Allow, warden.CodeDefault, ""}},
		// The intents file itself is protected: an agent cannot widen its scope.
		{edit("INT-001", ".orchestration/active_intents.yaml"), want{warden.Deny, warden.CodeProtectedPath, ""}},
	} {
		d := e.Decide(c.call, nil).Decision
		if d.Decision != c.want.effect || d.Code != c.want.code || d.Rule != c.want.rule {
			t.Errorf("%s %v: got %s %s %q (%s), want %+v", c.call.IntentID, c.call.Args, d.Decision, d.Code, d.Rule, d.Reason, c.want)
		}
	}
}

func TestGrants(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, testPolicy)
	call := bash("make test")
	if d := e.Decide(call, nil).Decision; d.Decision != warden.Ask {
		t.Fatalf("without a grant: %+v", d)
	}
	tr := e.Explain(call, nil)
	if len(tr.Parts) != 1 || tr.Parts[0].Value != "make test" || tr.Parts[0].Subject != warden.SubjectCommand {
		t.Fatalf("parts: %+v", tr.Parts)
	}
	g := warden.Grant{ID: "g1", Tool: "Bash", Subject: warden.SubjectCommand, Value: "make test", UsesLeft: -1}
	s := &engine.Session{Grants: []warden.Grant{g}}
	d := e.Decide(call, s).Decision
	if d.Decision != warden.Allow || d.Rule != "grant:g1" {
		t.Fatalf("exact grant: %+v", d)
	}
	if tr := e.Explain(call, s); len(tr.Grants) != 1 || tr.Grants[0] != "g1" {
		t.Errorf("trace grants: %v", tr.Grants)
	}
	// A grant decides also when a rule allows the call's other parts: the
	// audit trail names it (warden audit --rule grant:ID).
	if d := e.Decide(bash("git status && make test"), s).Decision; d.Decision != warden.Allow || d.Rule != "grant:g1" {
		t.Errorf("grant beside an allow rule: %+v", d)
	}
	// Exactly as wide as the call: another command, tool or role is not covered.
	for name, c := range map[string]warden.ToolCall{
		"other args": bash("make install"),
		"other tool": {Tool: "run_shell_command", Args: map[string]any{"command": "make test"}},
		"other role": {Tool: "Bash", Role: "builder", Args: map[string]any{"command": "make test"}},
		"compound":   bash("make test && make deploy"),
	} {
		if d := e.Decide(c, s).Decision; d.Decision == warden.Allow {
			t.Errorf("%s: a grant must not widen: %+v", name, d)
		}
	}
	// A widened pattern covers more, only when a human set it.
	wide := &engine.Session{Grants: []warden.Grant{{ID: "g2", Tool: "Bash", Subject: warden.SubjectCommand, Pattern: "make *", UsesLeft: -1}}}
	if d := e.Decide(bash("make install"), wide).Decision; d.Decision != warden.Allow {
		t.Errorf("pattern grant: %+v", d)
	}
	// A grant never overrides a deny or a protected path.
	all := &engine.Session{Grants: []warden.Grant{
		{ID: "g3", Tool: "Bash", Subject: warden.SubjectCommand, Pattern: "*", UsesLeft: -1},
		{ID: "g4", Tool: "Write", Subject: warden.SubjectPath, Pattern: "**", UsesLeft: -1},
	}}
	if d := e.Decide(bash("rm -rf build"), all).Decision; d.Decision != warden.Deny {
		t.Errorf("grant over deny: %+v", d)
	}
	if d := e.Decide(file("Write", ".env"), all).Decision; d.Decision != warden.Deny {
		t.Errorf("grant over protected: %+v", d)
	}
	// Session-scoped grants and used-up grants.
	sg := &engine.Session{Grants: []warden.Grant{{ID: "g5", Tool: "Bash", Session: "s1", Subject: warden.SubjectCommand, Value: "make test", UsesLeft: -1}}}
	in, out := call, call
	in.Session, out.Session = "s1", "s2"
	if d := e.Decide(in, sg).Decision; d.Decision != warden.Allow {
		t.Errorf("session grant in its session: %+v", d)
	}
	if d := e.Decide(out, sg).Decision; d.Decision == warden.Allow {
		t.Errorf("session grant in another session: %+v", d)
	}
	used := &engine.Session{Grants: []warden.Grant{{ID: "g6", Tool: "Bash", Subject: warden.SubjectCommand, Value: "make test", UsesLeft: 0}}}
	if d := e.Decide(call, used).Decision; d.Decision == warden.Allow {
		t.Errorf("used-up grant: %+v", d)
	}
	// A call grant for a tool with neither command nor path.
	mail := warden.ToolCall{Tool: "gmail.delete", Args: map[string]any{"id": "42"}}
	v := e.Explain(mail, nil).Parts[0].Value
	cg := &engine.Session{Grants: []warden.Grant{{ID: "g7", Tool: "gmail.delete", Subject: warden.SubjectCall, Value: v, UsesLeft: -1}}}
	if d := e.Decide(mail, cg).Decision; d.Decision != warden.Allow {
		t.Errorf("call grant (%s): %+v", v, d)
	}
	mail.Args = map[string]any{"id": "43"}
	if d := e.Decide(mail, cg).Decision; d.Decision == warden.Allow {
		t.Errorf("call grant for other args: %+v", d)
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, testPolicy)
	calls := []warden.ToolCall{bash("git status && rm -rf build"), bash("echo hi"), file("Write", "src/a.go"), bash("echo x > .env")}
	want := make([]warden.Decision, len(calls))
	for i, c := range calls {
		want[i] = e.Decide(c, nil).Decision
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := i % len(calls)
				if d := e.Decide(calls[k], nil).Decision; d.Decision != want[k].Decision || d.Code != want[k].Code {
					t.Errorf("concurrent decision differs: %+v vs %+v", d, want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestExplainAgreesWithDecide checks that tracing never changes a decision:
// Explain's decision equals Decide's for every kind of call, including the
// ones settled early (role without the tool, a command a rule denies).
func TestExplainAgreesWithDecide(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, testPolicy)
	calls := []warden.ToolCall{
		bash("git status && rm -rf build > out.log"), bash("sudo rm -rf .git"), bash("echo x > .env"),
		bash("echo hi && make"), bash("$x -rf y"), bash("echo 'oops"), file("Write", "src/../.env"),
		file("Edit", "src/a.go"), {Tool: "Edit", Role: "coordinator", Args: map[string]any{"file_path": ".env"}},
		{Tool: "Task", Role: "coordinator", Depth: 5, Args: map[string]any{}}, bash("curl x | bash; git push -f"),
	}
	for _, c := range calls {
		d := e.Decide(c, nil).Decision
		x := e.Explain(c, nil).Decision
		if d.Decision != x.Decision || d.Code != x.Code || d.Rule != x.Rule || d.Reason != x.Reason ||
			strings.Join(d.Matched, ",") != strings.Join(x.Matched, ",") || strings.Join(d.Warnings, ",") != strings.Join(x.Warnings, ",") {
			t.Errorf("%v:\n decide  %+v\n explain %+v", c.Args, d, x)
		}
	}
}

func TestExplainCarriesSource(t *testing.T) {
	t.Parallel()
	src := strings.Replace(testPolicy, "    suggestion: Push normally.\n",
		"    suggestion: Push normally.\n    source: Never force-push.\n", 1)
	e, _ := newEngine(t, src)
	if tr := e.Explain(bash("git push --force origin main"), nil); tr.Decision.Rule != "no-force-push" || tr.Source != "Never force-push." {
		t.Errorf("force push: rule %q, source %q", tr.Decision.Rule, tr.Source)
	}
	if tr := e.Explain(bash("rm -rf build"), nil); tr.Decision.Rule != "no-rm-rf" || tr.Source != "" {
		t.Errorf("a rule written by hand has no source: rule %q, source %q", tr.Decision.Rule, tr.Source)
	}
}

// testView is the view of the file system the tests' engines read: the
// view hookd and serve keep across decisions, checked (Refresh) before
// every read, as they check it before every decision (the tests change the
// disk between decisions, and a few within one line's reads).
func testView() engine.Workspace { return refreshing{workspace.New()} }

// refreshing is a workspace.View checked before each read but a folder's
// entries (a walk of a folder starts with a Stat of it, which checks).
type refreshing struct{ *workspace.View }

func (r refreshing) Lstat(name string) (fs.FileInfo, error) { r.Refresh(); return r.View.Lstat(name) }
func (r refreshing) Stat(name string) (fs.FileInfo, error)  { r.Refresh(); return r.View.Stat(name) }
func (r refreshing) Readlink(name string) (string, error)   { r.Refresh(); return r.View.Readlink(name) }
func (r refreshing) ReadFile(name string) ([]byte, error)   { r.Refresh(); return r.View.ReadFile(name) }
