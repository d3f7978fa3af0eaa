package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

const levelsPolicy = `version: 1
roles:
  coordinator:
    description: Plans and delegates.
    tools: [read, list, todo, delegate]
    first: [todo]
    delegates: [builder]
  builder:
    description: Edits code and runs commands.
    tools: [read, list, write, edit, shell, todo]
    first: [read]
rules:
  - id: no-force-push
    effect: deny
    tool: shell
    command: "git push --force *"
    message: Force-pushing rewrites shared history.
    suggestion: Push without --force.
governance:
  levels:
    0:
      state: [phase, anchors, intent, history, session]
      files: [docs/plan.md]
    1:
      sections: [rules, first]
      state: [phase]
    2:
      sections: [rules]
      state: []
`

// setupFiles is setup with files written before the policy is loaded.
func setupFiles(t *testing.T, policyText string, files map[string]string) *env {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(file, []byte(policyText), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return &env{dir: dir, pol: pol, eng: eng, store: store, tr: session.New(eng, store)}
}

func levelsEnv(t *testing.T) *env {
	t.Helper()
	e := setupFiles(t, levelsPolicy, map[string]string{"docs/plan.md": "PLAN-MARKER: ship the parser first.\n"})
	now := time.Now()
	if err := session.SetPhase(ctx, e.store, "build", session.Limits(e.pol), now); err != nil {
		t.Fatal(err)
	}
	if _, err := session.AddAnchor(ctx, e.store, warden.Anchor{Priority: warden.Critical, Content: "ANCHOR-MARKER: never touch billing."}, session.Limits(e.pol), now); err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddHistory(ctx, warden.HistoryEntry{Time: now, Agent: "builder", Action: "HISTORY-MARKER: parser done", Result: "pass"}); err != nil {
		t.Fatal(err)
	}
	return e
}

func checkText(t *testing.T, what, text string, has, lacks []string) {
	t.Helper()
	for _, w := range has {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
	for _, w := range lacks {
		if strings.Contains(text, w) {
			t.Errorf("%s has %q:\n%s", what, w, text)
		}
	}
	if r := forbidden(text); r != 0 {
		t.Errorf("%s has %U", what, r)
	}
}

// TestLevelsSessionStart: the main agent (depth 0), its subagent (depth 1,
// started with its parent through the tracker, as the hooks start it) and
// theirs (depth 2 and 3) each read their level's share: depth 0 the whole
// text with anchors, history and the plan file; depth 1 the rules and the
// first action with the phase only; depth 2, and 3 past the last level,
// the rules alone.
func TestLevelsSessionStart(t *testing.T) {
	e := levelsEnv(t)
	s0, text0, err := e.tr.Start(ctx, session.StartOptions{ID: "main", Role: "coordinator", Host: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	s1, text1, err := e.tr.Start(ctx, session.StartOptions{ID: "main/a1", Parent: "main", Role: "builder", Host: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	s2, text2, err := e.tr.Start(ctx, session.StartOptions{ID: "main/a1/a2", Parent: "main/a1", Role: "builder", Host: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	s3, text3, err := e.tr.Start(ctx, session.StartOptions{ID: "main/a1/a2/a3", Parent: "main/a1/a2", Role: "builder", Host: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if s0.Depth != 0 || s1.Depth != 1 || s2.Depth != 2 || s3.Depth != 3 {
		t.Fatalf("depths %d %d %d %d", s0.Depth, s1.Depth, s2.Depth, s3.Depth)
	}
	rules := "DENY no-force-push: Force-pushing rewrites shared history."
	checkText(t, "depth 0", text0,
		[]string{"You are: coordinator", "Current phase: build", "Delegation depth: 0", rules, "### Hierarchy", "Use todo before any other tool.",
			"[CRITICAL] ANCHOR-MARKER: never touch billing.", "### Recent project history", "builder: HISTORY-MARKER: parser done (pass)",
			"### File docs/plan.md", "PLAN-MARKER: ship the parser first."}, nil)
	checkText(t, "depth 1", text1,
		[]string{"You are: builder", "Current phase: build", "Delegation depth: 1", rules, "Use read before any other tool."},
		[]string{"### Hierarchy", "ANCHOR-MARKER", "HISTORY-MARKER", "PLAN-MARKER"})
	for i, text := range []string{text2, text3} {
		checkText(t, "depth "+string(rune('2'+i)), text,
			[]string{"You are: builder", rules},
			[]string{"Current phase", "### Hierarchy", "### Required first action", "ANCHOR-MARKER", "HISTORY-MARKER", "PLAN-MARKER"})
	}
	if text0 == text1 || text1 == text2 {
		t.Error("two depths read the same text")
	}

	// After a compaction: the reminder keeps to the level too.
	for _, id := range []string{"main", "main/a1", "main/a1/a2"} {
		if _, err := e.tr.Compact(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	r0, err := e.tr.Governance(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	r1, err := e.tr.Governance(ctx, "main/a1")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := e.tr.Governance(ctx, "main/a1/a2")
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, "reminder at depth 0", r0, []string{"WARDEN REMINDER", "Current phase: build", "ANCHOR-MARKER", "### Hierarchy",
		"Files given at session start (read them again if you need them): docs/plan.md"}, []string{"PLAN-MARKER"})
	checkText(t, "reminder at depth 1", r1, []string{"WARDEN REMINDER", "Current phase: build", "You may use only: read", "Resume with read."},
		[]string{"Anchors", "### Hierarchy", "docs/plan.md"})
	checkText(t, "reminder at depth 2", r2, []string{"WARDEN REMINDER", "You may use only: read"},
		[]string{"Current phase", "Anchors", "### Hierarchy", "Resume with"})

	// Resumed: the session's counters are state a level reads or not.
	note0, err := e.tr.Resume(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	note2, err := e.tr.Resume(ctx, "main/a1/a2")
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, "resume at depth 0", note0, []string{"So far: 0 tool calls"}, nil)
	checkText(t, "resume at depth 2", note2, []string{"You are resuming session main/a1/a2"}, []string{"So far", "Current phase"})
}

// TestLevelsWithoutParentRecord: a subagent whose parent warden never saw
// start lies at depth 1 all the same, and reads level 1; a session that a
// call opened before the host reported it as a subagent's takes the
// start's depth.
func TestLevelsWithoutParentRecord(t *testing.T) {
	e := levelsEnv(t)
	s, text, err := e.tr.Start(ctx, session.StartOptions{ID: "ghost/a1", Parent: "ghost", Role: "builder", Host: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Depth != 1 || !strings.Contains(text, "Delegation depth: 1") || strings.Contains(text, "PLAN-MARKER") {
		t.Errorf("depth %d, text:\n%s", s.Depth, text)
	}
	if _, _, err := e.tr.Start(ctx, session.StartOptions{ID: "p", Role: "coordinator"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tr.Prompt(ctx, "child", "do it"); err != nil { // opened at depth 0, before its start
		t.Fatal(err)
	}
	s, text, err = e.tr.Start(ctx, session.StartOptions{ID: "child", Parent: "p", Role: "builder", Host: "opencode"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Depth != 1 || s.Parent != "p" || strings.Contains(text, "PLAN-MARKER") {
		t.Errorf("child: depth %d parent %q, text:\n%s", s.Depth, s.Parent, text)
	}
}

// TestLevelFileChecks: a level's file that went away, or was made a link
// out of the workspace, after the policy was loaded fails the text with
// the policy's position; it never gives the model what it may not read.
func TestLevelFileChecks(t *testing.T) {
	e := levelsEnv(t)
	plan := filepath.Join(e.dir, "docs/plan.md")
	if err := os.Remove(plan); err != nil {
		t.Fatal(err)
	}
	_, err := session.Prefix(e.pol, warden.Session{ID: "x", Role: "coordinator"}, warden.ProjectState{})
	if err == nil || !strings.Contains(err.Error(), "warden.yaml:") || !strings.Contains(err.Error(), "docs/plan.md does not exist") {
		t.Errorf("removed file: %v", err)
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET-MARKER"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, plan); err != nil {
		t.Fatal(err)
	}
	text, err := session.Prefix(e.pol, warden.Session{ID: "x", Role: "coordinator"}, warden.ProjectState{})
	if err == nil || strings.Contains(text, "SECRET-MARKER") || !strings.Contains(err.Error(), "outside the workspace") {
		t.Errorf("a link out: %v\n%s", err, text)
	}
	// Depth 1 names no file: it is not affected.
	if _, err := session.Prefix(e.pol, warden.Session{ID: "y", Role: "builder", Depth: 1}, warden.ProjectState{}); err != nil {
		t.Errorf("depth 1: %v", err)
	}
}

// TestLevelFileCut: a file longer than policy.LevelFileMax is cut, and the
// text says so; secrets in it are redacted.
func TestLevelFileCut(t *testing.T) {
	big := "token ghp_" + strings.Repeat("a", 36) + "\n" + strings.Repeat("x", policy.LevelFileMax)
	e := setupFiles(t, "version: 1\ngovernance:\n  levels:\n    0: {files: [big.txt]}\n", map[string]string{"big.txt": big})
	text, err := session.Prefix(e.pol, warden.Session{ID: "x"}, warden.ProjectState{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "ghp_aaaa") || !strings.Contains(text, "[the rest of big.txt is left out: read the file itself]") || len(text) > policy.LevelFileMax+4096 {
		t.Errorf("text of %d bytes:\n%.400s", len(text), text)
	}
}
