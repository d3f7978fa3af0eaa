package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/cli"
)

var update = flag.Bool("update", false, "rewrite golden files")

const coding = "../../examples/coding/warden.yaml"

// run runs warden with stdin and returns stdout, stderr and the exit code.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestCheckExitCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		call string
		code int
		want warden.Effect
	}{
		{`{"tool":"Bash","args":{"command":"git status"}}`, 0, warden.Allow},
		{`{"tool":"Bash","args":{"command":"git status && rm -rf build"}}`, 2, warden.Deny},
		{`{"tool":"Bash","args":{"command":"git push origin main"}}`, 3, warden.Ask},
	}
	for _, c := range cases {
		out, _, code := run(t, c.call, "check", "--policy", coding)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d", c.call, code, c.code)
		}
		var d warden.Decision
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%s: output is not a decision: %v\n%s", c.call, err, out)
		}
		if d.Decision != c.want {
			t.Errorf("%s: %s, want %s", c.call, d.Decision, c.want)
		}
		if d.Warnings == nil || d.Matched == nil {
			t.Errorf("warnings and matched must be lists, not null: %s", out)
		}
	}
}

func TestCheckBadInputFailsClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := filepath.Join(dir, "warden.yaml")
	os.WriteFile(broken, []byte("version: 1\nrules:\n  - {id: a, effect: deny, command: 'rm *'}\n"), 0o644)
	cases := []struct {
		name, stdin string
		args        []string
		stderr      string
	}{
		{"not JSON", "{nope", []string{"check", "--policy", coding}, "not a JSON object"},
		{"no tool", `{"args":{}}`, []string{"check", "--policy", coding}, `"tool" is required`},
		{"no args", `{"tool":"Bash"}`, []string{"check", "--policy", coding}, `"args" is required`},
		{"unknown field", `{"tool":"Bash","args":{},"sesion":"x"}`, []string{"check", "--policy", coding}, `unknown field "sesion"`},
		{"broken policy", `{"tool":"Read","args":{}}`, []string{"check", "--policy", broken}, broken + ":3:5"},
		{"missing policy", `{"tool":"Read","args":{}}`, []string{"check", "--policy", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{"bad flag", `{}`, []string{"check", "--bogus"}, "flag provided but not defined"},
	}
	for _, c := range cases {
		out, stderr, code := run(t, c.stdin, c.args...)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1", c.name, code)
		}
		if !strings.Contains(stderr, c.stderr) {
			t.Errorf("%s: stderr %q lacks %q", c.name, stderr, c.stderr)
		}
		if strings.Contains(out, `"allow"`) {
			t.Errorf("%s: a failure must never print an allow: %s", c.name, out)
		}
		if out != "" {
			var d warden.Decision
			if err := json.Unmarshal([]byte(out), &d); err != nil || d.Decision != warden.Deny {
				t.Errorf("%s: stdout must be a deny decision: %s", c.name, out)
			}
		}
	}
}

func TestCheckNoPolicyFound(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	_, stderr, code := run(t, `{"tool":"Read","args":{}}`, "check")
	if code != 1 || !strings.Contains(stderr, "no warden.yaml found") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestCheckJSONL(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"tool":"Bash","args":{"command":"git status"}}`,
		`not json`,
		``,
		`{"tool":"Bash","args":{"command":"rm -rf /"}}`,
		`{"tool":"Bash"}`,
		`{"tool":"Bash","args":{"command":"git push"}}`,
	}, "\n")
	out, stderr, code := run(t, in, "check", "--jsonl", "--policy", coding)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("want 5 output lines (one per non-blank input), got %d:\n%s", len(lines), out)
	}
	want := []struct {
		decision warden.Effect
		errLine  int
	}{{warden.Allow, 0}, {warden.Deny, 2}, {warden.Deny, 0}, {warden.Deny, 5}, {warden.Ask, 0}}
	for i, l := range lines {
		var v struct {
			warden.Decision
			Line  int    `json:"line"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d is not JSON: %s", i+1, l)
		}
		if v.Decision.Decision != want[i].decision || v.Line != want[i].errLine || (want[i].errLine > 0) != (v.Error != "") {
			t.Errorf("line %d: %s", i+1, l)
		}
	}
	if code != 1 || !strings.Contains(stderr, "stdin line 2") || !strings.Contains(stderr, "stdin line 5") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestCheckText(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, `{"tool":"Bash","args":{"command":"sudo ls"}}`, "check", "--text", "--policy", coding)
	if code != 2 || !strings.HasPrefix(out, "## BLOCKED: RULE_DENY") || !strings.Contains(out, "Suggestion: ") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	assertPlain(t, out)
}

