package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
)

func parse(t *testing.T, src string) (*policy.Policy, []policy.Finding) {
	t.Helper()
	dir := t.TempDir()
	return policy.Parse(filepath.Join(dir, "warden.yaml"), []byte(src))
}

// finding returns the first finding whose text contains all of parts.
func finding(fs []policy.Finding, parts ...string) (policy.Finding, bool) {
	for _, f := range fs {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(f.String(), p)
		}
		if ok {
			return f, true
		}
	}
	return policy.Finding{}, false
}

func TestErrorsNamePositions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		src       string
		line, col int
		severity  string
		parts     []string
	}{
		{"unknown top-level key", "version: 1\nrulez: []\n", 2, 1, "error", []string{`unknown key "rulez"`}},
		{"duplicate top-level key", "version: 1\ndefault: deny\ndefault: allow\n", 3, 1, "error", []string{"default", `duplicate key "default" (first at line 2)`}},
		{"duplicate rule key", "version: 1\nrules:\n  - id: a\n    effect: deny\n    effect: allow\n", 5, 5, "error", []string{`rules[0].effect`, `duplicate key "effect" (first at line 4)`}},
		{"duplicate default key", "version: 1\ndefault: {safe: allow, destructive: deny, destructive: allow}\n", 2, 43, "error", []string{`duplicate key "destructive"`}},
		{"unknown rule key", "version: 1\nrules:\n  - id: a\n    effect: allow\n    toool: shell\n", 5, 5, "error", []string{`rules[0].toool`, `unknown key "toool"`}},
		{"bad effect", "version: 1\nrules:\n  - id: a\n    effect: block\n", 4, 13, "error", []string{`"block" is not one of allow, ask, deny, warn`}},
		{"deny without message", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: rm *\n    suggestion: s\n", 3, 5, "error", []string{"needs a message"}},
		{"deny without suggestion", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: rm *\n    message: m\n", 3, 5, "error", []string{"needs a suggestion"}},
		{"warn without message", "version: 1\nrules:\n  - id: w\n    effect: warn\n    tool: shell\n", 3, 5, "error", []string{"warn rule needs a message"}},
		{"bare * deny warns", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: \"*\"\n    message: m\n    suggestion: s\n", 3, 5, "warning", []string{"bare *"}},
		{"allow without matcher", "version: 1\nrules:\n  - id: a\n    effect: allow\n", 3, 5, "error", []string{"allow rule has no matcher", "allow every call"}},
		{"allow with only roles", "version: 1\nroles:\n  r: {tools: [shell]}\nrules:\n  - id: a\n    effect: allow\n    roles: [r]\n", 5, 5, "error", []string{"allow rule has no matcher"}},
		{"allow of the shell without a command", "version: 1\nrules:\n  - id: a\n    effect: allow\n    tool: shell\n", 3, 5, "error", []string{"rules[0] (a)", "names a tool (shell) but no command, path, args or intent", `command: "*"`}},
		{"allow of Bash cut short", "version: 1\nrules:\n  - id: a\n    effect: allow\n    tool: [Read, Bash]\n", 3, 5, "error", []string{`command: "*"`}},
		{"allow of edits without a path", "version: 1\nrules:\n  - id: a\n    effect: allow\n    tool: [write, edit]\n", 3, 5, "error", []string{`path: "**"`, "args: {}"}},
		{"warn of the shell without a command", "version: 1\nrules:\n  - id: w\n    effect: warn\n    tool: shell\n    message: m\n", 3, 5, "error", []string{"warn rule names a tool (shell)", `command: "*"`}},
		{"warn without matcher", "version: 1\nrules:\n  - id: w\n    effect: warn\n    message: m\n", 3, 5, "error", []string{"warn rule has no matcher"}},
		{"allow of the shell cut after args:", "version: 1\nrules:\n  - id: a\n    effect: allow\n    tool: shell\n    args:\n", 3, 5, "error", []string{`command: "*"`}},
		{"sealed without end", "sealed: true\nversion: 1\n", 1, 1, "error", []string{"sealed", "does not end with end: true", "cut short"}},
		{"sealed cut in its end line", "sealed: true\nversion: 1\nend: tr", 3, 6, "error", []string{"must be true or false"}},
		{"sealed not first", "version: 1\nsealed: true\nend: true\n", 2, 1, "error", []string{"must be the policy's first key"}},
		{"end not last", "sealed: true\nend: true\nversion: 1\n", 2, 1, "error", []string{"end: true must be the policy's last key"}},
		{"ask without matcher warns", "version: 1\nrules:\n  - id: a\n    effect: ask\n", 3, 5, "warning", []string{"ask rule has no matcher"}},
		{"bare tool deny warns", "version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: \"*\"\n    message: m\n    suggestion: s\n", 3, 5, "warning", []string{"matches every call"}},
		{"duplicate id", "version: 1\nrules:\n  - {id: a, effect: allow}\n  - {id: a, effect: allow}\n", 4, 10, "error", []string{`duplicate rule id "a"`, "3:10"}},
		{"missing id", "version: 1\nrules:\n  - effect: allow\n", 3, 5, "error", []string{"needs an id"}},
		{"bad regex", "version: 1\nrules:\n  - {id: a, effect: allow, intent: \"(\"}\n", 3, 36, "error", []string{"bad regular expression"}},
		{"bad tool regex", "version: 1\nrules:\n  - {id: a, effect: allow, tool: \"/(/\"}\n", 3, 34, "error", []string{"bad regular expression"}},
		{"bad glob", "version: 1\nprotected: [\"a/[x\"]\n", 2, 13, "error", []string{"bad segment"}},
		{"protected exclusion", "version: 1\nprotected: [\"!a\"]\n", 2, 13, "error", []string{"cannot be unprotected"}},
		{"bad kind", "version: 1\ntools:\n  x: shel\n", 3, 6, "error", []string{`"shel" is not a tool kind`}},
		{"command on a read tool", "version: 1\nrules:\n  - {id: a, effect: allow, tool: Read, command: ls}\n", 3, 40, "error", []string{"only to shell tools"}},
		{"bad default", "version: 1\ndefault: maybe\n", 2, 10, "error", []string{`"maybe" is not one of allow, ask, deny`}},
		{"bad default key", "version: 1\ndefault: {safe: allow, risky: ask}\n", 2, 24, "error", []string{`unknown key "risky"`}},
		{"bad version", "version: 2\n", 1, 10, "error", []string{"unsupported version 2"}},
		{"no version", "mode: enforce\n", 1, 1, "warning", []string{"no version"}},
		{"bad mode", "version: 1\nmode: loud\n", 2, 7, "error", []string{`"loud" is not one of enforce, audit`}},
		{"bad first_enforce", "version: 1\nroles:\n  r: {first_enforce: maybe}\n", 3, 22, "error", []string{`"maybe" is not one of warn, deny`}},
		{"negative depth", "version: 1\nroles:\n  r: {max_depth: -1}\n", 3, 18, "error", []string{"at least 0"}},
		{"bad template", "version: 1\nroles:\n  r: {prompt: \"{{.Role\"}\n", 3, 15, "error", []string{"not a valid Go template"}},
		{"bad duration", "version: 1\nstate: {anchor_demote_after: soon}\n", 2, 30, "error", []string{`"soon" is not a duration`}},
		{"bad intents kind", "version: 1\nintents: {require: [writes]}\n", 2, 21, "error", []string{`"writes" is not a tool kind`}},
		{"unknown role in a rule", "version: 1\nroles: {a: {}}\nrules:\n  - {id: x, effect: allow, roles: [b]}\n", 4, 35, "warning", []string{`role "b" is not defined`}},
		{"not a mapping", "- a\n- b\n", 1, 1, "error", []string{"must be a mapping"}},
		{"yaml syntax", "version: 1\nrules: [\n", 2, 1, "error", []string{""}},
		{"empty file", "", 1, 1, "error", []string{"empty"}},
		{"tab indentation", "version: 1\nrules:\n\t- id: a\n", 3, 1, "error", []string{"tab"}},
		{"bad test case", "version: 1\ntests:\n  - call: {tool: Bash}\n    expect: allow\n", 3, 11, "error", []string{`"args" is required`}},
		{"bad expectation", "version: 1\ntests:\n  - call: {tool: Bash, args: {}}\n    expect: perhaps\n", 4, 13, "error", []string{`"perhaps"`}},
		{"empty source", "version: 1\nrules:\n  - {id: a, effect: allow, source: \"\"}\n", 3, 36, "error", []string{"rules[0] (a).source", "must not be empty"}},
		{"source not a string", "version: 1\ntests:\n  - {call: {tool: Bash, args: {}}, expect: allow, source: [x]}\n", 3, 59, "error", []string{"tests[0].source", "must be a string"}},
		{"compiled without hashes", "version: 1\ncompiled: {from: RULES.md}\n", 2, 11, "error", []string{"compiled", "needs sources"}},
		{"compiled bad hash", "version: 1\ncompiled: {from: RULES.md, sources: abc, rules: abc}\n", 2, 37, "error", []string{"compiled.sources", "sha256:"}},
		{"compiled unknown key", "version: 1\ncompiled: {from: RULES.md, hash: abc}\n", 2, 28, "error", []string{"compiled.hash", `unknown key`}},
		{"both command and path is fine to parse", "version: 1\nrules:\n  - {id: a, effect: allow, path: [\"!x\"]}\n", 3, 34, "warning", []string{"only exclusions"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, fs := parse(t, c.src)
			f, ok := finding(fs, c.parts...)
			if !ok {
				t.Fatalf("no finding with %q in %v", c.parts, fs)
			}
			if f.Pos.Line != c.line || f.Pos.Col != c.col || f.Severity != c.severity {
				t.Errorf("finding %q at %d:%d %s, want %d:%d %s", f.String(), f.Pos.Line, f.Pos.Col, f.Severity, c.line, c.col, c.severity)
			}
			if !strings.HasSuffix(f.Pos.File, "warden.yaml") {
				t.Errorf("finding does not name the file: %q", f.String())
			}
		})
	}
}

func TestLoadDefaultsAndValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `version: 1
mode: audit
default: {safe: allow, destructive: deny}
workspace: {root: ., outside: ask}
protected: ["**/.env"]
tools: {deploy: shell}
roles:
  builder:
    tools: [read, shell]
    first: read
    first_enforce: deny
    max_depth: 2
    prompt: "You are {{.Role}} {{upper .Role}}"
rules:
  - id: r
    effect: warn
    tool: [shell]
    command: ["npm install *"]
    message: m
intents: {require: [write], out_of_scope: deny}
state: {anchors_max: 10, anchor_demote_after: 2d, history_max: 5, session_max_age: 72h}
audit: {retention: 30d}
approvals: {timeout: 90s}
tests:
  - name: t
    call: {tool: Bash, args: {command: "npm install x"}}
    expect: allow
    rule: r
`
	file := filepath.Join(dir, "warden.yaml")
	os.WriteFile(file, []byte(src), 0o644)
	p, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != "audit" || p.Default.Destructive != warden.Deny || p.Workspace.Outside != warden.Ask || p.Workspace.Root != dir {
		t.Errorf("top level: %+v", p)
	}
	if r := p.Roles["builder"]; r == nil || r.MaxDepth != 2 || r.FirstEnforce != "deny" || len(r.First) != 1 || r.First[0] != "read" {
		t.Errorf("role: %+v", p.Roles["builder"])
	}
	if p.State.AnchorsMax != 10 || p.State.AnchorDemoteAfter != 48*time.Hour || p.State.HistoryMax != 5 || p.State.SessionMaxAge != 72*time.Hour {
		t.Errorf("state: %+v", p.State)
	}
	if p.Audit.Retention != 30*24*time.Hour || p.Approvals.Timeout != 90*time.Second {
		t.Errorf("audit/approvals: %+v %+v", p.Audit, p.Approvals)
	}
	if p.Intents == nil || p.Intents.File != filepath.Join(dir, ".orchestration", "active_intents.yaml") || p.Intents.OutOfScope != warden.Deny {
		t.Errorf("intents: %+v", p.Intents)
	}
	if len(p.Tests) != 1 || p.Tests[0].Call.Tool != "Bash" || p.Tests[0].Rule != "r" {
		t.Errorf("tests: %+v", p.Tests)
	}
	if p.KindOf("deploy") != "shell" || p.KindOf("Bash") != "shell" || p.KindOf("nope") != "other" {
		t.Errorf("kinds")
	}
	// Defaults.
	q, fs := parse(t, "version: 1\n")
	if len(fs) != 0 || q.Default.Safe != warden.Allow || q.Default.Destructive != warden.Ask || q.Workspace.Outside != warden.Deny || q.State.AnchorsMax != 20 || q.Approvals.Timeout != 5*time.Minute {
		t.Errorf("defaults: %+v %v", q, fs)
	}
}

