package importer_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/importer"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml")

type decisionCase struct {
	tool string
	args map[string]any
	want warden.Effect
}

// roleCase is a call made by an agent of the host, decided with its role.
type roleCase struct {
	role string
	tool string
	args map[string]any
	want warden.Effect
	code warden.Code // "" means any
}

func task(agent string) map[string]any {
	return map[string]any{"description": "d", "prompt": "p", "subagent_type": agent}
}

func sh(cmd string) map[string]any { return map[string]any{"command": cmd} }

// importFor is the import of a host, as `warden import` runs it.
func importFor(name string) func(file string, data []byte) (*importer.Policy, error) {
	h, _ := host.Lookup(name)
	imp := h.(kit.Importer)
	return func(file string, data []byte) (*importer.Policy, error) {
		return imp.Import(importer.Source{File: file, Data: data, YAML: yaml.Unmarshal})
	}
}

// TestImport imports each host's example, compares the policy with its
// golden file, loads it with policy.Load and checks decisions through the
// engine: the import must mean what the host's settings meant.
func TestImport(t *testing.T) {
	for _, tc := range []struct {
		file     string
		imp      func(string, []byte) (*importer.Policy, error)
		warnings []string
		cases    []decisionCase
		roles    []roleCase
	}{
		{
			file: "claude-settings.json", imp: importFor("claude"),
			warnings: []string{"additionalDirectories", `"Frobnicate(x)"`, "acceptEdits"},
			cases: []decisionCase{
				{"Bash", sh("npm run test"), warden.Allow},
				{"Bash", sh("npm run test -- --watch"), warden.Allow},
				// npm reads --watch as its own configuration, one warden
				// does not know (the script does not get it).
				{"Bash", sh("npm run test --watch"), warden.Ask},
				{"Bash", sh("git diff HEAD"), warden.Allow},
				{"Bash", sh("git push origin main"), warden.Ask},
				{"Bash", sh("npm run test && curl http://x"), warden.Deny},
				{"Bash", sh("sudo ls"), warden.Deny},
				{"Bash", sh("make"), warden.Ask},
				{"Read", map[string]any{"file_path": "secrets/key.pem"}, warden.Deny},
				{"Read", map[string]any{"file_path": "config/.env"}, warden.Deny},
				{"Read", map[string]any{"file_path": "README.md"}, warden.Allow},
				{"Edit", map[string]any{"file_path": "src/a.go", "old_string": "a", "new_string": "b"}, warden.Allow},
				{"mcp__github__get_issue", map[string]any{}, warden.Allow},
				{"mcp__slack__post", map[string]any{}, warden.Ask},
			},
		},
		{
			file: "opencode.json", imp: importFor("opencode"),
			warnings: []string{"doom_loop", "last matching pattern"},
			cases: []decisionCase{
				{"bash", sh("git status"), warden.Allow},
				{"bash", sh("git diff HEAD"), warden.Allow},
				{"bash", sh("git push origin"), warden.Ask},
				{"bash", sh("git status && rm -rf x"), warden.Deny},
				{"bash", sh("make"), warden.Ask},
				{"webfetch", map[string]any{"url": "https://x"}, warden.Deny},
				{"websearch", map[string]any{"query": "x"}, warden.Deny},
				{"github_create_issue", map[string]any{}, warden.Deny},
				{"read", map[string]any{"filePath": "a.go"}, warden.Allow},
				{"edit", map[string]any{"filePath": "a.go"}, warden.Ask},
				{"write", map[string]any{"filePath": "/etc/passwd", "content": "x"}, warden.Deny},
			},
		},
		{
			// Specific denies and allow-lists as Claude Code
			// settings.
			file: "claude-seeds.json", imp: importFor("claude"),
			warnings: []string{"permissions.disableBypassPermissionsMode is not carried over"},
			cases: []decisionCase{
				{"Task", task("idumb-builder"), warden.Deny},
				{"Agent", task("idumb-low-validator"), warden.Deny},
				{"Task", task("general-purpose"), warden.Ask},
				{"Bash", sh("rm -rf build"), warden.Deny},
				{"Bash", sh("rm -rfv build"), warden.Deny},
				{"Bash", sh("chmod 777 x"), warden.Deny},
				{"Bash", sh("git status"), warden.Allow},
				{"Bash", sh("git diff HEAD"), warden.Allow},
				{"Bash", sh("npm test"), warden.Allow},
				{"Bash", sh("git push"), warden.Ask},
				{"Edit", map[string]any{"file_path": "docs/a.md", "old_string": "a", "new_string": "b"}, warden.Allow},
				{"Edit", map[string]any{"file_path": "main.go", "old_string": "a", "new_string": "b"}, warden.Ask},
			},
		},
		{
			// A top-level task {"*": "deny"} keeps each agent's own
			// task setting: the coordinator still delegates.
			file: "opencode-task-deny.json", imp: importFor("opencode"),
			warnings: []string{`permission.task["*"] "deny" is carried over for every agent but idumb-supreme-coordinator, whose own task setting replaces it in OpenCode`},
			roles: []roleCase{
				{"idumb-supreme-coordinator", "task", task("idumb-builder"), warden.Allow, ""},
				{"idumb-builder", "task", task("general"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-executor", "task", task("general"), warden.Deny, warden.CodeRuleDeny},
				{"", "task", task("general"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-supreme-coordinator", "bash", sh("make"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-builder", "bash", sh("make"), warden.Ask, ""},
			},
		},
		{
			// A coordinator as a Claude Code subagent: its tools
			// become the role's tools.
			file: "claude-agent-coordinator.md", imp: importFor("claude"),
			warnings: []string{"front matter permissionMode is not carried over"},
			roles: []roleCase{
				{"idumb-supreme-coordinator", "Read", map[string]any{"file_path": "a.go"}, warden.Allow, ""},
				{"idumb-supreme-coordinator", "Task", task("idumb-builder"), warden.Ask, ""},
				{"idumb-supreme-coordinator", "Edit", map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b"}, warden.Deny, warden.CodeRoleToolDenied},
				{"idumb-supreme-coordinator", "Bash", sh("ls"), warden.Deny, warden.CodeRoleToolDenied},
			},
		},
		{
			// A validator as a Claude Code subagent that lists
			// the tools it may not use.
			file: "claude-agent-validator.md", imp: importFor("claude"),
			roles: []roleCase{
				{"idumb-low-validator", "Read", map[string]any{"file_path": "a.go"}, warden.Allow, ""},
				{"idumb-low-validator", "Write", map[string]any{"file_path": "a.go", "content": "x"}, warden.Deny, warden.CodeRuleDeny},
				{"idumb-low-validator", "Task", task("general-purpose"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-low-validator", "Bash", sh("go vet ./..."), warden.Ask, ""},
				{"", "Write", map[string]any{"file_path": "a.go", "content": "x"}, warden.Ask, ""},
			},
		},
		{
			// Roles and denies as OpenCode settings: the per-agent tool
			// matrix, "task: false", specific subagent denies and allows.
			file: "opencode-seeds.json", imp: importFor("opencode"),
			warnings: []string{`agent.plan.permission.external_directory "allow" is not carried over`,
				`agent.idumb-planner.permission.bash["*"] "deny" is carried over as ask`,
				`agent.idumb-plan-checker.permission.bash: OpenCode denies the idumb-plan-checker agent the bash calls these patterns do not name`},
			cases: []decisionCase{
				{"bash", sh("rm -rf build"), warden.Deny},
				{"bash", sh("rm -rfv build"), warden.Deny},
				{"bash", sh("chmod 777 x"), warden.Deny},
				{"task", task("idumb-builder"), warden.Ask},
				{"edit", map[string]any{"filePath": "a.go"}, warden.Ask},
			},
			roles: []roleCase{
				// The coordinator's allow-list: reads and delegates only.
				{"idumb-supreme-coordinator", "read", map[string]any{"filePath": "a.go"}, warden.Allow, ""},
				{"idumb-supreme-coordinator", "todowrite", map[string]any{}, warden.Allow, ""},
				{"idumb-supreme-coordinator", "task", task("idumb-builder"), warden.Allow, ""},
				{"idumb-supreme-coordinator", "edit", map[string]any{"filePath": "a.go"}, warden.Deny, warden.CodeRoleToolDenied},
				{"idumb-supreme-coordinator", "bash", sh("ls"), warden.Deny, warden.CodeRoleToolDenied},
				{"idumb-supreme-coordinator", "webfetch", map[string]any{"url": "https://x"}, warden.Deny, warden.CodeRoleToolDenied},
				// The validator may not edit or delegate.
				{"idumb-low-validator", "edit", map[string]any{"filePath": "a.go"}, warden.Deny, warden.CodeRuleDeny},
				{"idumb-low-validator", "task", task("general"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-low-validator", "read", map[string]any{"filePath": "a.go"}, warden.Allow, ""},
				// task: false.
				{"idumb-builder", "task", task("general"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-builder", "edit", map[string]any{"filePath": "a.go"}, warden.Ask, ""},
				// Specific subagent denies; other subagents keep the default.
				{"idumb-executor", "task", task("idumb-builder"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-executor", "task", task("idumb-low-validator"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-executor", "task", task("general"), warden.Ask, ""},
				{"idumb-executor", "bash", sh("git status"), warden.Allow, ""},
				{"idumb-executor", "bash", sh("git diff HEAD~1"), warden.Allow, ""},
				{"idumb-executor", "bash", sh("npm test"), warden.Allow, ""},
				{"idumb-executor", "bash", sh("npm test && rm -rf /"), warden.Deny, ""},
				{"idumb-executor", "edit", map[string]any{"filePath": "README.md"}, warden.Allow, ""},
				{"idumb-executor", "edit", map[string]any{"filePath": "main.go"}, warden.Ask, ""},
				// task {"*": deny} is a deny of every delegation; bash
				// {"*": deny} with a milder pattern falls to the default.
				{"idumb-planner", "task", task("general"), warden.Deny, warden.CodeRuleDeny},
				{"idumb-planner", "bash", sh("git log -1"), warden.Allow, ""},
				{"idumb-planner", "bash", sh("make"), warden.Ask, ""},
				// The allow-list agent: edit only had denies, so every
				// edit is denied; bash had an allow, so the rest of bash
				// falls to the default (reported).
				{"idumb-plan-checker", "edit", map[string]any{"filePath": "a.go"}, warden.Deny, warden.CodeRuleDeny},
				{"idumb-plan-checker", "bash", sh("git diff"), warden.Allow, ""},
				{"idumb-plan-checker", "bash", sh("make"), warden.Ask, ""},
				{"idumb-plan-checker", "webfetch", map[string]any{"url": "https://x"}, warden.Deny, warden.CodeRoleToolDenied},
				// Other agents have none of these restrictions, only the
				// project-wide ones.
				{"plan", "edit", map[string]any{"filePath": "main.go"}, warden.Allow, ""},
				{"", "task", task("idumb-builder"), warden.Ask, ""},
			},
		},
		{
			file: "gemini-policy.toml", imp: importFor("gemini"),
			warnings: []string{"commandRegex", "priorities"},
			cases: []decisionCase{
				{"run_shell_command", sh("git status"), warden.Allow},
				{"run_shell_command", sh("git log -1"), warden.Allow},
				{"run_shell_command", sh("git log -1; rm -r x"), warden.Deny},
				{"run_shell_command", sh("npm test"), warden.Ask},
				{"write_file", map[string]any{"file_path": "a.txt", "content": "x"}, warden.Ask},
				{"mcp__github__create_issue", map[string]any{}, warden.Ask},
			},
		},
		{
			// Denies and allows as a Gemini CLI policy.
			file: "gemini-seeds.toml", imp: importFor("gemini"),
			warnings: []string{"toolAnnotations is not understood by warden", "[[safety_checker]] (line 27) is not carried over"},
			cases: []decisionCase{
				{"run_shell_command", sh("rm -rf build"), warden.Deny},
				{"run_shell_command", sh("rm -rfv build"), warden.Deny},
				{"run_shell_command", sh("chmod 777 x"), warden.Deny},
				{"run_shell_command", sh("git status"), warden.Allow},
				{"run_shell_command", sh("npm test"), warden.Allow},
				{"run_shell_command", sh("npm test; rm -rf /"), warden.Deny},
				{"run_shell_command", sh("git push"), warden.Ask},
				{"run_shell_command", sh("make"), warden.Ask},
				{"web_fetch", map[string]any{"url": "https://x"}, warden.Deny},
			},
		},
		{
			// Denies and allows as Codex prefix rules.
			file: "codex-seeds.rules", imp: importFor("codex"),
			warnings: []string{"network_rule(...) at line 24 is not carried over"},
			cases: []decisionCase{
				{"shell", map[string]any{"command": []any{"bash", "-lc", "rm -rf build"}}, warden.Deny},
				{"shell", map[string]any{"command": []any{"rm", "-fr", "build"}}, warden.Deny},
				{"shell", map[string]any{"command": []any{"chmod", "777", "x"}}, warden.Deny},
				{"shell", map[string]any{"command": []any{"git", "diff", "HEAD"}}, warden.Allow},
				{"shell", map[string]any{"command": []any{"pnpm", "test"}}, warden.Allow},
				{"shell", map[string]any{"command": []any{"git", "push"}}, warden.Ask},
			},
		},
		{
			file: "codex.rules", imp: importFor("codex"),
			cases: []decisionCase{
				{"Bash", sh("git status"), warden.Allow},
				{"Bash", sh("git log --oneline"), warden.Allow},
				{"Bash", sh("git push"), warden.Ask},
				{"Bash", sh("git diff && rm -f a"), warden.Deny},
				{"Bash", sh("make"), warden.Ask},
			},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			src := filepath.Join("testdata", tc.file)
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			p, err := tc.imp(src, data)
			if err != nil {
				t.Fatal(err)
			}
			yaml := p.YAML(policy.BuiltinKinds)
			golden := src + ".golden.yaml"
			if *update {
				os.WriteFile(golden, yaml, 0o644)
			}
			want, _ := os.ReadFile(golden)
			if string(want) != string(yaml) {
				t.Errorf("policy differs from %s (run go test -update):\n%s", golden, yaml)
			}
			for _, w := range tc.warnings {
				if !strings.Contains(strings.Join(p.Warnings, "\n"), w) {
					t.Errorf("no warning about %s in %q", w, p.Warnings)
				}
			}
			for _, r := range p.Rules {
				if !strings.Contains(string(yaml), "# from "+src) || r.From == "" {
					t.Errorf("rule %s has no comment saying where it came from", r.ID)
				}
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "warden.yaml")
			os.WriteFile(file, yaml, 0o644)
			pol, err := policy.Load(file)
			if err != nil {
				t.Fatalf("the imported policy does not load: %v\n%s", err, yaml)
			}
			eng, err := engine.Compile(pol, workspace.Live())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.cases {
				d := eng.Decide(warden.ToolCall{Tool: c.tool, Args: c.args, Cwd: dir}, nil).Decision
				if d.Decision != c.want {
					t.Errorf("%s %v: %s (%s %s), want %s", c.tool, c.args, d.Decision, d.Code, d.Rule, c.want)
				}
			}
			for _, c := range tc.roles {
				d := eng.Decide(warden.ToolCall{Tool: c.tool, Args: c.args, Role: c.role, Cwd: dir}, nil).Decision
				if d.Decision != c.want || c.code != "" && d.Code != c.code {
					t.Errorf("role %s: %s %v: %s (%s %s), want %s %s", c.role, c.tool, c.args, d.Decision, d.Code, d.Rule, c.want, c.code)
				}
			}
		})
	}
}

func TestImportErrorsNameTheFile(t *testing.T) {
	for _, name := range []string{"claude", "opencode"} {
		if _, err := importFor(name)("conf/bad.json", []byte("{nope")); err == nil || !strings.Contains(err.Error(), "conf/bad.json") {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	if _, err := importFor("gemini")("p.toml", []byte("[[rule]]\ndecision = \"allow\nx")); err == nil || !strings.Contains(err.Error(), "p.toml") {
		t.Errorf("gemini: %v", err)
	}
	if _, err := importFor("codex")("r.rules", []byte(`prefix_rule(pattern = ["git"`)); err == nil || !strings.Contains(err.Error(), "r.rules:1") {
		t.Errorf("codex: %v", err)
	}
}