// assertPlain fails on emoji and box-drawing characters.
func assertPlain(t *testing.T, s string) {
	t.Helper()
	for _, r := range s {
		if r >= 0x2500 && r <= 0x259F || r >= 0x1F000 || r >= 0x2600 && r <= 0x27BF {
			t.Errorf("model-facing text has %q: %s", r, s)
			return
		}
	}
}

func TestExplainGolden(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("../../examples/coding")
	files, _ := filepath.Glob("testdata/explain/*.json")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		in, _ := os.ReadFile(f)
		out, stderr, code := run(t, string(in), "explain", "--policy", coding)
		if stderr != "" {
			t.Errorf("%s: stderr %s", f, stderr)
		}
		got := strings.ReplaceAll(out, root, "$ROOT") + "exit: " + string(rune('0'+code)) + "\n"
		golden := strings.TrimSuffix(f, ".json") + ".golden"
		if *update {
			os.WriteFile(golden, []byte(got), 0o644)
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%s: %v (run go test -update)", golden, err)
		}
		if got != string(want) {
			t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", golden, got, want)
		}
		assertPlain(t, got)
	}
}

func TestLint(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, "", "lint", "--policy", coding)
	if code != 0 || !strings.Contains(out, "0 errors, 0 warnings") {
		t.Errorf("example: exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "warden.yaml")
	os.WriteFile(bad, []byte("version: 1\nrules:\n  - id: d\n    effect: deny\n    tool: shell\n    command: \"*\"\n    message: m\n  - {id: e, effect: allow, colour: red}\n  - {id: f, effect: allow}\n"), 0o644)
	out, _, code = run(t, "", "lint", "--policy", bad)
	for _, want := range []string{bad + ":3:5: error: rules[0] (d): a deny rule needs a suggestion", bad + ":3:5: warning: rules[0] (d): this deny matches every command", bad + ":8:28: error: rules[1].colour: unknown key",
		bad + ":9:5: error: rules[2] (f): this allow rule has no matcher", "4 errors, 1 warning"} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("lint with errors: exit %d, want 1", code)
	}
}

func TestPolicyTests(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"test", "--policy", coding, "../../examples/coding/tests.yaml"},
		{"test", "--policy", "../../examples/email/warden.yaml"},
	} {
		out, stderr, code := run(t, "", args...)
		if code != 0 || !strings.Contains(out, " passed, 0 failed") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.yaml")
	os.WriteFile(cases, []byte(`- name: wrong on purpose
  call: {tool: Bash, args: {command: "rm -rf x"}}
  expect: allow
- name: right
  call: {tool: Bash, args: {command: "rm -rf x"}}
  expect: deny
  code: RULE_DENY
  rule: no-rm-rf
- name: wrong rule
  call: {tool: Bash, args: {command: "rm -rf x"}}
  expect: deny
  rule: no-sudo
`), 0o644)
	out, _, code := run(t, "", "test", "--policy", coding, cases)
	if code != 1 || !strings.Contains(out, "1 passed, 2 failed") || !strings.Contains(out, cases+":1:3: wrong on purpose: expected allow, got deny (RULE_DENY, rule no-rm-rf)") || !strings.Contains(out, "expected rule no-sudo") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, "", "--help")
	if code != 0 || !strings.Contains(out, "check") || !strings.Contains(out, "explain") {
		t.Errorf("help: %d %s", code, out)
	}
	_, stderr, code := run(t, "", "nonsense")
	if code != 1 || !strings.Contains(stderr, `unknown command "nonsense"`) {
		t.Errorf("unknown command: %d %s", code, stderr)
	}
}

// TestHelpOnEveryCommand: -h prints the usage and exits 0, on every
// command and on the subcommands, and never decides anything.
func TestHelpOnEveryCommand(t *testing.T) {
	var out, errb bytes.Buffer
	cli.Run(context.Background(), []string{"help"}, strings.NewReader(""), &out, &errb)
	var cmds [][]string
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(line, "  ") {
			cmds = append(cmds, []string{f[0], "-h"}, []string{f[0], "--help"})
		}
	}
	if len(cmds) < 20 {
		t.Fatalf("found %d commands in the usage:\n%s", len(cmds)/2, out.String())
	}
	cmds = append(cmds, []string{"hook", "claude", "-h"}, []string{"import", "claude", "-h"}, []string{"approvals", "approve", "-h"},
		[]string{"grants", "ls", "-h"}, []string{"grants", "add", "-h"}, []string{"hookd", "status", "-h"}, []string{"anchor", "add", "-h"},
		[]string{"init", "claude", "-h"}, []string{"doctor", "claude", "-h"}, []string{"report", "check", "-h"})
	for _, args := range cmds {
		out.Reset()
		errb.Reset()
		code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		text := out.String() + errb.String()
		if code != 0 || !strings.Contains(text, "Usage") || strings.Contains(text, `"deny"`) {
			t.Errorf("warden %s: exit %d\n%s", strings.Join(args, " "), code, text)
		}
	}
}