func TestLoadReportsEveryError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	os.WriteFile(file, []byte("version: 1\nbogus: 1\nrules:\n  - {id: a, effect: nope}\n"), 0o644)
	_, err := policy.Load(file)
	var pe *policy.Error
	if err == nil || !asError(err, &pe) {
		t.Fatalf("want a *policy.Error, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{file + ":2:1", file + ":4:21", "bogus", "nope"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

func asError(err error, target **policy.Error) bool {
	e, ok := err.(*policy.Error)
	*target = e
	return ok
}

func TestJSONPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.json")
	os.WriteFile(file, []byte(`{"version": 1, "rules": [{"id": "a", "effect": "allow", "tool": "Read"}], "extra": true}`), 0o644)
	_, fs, err := policy.Lint(file)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := finding(fs, `unknown key "extra"`)
	if !ok || f.Pos.Line != 1 || f.Pos.Col != 75 {
		t.Errorf("JSON positions: %v", fs)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c")
	os.MkdirAll(deep, 0o755)
	if _, err := policy.Find(deep); err == nil {
		t.Fatal("no policy: want an error")
	}
	os.WriteFile(filepath.Join(dir, "a", "warden.yaml"), []byte("version: 1\n"), 0o644)
	got, err := policy.Find(deep)
	if err != nil || got != filepath.Join(dir, "a", "warden.yaml") {
		t.Errorf("Find = %q, %v", got, err)
	}
	// A policy that is a link to nothing is broken, not missing: the one
	// further up must not take its place.
	os.Symlink(filepath.Join(dir, "gone.yaml"), filepath.Join(deep, "warden.yaml"))
	if got, err := policy.Find(deep); err == nil || !strings.Contains(err.Error(), "broken link") {
		t.Errorf("a dangling policy link: Find = %q, %v; want an error naming it", got, err)
	}
}

func TestExamplesLoad(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../examples/*/warden.yaml")
	if len(files) < 2 {
		t.Fatalf("want at least two example policies, found %v", files)
	}
	for _, f := range files {
		_, fs, err := policy.Lint(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range fs {
			t.Errorf("%s", x)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"version: 1\n", "version: 1\nrules:\n  - {id: a, effect: deny, command: 'rm -rf *', message: m, suggestion: s}\n",
		"{\"version\": 1, \"default\": {\"safe\": \"allow\"}}", "roles: {a: {tools: [read], max_depth: 3}}", "tests: [{call: {tool: x, args: {}}, expect: deny}]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, fs := policy.Parse("/tmp/fuzz/warden.yaml", []byte(src))
		if p == nil {
			t.Fatal("nil policy")
		}
		for _, x := range fs {
			if x.Pos.File == "" || x.Pos.Line < 1 || x.Message == "" {
				t.Fatalf("finding without a position or message: %+v", x)
			}
		}
	})
}

// An allow rule that ends in * for a program warden has no table for
// trusts every option: lint says so, with the rule's position. Exact
// commands and known programs are not reported; private paths load.
func TestLintUnknownProgramAllow(t *testing.T) {
	t.Parallel()
	p, fs := parse(t, `version: 1
private: ["~/.ssh/**", "**/.env"]
rules:
  - id: a
    effect: allow
    tool: shell
    command: ["frobctl *", "frobctl status", "git status *", "cd *", "mytool --list"]
`)
	if len(p.Private) != 2 {
		t.Errorf("private = %q", p.Private)
	}
	f, ok := finding(fs, "warning", "no table of frobctl's options", "rules[0] (a)")
	if !ok || f.Pos.Line != 4 {
		t.Errorf("want a warning for frobctl * at line 4, got %v", fs)
	}
	for _, prog := range []string{"git", "cd", "mytool"} {
		if _, ok := finding(fs, "no table of "+prog+"'s"); ok {
			t.Errorf("unexpected warning for %s: %v", prog, fs)
		}
	}
	if _, fs := parse(t, "version: 1\nprivate: [\"!x\"]\n"); len(fs) == 0 {
		t.Errorf("an exclusion in private should be an error")
	}
}

func TestSourceAndCompiled(t *testing.T) {
	t.Parallel()
	h := "sha256:" + strings.Repeat("ab", 32)
	src := `version: 1
compiled: {from: RULES.md, sources: "` + h + `", rules: "` + h + `", model: m1}
rules:
  - id: no-delete
    effect: deny
    tool: gmail.delete
    message: m
    suggestion: s
    source: Never delete mail.
tests:
  - {name: c, call: {tool: gmail.delete, args: {}}, expect: deny, source: Never delete mail.}
`
	p, fs := parse(t, src)
	for _, f := range fs {
		if f.Severity == policy.SevError {
			t.Fatalf("unexpected error: %s", f)
		}
	}
	if p.Rules[0].Source != "Never delete mail." || p.Tests[0].Source != "Never delete mail." {
		t.Errorf("sources not kept: rule %q, case %q", p.Rules[0].Source, p.Tests[0].Source)
	}
	if p.Compiled == nil || p.Compiled.Sources != h || p.Compiled.Rules != h || p.Compiled.Model != "m1" {
		t.Fatalf("compiled section: %+v", p.Compiled)
	}
	if want := filepath.Join(p.Dir, "RULES.md"); p.Compiled.From != want {
		t.Errorf("compiled.from = %q, want %q", p.Compiled.From, want)
	}
}

// Sequence rules and test histories load, and their mistakes are errors
// with positions.
func TestSequenceRuleSyntax(t *testing.T) {
	t.Parallel()
	p, fs := parse(t, `version: 1
rules:
  - id: a
    effect: deny
    tool: edit
    after: {tool: read, same_path: true, since: {tool: write}}
    repeat: {count: 3, within: 10m}
    message: m
    suggestion: s
tests:
  - call: {tool: Edit, args: {file_path: a}}
    history:
      - {tool: Read, args: {file_path: a}}
    expect: allow
`)
	for _, f := range fs {
		if f.Severity == policy.SevError {
			t.Errorf("unexpected error: %s", f)
		}
	}
	r := p.Rules[0]
	if r.After == nil || !r.After.SamePath || r.After.Since == nil || r.Repeat == nil || r.Repeat.Count != 3 || r.Repeat.Within != 10*time.Minute {
		t.Errorf("rule: %+v after %+v", r, r.After)
	}
	if len(p.Tests) != 1 || len(p.Tests[0].History) != 1 || p.Tests[0].History[0].Tool != "Read" {
		t.Errorf("test history: %+v", p.Tests)
	}
	_, fs = parse(t, "version: 1\nrules:\n  - id: b\n    effect: ask\n    after: {frob: x}\n    repeat: {count: 0, within: 1m}\n    rate: {count: 2}\n")
	for _, want := range []string{"after", "count", "within"} {
		if _, ok := finding(fs, "error", want); !ok {
			t.Errorf("no error about %s: %v", want, fs)
		}
	}
}

// TestRolesMatch: a rule's roles name the roles it applies to, and "!NAME"
// excludes one; a list of only exclusions applies to every other call,
// calls without a role included.
func TestRolesMatch(t *testing.T) {
	for _, tc := range []struct {
		roles []string
		role  string
		want  bool
	}{
		{nil, "", true},
		{nil, "builder", true},
		{[]string{"builder"}, "builder", true},
		{[]string{"builder"}, "coordinator", false},
		{[]string{"builder"}, "", false},
		{[]string{"!coordinator"}, "builder", true},
		{[]string{"!coordinator"}, "", true},
		{[]string{"!coordinator"}, "coordinator", false},
		{[]string{"builder", "!builder"}, "builder", false},
		{[]string{"builder", "!coordinator"}, "coordinator", false},
		{[]string{"builder", "!coordinator"}, "tester", false},
		{[]string{"!a", "!b"}, "b", false},
		{[]string{"!a", "!b"}, "c", true},
	} {
		if got := policy.RolesMatch(tc.roles, tc.role); got != tc.want {
			t.Errorf("RolesMatch(%q, %q) = %v, want %v", tc.roles, tc.role, got, tc.want)
		}
	}
}

// TestToolWideAllowOnPurpose: an allow of every shell line, every path or
// every call of a tool loads when it says so; a tool-wide allow of a tool
// that is neither a shell nor a file tool needs no more than its tool.
func TestToolWideAllowOnPurpose(t *testing.T) {
	t.Parallel()
	for _, rule := range []string{
		`{id: a, effect: allow, tool: shell, command: "*"}`,
		`{id: a, effect: allow, tool: [write, edit], path: "**"}`,
		`{id: a, effect: allow, tool: Glob, args: {}}`,
		`{id: a, effect: allow, tool: shell, intent: "(?i)build"}`,
		`{id: a, effect: allow, tool: "*"}`,
		`{id: a, effect: allow, tool: mcp__github__get_issue}`,
		`{id: a, effect: allow, tool: [todo, delegate]}`,
		`{id: a, effect: warn, tool: WebFetch, message: m}`,
	} {
		src := "version: 1\nrules:\n  - " + rule + "\n"
		if _, findings := policy.Parse(filepath.Join(t.TempDir(), "warden.yaml"), []byte(src)); hasError(findings) {
			t.Errorf("%s: %v", rule, findings)
		}
	}
}

func hasError(fs []policy.Finding) bool {
	for _, f := range fs {
		if f.Severity == policy.SevError {
			return true
		}
	}
	return false
}

// TestSealedLoads: a sealed policy that ends with end: true loads, as JSON
// too (the keys in the same order).
func TestSealedLoads(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"# a comment first\nsealed: true\nversion: 1\nrules: []\nend: true   # the end\n",
		`{"sealed": true, "version": 1, "end": true}`,
		"version: 1\nend: true\n",
	} {
		if _, findings := policy.Parse(filepath.Join(t.TempDir(), "warden.yaml"), []byte(src)); hasError(findings) {
			t.Errorf("%q: %v", src, findings)
		}
	}
}

// TestEmptyMappingLoads: an empty policy mapping is not a sealed one.
func TestEmptyMappingLoads(t *testing.T) {
	t.Parallel()
	if _, findings := policy.Parse(filepath.Join(t.TempDir(), "warden.yaml"), []byte("{}\n")); hasError(findings) {
		t.Errorf("{}: %v", findings)
	}
}
