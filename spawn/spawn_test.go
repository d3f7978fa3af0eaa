package spawn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/report"
	"github.com/warden-run/warden/spawn"
	"github.com/warden-run/warden/sqlite"
)

var ctx = context.Background()

// fakeHost is a real program standing in for a host's headless mode: it
// writes its arguments, its folder and its spawn id to args.txt in the
// project, and exits with the status in the project's file "status" (0
// when there is none).
const fakeHost = `#!/bin/sh
dir=$(dirname "$0")
{ printf '%s\n' "$@"; echo "cwd=$(pwd)"; echo "spawn=$WARDEN_SPAWN"; echo "hookd=$WARDEN_HOOKD"; echo "callid=$WARDEN_HOOK_CALL_ID"; } > "$dir/args.txt"
echo "the follow-up ran"
exit $(cat "$dir/status" 2>/dev/null || echo 0)
`

// setup writes a policy with the given extra text and opens its store;
// the fake host is the program of every host.
func setup(t *testing.T, extra string) (*spawn.Runner, warden.Store, string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\nroles:\n  reviewer: {}\n  builder: {}\n"+extra), 0o644)
	exectest.WriteFile(filepath.Join(dir, "host.sh"), []byte(fakeHost), 0o755)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	pol, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &spawn.Runner{Policy: pol, Store: st, LookPath: func(string) (string, error) { return filepath.Join(dir, "host.sh"), nil }}
	return r, st, dir
}

