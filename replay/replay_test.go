package replay_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/replay"
)

// The transcripts in testdata were recorded from the real hosts (Claude
// Code, Codex, Gemini CLI, OpenCode at the versions .ci/install-hosts.sh
// pins) by e2e/TestReplayLiveTranscripts with the scripted model: one
// session each, running recordedCommands in a git project. The project's
// folder is written @PROJECT@ in them.
var recordedCommands = []string{"ls", "git status", "cat README.md", "echo hi > out.txt", "rm -rf build", "git log --oneline -3"}

// layout is a user's machine with the recorded transcripts where the hosts
// keep them, for a project folder.
type layout struct {
	home, codexHome, dataHome, project string
	files                              map[string]string // host -> transcript
}

// root is the repository's folder: go test runs a package's tests in its
// folder.
func root() string {
	r, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return r
}

// newLayout places the recorded transcripts, the project's folder written
// in, under a temporary home, and the coding example as the project's
// policy.
func newLayout(t testing.TB) *layout {
	t.Helper()
	dir := t.TempDir()
	l := &layout{home: filepath.Join(dir, "home"), codexHome: filepath.Join(dir, "codex-home"),
		dataHome: filepath.Join(dir, "data"), project: filepath.Join(dir, "my project"), files: map[string]string{}}
	if err := os.MkdirAll(filepath.Join(l.project, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	pol, err := os.ReadFile(filepath.Join(root(), "examples", "coding", "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(l.project, "warden.yaml"), string(pol))
	esc := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, l.project)
	td := filepath.Join(root(), "replay", "testdata")
	place := func(host, from, to string) {
		data, err := os.ReadFile(filepath.Join(td, from))
		if err != nil {
			t.Fatal(err)
		}
		write(t, to, strings.ReplaceAll(string(data), "@PROJECT@", l.project))
		l.files[host] = to
	}
	place("claude", "claude/session.jsonl", filepath.Join(l.home, ".claude", "projects", esc, "3dddc5c1.jsonl"))
	rollouts, _ := filepath.Glob(filepath.Join(td, "codex", "rollout-*.jsonl"))
	place("codex", filepath.Join("codex", filepath.Base(rollouts[0])), filepath.Join(l.codexHome, "sessions", "2026", "11", "28", filepath.Base(rollouts[0])))
	chats, _ := filepath.Glob(filepath.Join(td, "gemini", "chats", "*.jsonl"))
	gem := filepath.Join(l.home, ".gemini", "tmp", "project")
	place("gemini", filepath.Join("gemini", "chats", filepath.Base(chats[0])), filepath.Join(gem, "chats", filepath.Base(chats[0])))
	write(t, filepath.Join(gem, ".project_root"), l.project)
	// OpenCode's database: a copy, its folders rewritten.
	db := filepath.Join(l.dataHome, "opencode", "opencode.db")
	data, err := os.ReadFile(filepath.Join(td, "opencode", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, db, string(data))
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE session SET directory = replace(directory, '@PROJECT@', ?)`,
		`UPDATE part SET data = replace(data, '@PROJECT@', ?)`} {
		if _, err := sdb.Exec(q, l.project); err != nil {
			t.Fatal(err)
		}
	}
	sdb.Close()
	l.files["opencode"] = db
	return l
}

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (l *layout) env(k string) string {
	switch k {
	case "CODEX_HOME":
		return l.codexHome
	case "XDG_DATA_HOME":
		return l.dataHome
	}
	return ""
}

// shellLine is the command line of a recorded shell call.
func shellLine(c replay.Call) string {
	s, _ := c.Args["command"].(string)
	return s
}

// TestReadRecordedTranscripts: each host's real transcript gives its six
// calls, in order, as the host's hook would have sent them, with the
// session and the project folder.
func TestReadRecordedTranscripts(t *testing.T) {
	l := newLayout(t)
	tools := map[string]string{"claude": "Bash", "codex": "Bash", "gemini": "run_shell_command", "opencode": "bash"}
	for host, file := range l.files {
		tr, err := (replay.Source{Path: file, Project: l.project}).Read()
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		if tr.Host != host || len(tr.Skipped) != 0 || len(tr.Calls) != len(recordedCommands) {
			t.Fatalf("%s: host %q, %d calls, skipped %v", host, tr.Host, len(tr.Calls), tr.Skipped)
		}
		for i, c := range tr.Calls {
			if c.Tool != tools[host] || shellLine(c) != recordedCommands[i] || c.Session == "" || c.Cwd != l.project ||
				c.Time.IsZero() || c.Host != host || !strings.HasPrefix(c.Source, file+":") {
				t.Errorf("%s call %d: %+v, want %s %q in %s", host, i, c, tools[host], recordedCommands[i], l.project)
			}
		}
	}
}

// TestDiscover finds the four transcripts of the project where the hosts
// keep them, and none of another project's.
func TestDiscover(t *testing.T) {
	l := newLayout(t)
	got := map[string]string{}
	for _, s := range replay.Discover(l.project, l.home, l.env) {
		got[s.Host] = s.Path
	}
	for host, file := range l.files {
		if got[host] != file {
			t.Errorf("Discover: %s at %q, want %q", host, got[host], file)
		}
	}
	other := filepath.Join(filepath.Dir(l.project), "other")
	n := 0
	for _, s := range replay.Discover(other, l.home, l.env) {
		tr, err := s.Read()
		if err != nil {
			t.Fatal(err)
		}
		n += len(tr.Calls)
	}
	if n != 0 {
		t.Errorf("another project's replay read %d calls", n)
	}
}

// TestSkipsBadLines: a truncated line and a foreign one are skipped, each
// named by file and line, and the rest is read; a file of no host is an
// error that names it.
func TestSkipsBadLines(t *testing.T) {
	l := newLayout(t)
	f := l.files["claude"]
	data, _ := os.ReadFile(f)
	lines := strings.Count(string(data), "\n")
	write(t, f, string(data)+`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"x","name":"Ba`+"\n"+
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"y","input":{}}]}}`+"\n")
	tr, err := replay.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Calls) != 6 || len(tr.Skipped) != 2 {
		t.Fatalf("%d calls, skipped %v", len(tr.Calls), tr.Skipped)
	}
	for i, s := range tr.Skipped {
		if want := f + ":" + itoa(lines+1+i); s.Source != want {
			t.Errorf("skip %d at %s, want %s (%s)", i, s.Source, want, s.Reason)
		}
	}
	foreign := filepath.Join(t.TempDir(), "notes.jsonl")
	write(t, foreign, `{"hello":"world"}`+"\n")
	if _, err := replay.ReadFile(foreign); err == nil || !strings.Contains(err.Error(), foreign) {
		t.Errorf("a foreign file: %v, want an error naming it", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func readAll(t testing.TB, l *layout) []replay.Call {
	t.Helper()
	var calls []replay.Call
	for _, s := range replay.Discover(l.project, l.home, l.env) {
		tr, err := s.Read()
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, tr.Calls...)
	}
	return calls
}

// TestReplayCodingExample decides the recorded sessions under the coding
// example: the reads are allowed by its read rules, rm -rf is denied by
// no-rm-rf on every host, and the redirection asks; the report's counts
// add up.
func TestReplayCodingExample(t *testing.T) {
	l := newLayout(t)
	calls := readAll(t, l)
	rep, err := replay.Run(context.Background(), calls, nil, replay.Options{Policy: filepath.Join(l.project, "warden.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calls != 24 || rep.Hosts["claude"] != 6 || rep.Hosts["codex"] != 6 || rep.Hosts["gemini"] != 6 || rep.Hosts["opencode"] != 6 {
		t.Fatalf("calls %d by host %v", rep.Calls, rep.Hosts)
	}
	byRule := map[string]int{}
	for _, r := range rep.Rules {
		byRule[string(r.Decision)+" "+r.Rule] += r.Count
	}
	if byRule["deny no-rm-rf"] != 4 || byRule["allow allow-git-read"] != 8 {
		t.Errorf("by rule: %v, want rm -rf denied by no-rm-rf 4 times and git status and git log allowed 8 times", byRule)
	}
	if rep.Outcomes[warden.Allow]+rep.Outcomes[warden.Ask]+rep.Outcomes[warden.Deny] != 24 {
		t.Errorf("outcomes %v do not add up to 24", rep.Outcomes)
	}
	t.Logf("coding example: %v; rules %v", rep.Outcomes, byRule)
}

// TestReplaySuggestionWorks: the rule suggested for the most frequent ask,
// appended to the policy file as printed, loads without findings, and
// replayed again the calls it was for are allowed and nothing else
// changes but what the report said it would also allow.
func TestReplaySuggestionWorks(t *testing.T) {
	l := newLayout(t)
	calls := readAll(t, l)
	file := filepath.Join(l.project, "warden.yaml")
	rep, err := replay.Run(context.Background(), calls, nil, replay.Options{Policy: file})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Asks) == 0 || rep.Asks[0].Rule == "" {
		t.Fatalf("no suggestion: %+v", rep.Asks)
	}
	top := rep.Asks[0]
	if top.Covers != top.Count {
		t.Errorf("the suggestion covers %d of %d", top.Covers, top.Count)
	}
	tuned := filepath.Join(l.project, "tuned.yaml")
	text, _ := os.ReadFile(file)
	write(t, tuned, insertRule(t, string(text), top.Rule))
	if _, err := policy.Load(tuned); err != nil {
		t.Fatalf("the tuned policy does not load:\n%v\nrule:\n%s", err, top.Rule)
	}
	rep2, err := replay.Run(context.Background(), calls, nil, replay.Options{Policy: tuned, Against: file})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep2.Changed) != top.Count+len(top.AlsoAllows) {
		t.Errorf("changed %d calls, want the group's %d and %d more: %+v", len(rep2.Changed), top.Count, len(top.AlsoAllows), rep2.Changed)
	}
	for _, c := range rep2.Changed {
		if c.Before != warden.Ask || c.After != warden.Allow {
			t.Errorf("changed: %+v, want ask -> allow", c)
		}
	}
	t.Logf("suggested for %q (%d calls):\n%s", top.Pattern, top.Count, top.Rule)
}

// insertRule puts a rule (as replay prints it) first in the policy's rules.
func insertRule(t *testing.T, pol, rule string) string {
	t.Helper()
	i := strings.Index(pol, "\nrules:\n")
	if i < 0 {
		t.Fatal("the policy has no rules: line")
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(rule, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	at := i + len("\nrules:\n")
	return pol[:at] + b.String() + pol[at:]
}