// TestGrantsAdd: a human pre-approves a command; the grant covers exactly
// that command (normalised), decides it, and the audit trail names it.
func TestGrantsAdd(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\ndefault: {safe: allow, destructive: ask}\n"), 0o644)
	run := func(stdin string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
		return code, out.String() + errb.String()
	}
	code, out := run("", "grants", "add", "Bash", "--command", "git  push 'origin' main", "--policy", pol)
	if code != 0 || !strings.Contains(out, "command git push origin main") {
		t.Fatalf("grants add: %d %s", code, out)
	}
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	code, out = run(`{"tool":"Bash","args":{"command":"git push origin main"}}`, "check", "--policy", pol, "--session", "s1")
	if code != 0 || !strings.Contains(out, `"rule": "grant:`+id+`"`) {
		t.Errorf("granted call: %d %s", code, out)
	}
	if code, out := run(`{"tool":"Bash","args":{"command":"git push origin dev"}}`, "check", "--policy", pol, "--session", "s1"); code != 3 {
		t.Errorf("another command: %d %s", code, out)
	}
	if code, out := run("", "audit", "--policy", pol, "--rule", "grant:"+id, "--jsonl"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("audit --rule grant:%s: %d %s", id, code, out)
	}
	if code, out := run("", "grants", "add", "Write", "--command", "ls", "--policy", pol); code != 1 || !strings.Contains(out, "not a shell tool") {
		t.Errorf("--command on a file tool: %d %s", code, out)
	}
}

// TestGrantsByKind: a grant can name a kind and then covers the tool of
// that kind on every host; a name that is neither a tool nor a kind is
// refused; a tool without paths takes --all, not a path pattern that
// would grant nothing; an approval answered --always --any-host grants
// the call's kind.
func TestGrantsByKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\ndefault: {safe: allow, destructive: ask}\ntools: {gmail.send: other}\n"), 0o644)
	run := func(stdin string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run("", "grants", "add", "shell", "--command", "git push origin staging", "--policy", pol); code != 0 {
		t.Fatalf("grants add shell: %d %s", code, out)
	}
	for _, tool := range []string{"Bash", "run_shell_command", "bash", "exec_command"} {
		call := `{"tool":"` + tool + `","args":{"command":"git push origin staging","cmd":"git push origin staging"}}`
		if code, out := run(call, "check", "--policy", pol, "--session", "s1"); code != 0 || !strings.Contains(out, `"rule": "grant:`) {
			t.Errorf("%s under a grant of kind shell: %d %s", tool, code, out)
		}
	}
	if code, out := run(`{"tool":"run_shell_command","args":{"command":"git push origin main"}}`, "check", "--policy", pol, "--session", "s1"); code != 3 {
		t.Errorf("another command: %d %s", code, out)
	}
	if code, out := run("", "grants", "add", "shel", "--command", "ls", "--policy", pol); code != 1 || !strings.Contains(out, "shel is neither a tool warden knows nor a kind (did you mean shell?)") {
		t.Errorf("a slip of a kind: %d %s", code, out)
	}
	if code, out := run("", "grants", "add", "gmail.send", "--pattern", "*", "--policy", pol); code != 1 || !strings.Contains(out, "use --all") {
		t.Errorf("--pattern on a tool without paths: %d %s", code, out)
	}
	if code, out := run("", "grants", "add", "gmail.send", "--all", "--policy", pol); code != 0 {
		t.Fatalf("grants add gmail.send --all: %d %s", code, out)
	}
	if code, out := run(`{"tool":"gmail.send","args":{"to":"a@b.org","subject":"hi"}}`, "check", "--policy", pol, "--session", "s1"); code != 0 || !strings.Contains(out, `"rule": "grant:`) {
		t.Errorf("gmail.send under --all: %d %s", code, out)
	}
	if code, out := run("", "grants", "add", "Bash", "--all", "--policy", pol); code != 1 || !strings.Contains(out, "every program") {
		t.Errorf("--all on a shell: %d %s", code, out)
	}
	// An approval answered for every host: Claude Code asked, Gemini CLI
	// gets the same call through.
	code, out := run(`{"tool":"Bash","args":{"command":"make deploy"}}`, "check", "--policy", pol, "--session", "s2")
	id := regexp.MustCompile(`Approval (a-[0-9a-f]+) is waiting`).FindStringSubmatch(out)
	if code != 3 || id == nil {
		t.Fatalf("make deploy: %d %s", code, out)
	}
	if code, out := run("", "approvals", "approve", id[1], "--always", "--any-host", "--policy", pol); code != 0 || !strings.Contains(out, "grant g-") {
		t.Fatalf("approve --always --any-host: %d %s", code, out)
	}
	if code, out := run(`{"tool":"run_shell_command","args":{"command":"make deploy"}}`, "check", "--policy", pol, "--session", "s3"); code != 0 {
		t.Errorf("the approved call from another host: %d %s", code, out)
	}
}