// session stores a session at a depth with a role.
func session(t *testing.T, st warden.Store, id, role string, depth int) {
	t.Helper()
	if _, err := st.UpdateSession(ctx, id, func(s *warden.Session, created bool) error {
		s.Role, s.Depth, s.Status = role, depth, warden.SessionIdle
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSpawnRunsAndLinks starts a follow-up: the host's program runs in the
// project with the prompt as one argument, the spawn id in its
// environment, hookd off and the hook's call id dropped; its output goes
// to the log. The host's session links once to the parent; Wait records
// the exit; List tells the whole story.
func TestSpawnRunsAndLinks(t *testing.T) {
	t.Setenv("WARDEN_HOOK_CALL_ID", "call-of-the-parent-hook")
	r, st, dir := setup(t, "report:\n  spawn: {max_depth: 2}\n")
	session(t, st, "parent", "builder", 0)
	req := report.SpawnRequest{Host: "claude", Prompt: "Review the answer; it said: refunded.", Role: "reviewer", Plugin: "support", Parent: "parent"}
	if err := r.Spawn(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "args.txt"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 6 || lines[0] != "-p" || lines[1] != req.Prompt || lines[2] != "cwd="+dir ||
		!strings.HasPrefix(lines[3], "spawn=sp") || lines[4] != "hookd=off" || lines[5] != "callid=" {
		t.Fatalf("the host ran with:\n%s", data)
	}
	id := strings.TrimPrefix(lines[3], "spawn=")
	log, _ := os.ReadFile(filepath.Join(dir, ".warden", "spawn", id+".log"))
	if string(log) != "the follow-up ran\n" {
		t.Errorf("log: %q", log)
	}

	// The host's session starts: linked once, to the parent, with the role.
	parent, role, ok, err := spawn.Link(ctx, st, id, "child-1", "claude")
	if err != nil || !ok || parent != "parent" || role != "reviewer" {
		t.Fatalf("Link = %q %q %v %v", parent, role, ok, err)
	}
	if _, _, ok, err := spawn.Link(ctx, st, id, "grandchild", "claude"); ok || err != nil {
		t.Errorf("a second session took the same spawn: %v %v", ok, err)
	}
	if _, _, ok, _ := spawn.Link(ctx, st, "sp000000000000", "other", "claude"); ok {
		t.Error("an unknown spawn id linked")
	}

	list, err := spawn.List(ctx, st, "parent")
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %+v %v", list, err)
	}
	s := list[0]
	if s.ID != id || s.Child != "child-1" || s.Host != "claude" || s.Role != "reviewer" || s.Depth != 1 ||
		s.Plugin != "support" || s.Status != spawn.Exited || s.Outcome() != "exited 0" || s.Log != filepath.Join(".warden", "spawn", id+".log") {
		t.Errorf("spawn: %+v (%s)", s, s.Outcome())
	}
}

// TestSpawnExitStatus records a follow-up that failed with its status.
func TestSpawnExitStatus(t *testing.T) {
	r, st, dir := setup(t, "")
	os.WriteFile(filepath.Join(dir, "status"), []byte("3"), 0o644)
	session(t, st, "p", "", 0)
	if err := r.Spawn(ctx, report.SpawnRequest{Host: "codex", Prompt: "go on", Parent: "p", Cwd: "sub"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctx); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Wait: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "args.txt"))
	if !strings.Contains(string(data), "exec\n--skip-git-repo-check\ngo on\ncwd="+filepath.Join(dir, "sub")+"\n") {
		t.Errorf("codex ran with:\n%s", data)
	}
	list, _ := spawn.List(ctx, st, "")
	if len(list) != 1 || list[0].ExitCode == nil || *list[0].ExitCode != 3 || !strings.HasPrefix(list[0].Outcome(), "failed: ") {
		t.Fatalf("list: %+v", list)
	}
}

// TestSpawnRefused: every request warden does not start is refused with a
// reason that names the problem, recorded as a deny with its code.
func TestSpawnRefused(t *testing.T) {
	cases := []struct {
		name, policy string
		depth        int
		req          report.SpawnRequest
		code         warden.Code
		want         string
	}{
		{"unknown host", "", 0, report.SpawnRequest{Host: "cursor", Prompt: "x"}, warden.CodeBadInput, `unknown host "cursor" (want claude, codex, gemini or opencode)`},
		{"no prompt", "", 0, report.SpawnRequest{Host: "claude", Prompt: "  "}, warden.CodeBadInput, `"prompt" is required`},
		{"flag prompt", "", 0, report.SpawnRequest{Host: "claude", Prompt: "--dangerously-skip-permissions"}, warden.CodeBadInput, "could read as a flag"},
		{"unknown role", "", 0, report.SpawnRequest{Host: "claude", Prompt: "x", Role: "admin"}, warden.CodeRoleUnknown, `role "admin" is not defined`},
		{"host not allowed", "report:\n  spawn: {hosts: [codex]}\n", 0, report.SpawnRequest{Host: "claude", Prompt: "x"}, warden.CodeRuleDeny, "not in report.spawn.hosts"},
		{"depth", "", 1, report.SpawnRequest{Host: "claude", Prompt: "x"}, warden.CodeDepthExceeded, "would run at depth 2, over report.spawn.max_depth 1"},
		{"off", "report:\n  spawn: {max_depth: 0}\n", 0, report.SpawnRequest{Host: "claude", Prompt: "x"}, warden.CodeDepthExceeded, "off in this policy"},
		{"cwd outside", "", 0, report.SpawnRequest{Host: "claude", Prompt: "x", Cwd: "../.."}, warden.CodeOutsideWorkspace, "must stay inside the project folder"},
		{"cwd absolute", "", 0, report.SpawnRequest{Host: "claude", Prompt: "x", Cwd: "/tmp"}, warden.CodeOutsideWorkspace, "must be relative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, st, dir := setup(t, c.policy)
			session(t, st, "p", "", c.depth)
			c.req.Parent = "p"
			err := r.Spawn(ctx, c.req)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Spawn: %v, want %q", err, c.want)
			}
			recs, _ := st.Audit(ctx, warden.AuditFilter{Tool: spawn.Tool})
			if len(recs) != 1 || recs[0].Decision != warden.Deny || recs[0].Code != c.code || recs[0].Session != "p" || !strings.Contains(recs[0].Reason, c.want) {
				t.Fatalf("records: %+v", recs)
			}
			if _, err := os.Stat(filepath.Join(dir, "args.txt")); err == nil {
				t.Error("the host ran")
			}
			list, _ := spawn.List(ctx, st, "p")
			if len(list) != 1 || list[0].Status != spawn.Refused || !strings.Contains(list[0].Outcome(), c.want) {
				t.Errorf("list: %+v", list)
			}
		})
	}
}

// TestSpawnMissingProgram: a host whose program is not on PATH is refused.
func TestSpawnMissingProgram(t *testing.T) {
	r, st, _ := setup(t, "")
	t.Setenv("PATH", t.TempDir())
	r.LookPath = nil
	session(t, st, "p", "", 0)
	err := r.Spawn(ctx, report.SpawnRequest{Host: "gemini", Prompt: "x", Parent: "p"})
	if err == nil || !strings.Contains(err.Error(), `the gemini program "gemini" is not found in PATH`) {
		t.Fatalf("Spawn: %v", err)
	}
}