// TestExplainSession: explain --session decides as the hook would in that
// session (its role and grants) and changes nothing.
func TestExplainSession(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\ndefault: {safe: allow, destructive: ask}\nroles:\n  reader:\n    tools: [read]\n"), 0o644)
	run := func(stdin string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
		return code, out.String() + errb.String()
	}
	run("", "state", "event", "created", "--session", "r1", "--role", "reader", "--policy", pol)
	if code, out := run("", "grants", "add", "Bash", "--command", "make test", "--session", "s1", "--policy", pol); code != 0 {
		t.Fatalf("grants add: %s", out)
	}
	call := `{"tool":"Bash","args":{"command":"make test"}}`
	if code, out := run(call, "explain", "--policy", pol, "--session", "s1"); code != 0 || !strings.Contains(out, "by grant g-") || !strings.Contains(out, "session: s1") {
		t.Errorf("explain --session s1: %d\n%s", code, out)
	}
	if code, out := run(call, "explain", "--policy", pol, "--session", "s2"); code != 3 {
		t.Errorf("explain --session s2 (no grant): %d\n%s", code, out)
	}
	if code, out := run(call, "explain", "--policy", pol, "--session", "r1"); code != 2 || !strings.Contains(out, "role reader") {
		t.Errorf("explain --session r1 (role reader, no shell): %d\n%s", code, out)
	}
	if code, out := run("", "audit", "--policy", pol, "--jsonl"); code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("explain wrote to the audit trail: %s", out)
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out, errb bytes.Buffer
		if code := cli.Run(context.Background(), []string{arg}, strings.NewReader(""), &out, &errb); code != 0 ||
			!strings.HasPrefix(out.String(), "warden ") || !strings.Contains(out.String(), "go1.") {
			t.Errorf("warden %s: %d %q %q", arg, code, out.String(), errb.String())
		}
	}
}

// TestApprovalsExpiryShown: approvals ls says when each approval expires
// (the policy's approvals.expires), in the table and in the JSON.
func TestApprovalsExpiryShown(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\ndefault: {safe: allow, destructive: ask}\napprovals:\n  expires: 2h\n"), 0o644)
	run := func(stdin string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run(`{"tool":"Bash","args":{"command":"make deploy"}}`, "check", "--policy", pol, "--session", "s", "--text"); code != 3 || !strings.Contains(out, "expires after 2h") {
		t.Fatalf("check: %d %s", code, out)
	}
	if _, out := run("", "approvals", "ls", "--policy", pol); !strings.Contains(out, "EXPIRES IN") || !strings.Contains(out, "2h") {
		t.Errorf("approvals ls:\n%s", out)
	}
	_, out := run("", "approvals", "ls", "--json", "--policy", pol)
	var list []warden.Approval
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].ExpiresAt.Sub(list[0].CreatedAt) != 2*time.Hour {
		t.Errorf("approvals ls --json: %v %s", err, out)
	}
	if _, out := run("", "approvals", "ls", "--ids", "--policy", pol); strings.TrimSpace(out) != list[0].ID {
		t.Errorf("approvals ls --ids: %q", out)
	}
}

// TestSubcommandFlags: each subcommand of state and approvals has its own
// flags: its usage lists them, and a flag of another subcommand is refused
// rather than ignored.
func TestSubcommandFlags(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte("version: 1\ndefault: allow\n"), 0o644)
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run("state", "sessions", "--all", "--json", "--policy", pol); code != 0 || !strings.Contains(out, "[]") {
		t.Errorf("state sessions --all --json: %d %s", code, out)
	}
	if code, out := run("state", "phase", "build", "--all", "--policy", pol); code != 1 || !strings.Contains(out, "flag provided but not defined: -all") {
		t.Errorf("state phase --all: %d %s", code, out)
	}
	if code, out := run("state", "governance", "--policy", pol); code != 1 || !strings.Contains(out, "warden state governance: --session is required") {
		t.Errorf("state governance without --session: %d %s", code, out)
	}
	if code, out := run("approvals", "reject", "a-1", "--once", "--message", "no", "--policy", pol); code != 1 || !strings.Contains(out, "flag provided but not defined: -once") {
		t.Errorf("approvals reject --once: %d %s", code, out)
	}
	if code, out := run("approvals", "approve", "-h"); code != 0 || !strings.Contains(out, "let this one call through") || strings.Contains(out, "print only the ids") {
		t.Errorf("approvals approve -h lists another subcommand's flags: %d %s", code, out)
	}
	if code, out := run("state", "nonsense", "--policy", pol); code != 1 || !strings.Contains(out, `unknown subcommand "nonsense"`) {
		t.Errorf("state nonsense: %d %s", code, out)
	}
}