// TestSpawnLimits: the count per session, and a loop (a follow-up asking
// for itself again) even within the depth limit.
func TestSpawnLimits(t *testing.T) {
	r, st, _ := setup(t, "report:\n  spawn: {max_depth: 5, max_per_session: 2}\n")
	session(t, st, "p", "", 0)
	for i := range 2 {
		if err := r.Spawn(ctx, report.SpawnRequest{Host: "claude", Prompt: "again " + string(rune('a'+i)), Parent: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	err := r.Spawn(ctx, report.SpawnRequest{Host: "claude", Prompt: "third", Parent: "p"})
	if err == nil || !strings.Contains(err.Error(), "has started 2 follow-up sessions, the limit of report.spawn.max_per_session") {
		t.Fatalf("third spawn: %v", err)
	}
	r.Wait(ctx)
	list, _ := spawn.List(ctx, st, "p")
	if _, _, ok, err := spawn.Link(ctx, st, list[0].ID, "child", "claude"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	session(t, st, "child", "", 1)
	err = r.Spawn(ctx, report.SpawnRequest{Host: "claude", Prompt: "again a", Parent: "child"})
	var we *warden.Error
	if !errors.As(err, &we) || we.Code != warden.CodeDepthExceeded || !strings.Contains(err.Error(), "a loop: session child was itself started on claude with this prompt") {
		t.Fatalf("loop: %v", err)
	}
	// Another prompt from the child is a follow-up, not a loop.
	if err := r.Spawn(ctx, report.SpawnRequest{Host: "claude", Prompt: "something new", Parent: "child"}); err != nil {
		t.Fatal(err)
	}
	r.Wait(ctx)
}

// TestSpawnFromPlugin runs the whole plugin path: a plugin file whose
// on-complete command prints a spawn request and whose spawn key asks for
// another; Session.Complete hands both to the runner in its context.
func TestSpawnFromPlugin(t *testing.T) {
	r, st, dir := setup(t, "report:\n  spawn: {max_depth: 1}\n")
	session(t, st, "p", "builder", 0)
	exectest.WriteFile(filepath.Join(dir, "ask.sh"), []byte("#!/bin/sh\necho '{\"spawn\": {\"host\": \"opencode\", \"prompt\": \"translate it\"}}'\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "plugin.yaml"), []byte(`name: follow
schema: {type: object, properties: {topic: {type: string}}, required: [topic]}
long_instruction: Name the topic.
short_instruction: the topic
on_complete: {command: [./ask.sh]}
spawn:
  host: claude
  prompt: "Check the answer about {{meta.topic}}: {{final_report}}"
  role: reviewer
`), 0o644)
	files, err := report.LoadPlugins(dir, []string{"plugin.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := report.NewSession(&report.Config{Plugins: files.Factories(), SessionID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	n := s.Tags().Nonce
	s.Turn([]byte("<warden-" + n + "-FINAL>\nRefunded.\n</warden-" + n + "-FINAL>\n<warden-" + n + `-META plugin="follow">{"topic": "billing"}</warden-` + n + "-META>"))
	pend, err := s.Complete(report.WithSpawner(ctx, r.Spawner()), false)
	if err != nil {
		t.Fatal(err)
	}
	if errs := pend.Wait(); len(errs) != 0 {
		t.Fatal(errs)
	}
	r.Wait(ctx)
	list, _ := spawn.List(ctx, st, "p")
	if len(list) != 2 {
		t.Fatalf("list: %+v", list)
	}
	got := map[string]spawn.Spawn{}
	for _, s := range list {
		got[s.Host] = s
	}
	if c := got["claude"]; strings.Join(strings.Fields(c.Prompt), " ") != "Check the answer about billing: Refunded." || c.Role != "reviewer" || c.Plugin != "follow" {
		t.Errorf("claude follow-up: %+v", c)
	}
	if o := got["opencode"]; o.Prompt != "translate it" || o.Role != "builder" || o.Outcome() != "exited 0" {
		t.Errorf("opencode follow-up: %+v", o)
	}
}

// TestPolicySpawnKeys: report.spawn's defaults, its keys, and the errors
// of a bad value or a plugin file whose spawn key names an unknown host or
// role.
func TestPolicySpawnKeys(t *testing.T) {
	dir := t.TempDir()
	load := func(text string) (*policy.Policy, error) {
		file := filepath.Join(dir, "warden.yaml")
		os.WriteFile(file, []byte("version: 1\nroles:\n  reviewer: {}\n"+text), 0o644)
		return policy.Load(file)
	}
	p, err := load("report: {}\n")
	if sp := p.Report.Spawn; err != nil || sp.MaxDepth != 1 || sp.MaxPerSession != 3 || sp.Hosts != nil || sp.Timeout != policy.DefaultSpawnTimeout {
		t.Fatalf("defaults: %+v %v", p.Report.Spawn, err)
	}
	p, err = load("report:\n  spawn: {max_depth: 2, max_per_session: 5, hosts: [claude, codex], timeout: 10m}\n")
	if err != nil || p.Report.Spawn.MaxDepth != 2 || p.Report.Spawn.MaxPerSession != 5 || strings.Join(p.Report.Spawn.Hosts, ",") != "claude,codex" || p.Report.Spawn.Timeout.Minutes() != 10 {
		t.Fatalf("set: %+v %v", p.Report.Spawn, err)
	}
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("name: p\nschema: {type: object}\nlong_instruction: l\nshort_instruction: s\nspawn: {host: cursor, prompt: x, role: admin}\n"), 0o644)
	for text, want := range map[string]string{
		"report:\n  spawn: {max_depth: -1}\n":       "report.spawn.max_depth: must be at least 0",
		"report:\n  spawn: {max_per_session: 0}\n":  "report.spawn.max_per_session: must be at least 1",
		"report:\n  spawn: {hosts: [cursor]}\n":     `unknown host "cursor" (want claude, codex, gemini or opencode)`,
		"report:\n  spawn: {timeout: soon}\n":       `"soon" is not a duration`,
		"report:\n  spawn: {max: 1}\n":              `unknown key "max"`,
		"report:\n  plugins: [p.yaml]\n":            `spawn.host "cursor" is not a host`,
		"report:\n  plugins: [p.yaml]\n  spawn: {}": `spawn.role "admin" is not defined under roles`,
	} {
		if _, err := load(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// TestSpawnInvalidResult: an on-complete command that prints a result
// warden cannot read asks for nothing; Invalid records it as a refusal of
// the parent's follow-ups, with the reason, next to the log's warning.
func TestSpawnInvalidResult(t *testing.T) {
	r, st, dir := setup(t, "")
	session(t, st, "p", "", 0)
	exectest.WriteFile(filepath.Join(dir, "bad.sh"), []byte("#!/bin/sh\necho '{\"spawn\": {\"host\": \"claude\", \"promt\": \"typo\"}}'\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "plugin.yaml"), []byte("name: bad\nschema: {type: object}\nlong_instruction: l\nshort_instruction: s\non_complete: {command: [./bad.sh]}\n"), 0o644)
	files, err := report.LoadPlugins(dir, []string{"plugin.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := report.NewSession(&report.Config{Plugins: files.Factories(), SessionID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	n := s.Tags().Nonce
	s.Turn([]byte("<warden-" + n + "-FINAL>\nDone.\n</warden-" + n + "-FINAL>\n<warden-" + n + `-META plugin="bad">{}</warden-` + n + "-META>"))
	pend, err := s.Complete(report.WithSpawner(ctx, r.Spawner()), false)
	if err != nil {
		t.Fatal(err)
	}
	errs := pend.Wait()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `unknown field "promt"`) {
		t.Fatalf("errors: %v", errs)
	}
	r.Invalid(ctx, "p", errors.Join(errs...))
	r.Wait(ctx)
	list, _ := spawn.List(ctx, st, "p")
	if len(list) != 1 || list[0].Status != spawn.Refused || list[0].Plugin != "bad" || !strings.Contains(list[0].Reason, `BAD_INPUT: command `) ||
		!strings.Contains(list[0].Outcome(), `unknown field "promt"`) {
		t.Fatalf("list: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(dir, "args.txt")); err == nil {
		t.Error("the host ran")
	}
}
