package engine_test

// The seventh red-team pass: git prints files its repository keeps though
// no operand names them. With .env private and "git grep *", "git diff *",
// "git log *" and "git show *" allowed (as examples/coding allows them),
// git grep KEY printed the line of a tracked .env, git diff its changes,
// git log -p and git show every .env a commit held, git cat-file -p the
// blob whose id git ls-tree named, and git diff --cached the .env that
// git rm --cached had just untracked. Each case runs the real git in a
// real repository, and where the call must not be allowed, shows first
// that git prints the secret.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/engine"
)

const gitRepoPolicy = `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
private: ["**/.env", "~/.ssh/**"]
rules:
  - id: git-read
    effect: allow
    tool: shell
    command: ["git grep *", "git diff *", "git log *", "git show *", "git cat-file *", "git status *", "git stash *"]
`

const secret = "KEY=hunter2-secret"

// gitIn runs git in dir and returns what it printed; a failure fails t.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// shellIn runs a line with bash in dir, as the host would.
func shellIn(t *testing.T, dir, line string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_PAGER=cat", "PAGER=cat")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// newRepoWorkspace makes a workspace that is a git repository with a
// committed src/a.go and, when trackEnv, a committed .env; extra runs
// before the policy is compiled.
func newRepoWorkspace(t *testing.T, trackEnv bool, initArgs ...string) string {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	gitIn(t, dir, append([]string{"init", "-q"}, initArgs...)...)
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src/a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".env"), []byte(secret+"\n"), 0o600)
	if !trackEnv {
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".env\nwarden.yaml\n.warden/\n"), 0o644)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "one")
	os.WriteFile(filepath.Join(dir, "src/a.go"), []byte("package a\n\n// changed\n"), 0o644)
	if trackEnv {
		os.WriteFile(filepath.Join(dir, ".env"), []byte(secret+"\nKEY2=more-secret\n"), 0o600)
	}
	return dir
}

type repoCase struct {
	name, line string
	expect     string // deny, notAllow, allow
	// leaks: the real git prints the secret for this line (shown before
	// the decision is checked).
	leaks bool
}

func checkRepoCases(t *testing.T, e *engine.Engine, dir string, cases []repoCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.leaks {
				if out := shellIn(t, dir, c.line); !strings.Contains(out, "hunter2") {
					t.Fatalf("the real %q does not print the secret, so the case proves nothing:\n%s", c.line, out)
				}
			}
			expectDecision(t, e, sh(c.line), c.expect)
		})
	}
}

func TestRedteam7GitTrackedPrivate(t *testing.T) {
	t.Parallel()
	dir := newRepoWorkspace(t, true)
	blob := strings.Fields(gitIn(t, dir, "ls-tree", "HEAD", ".env"))[2]
	e := compileIn(t, dir, gitRepoPolicy)
	checkRepoCases(t, e, dir, []repoCase{
		// Findings.
		{"git grep", "git grep hunter2", "deny", true},
		{"git grep -l (names the files whose content matches)", "git grep -c hunter", "deny", false},
		{"git grep in the working folder", "git grep hunter2 .", "deny", true},
		{"git grep --cached", "git grep --cached hunter2", "deny", true},
		{"git diff", "git diff", "deny", true},
		{"git diff --cached after git add", "git add .env && git diff --cached", "notAllow", false},
		{"git diff HEAD", "git diff HEAD", "notAllow", true},
		{"git log -p", "git log -p", "notAllow", true},
		{"git log -p of a folder", "git log -p -- .", "notAllow", true},
		{"git log -S (tells whether a text was in any file)", "git log -S hunter2 --oneline", "notAllow", false},
		{"git log -G", "git log -G 'KEY=h' --oneline", "notAllow", false},
		{"git show", "git show", "notAllow", true},
		{"git show HEAD", "git show HEAD", "notAllow", true},
		{"git show --stat of a blob id", "git show --stat " + blob, "notAllow", true},
		{"git cat-file -p of a blob id", "git cat-file -p " + blob, "notAllow", true},
		{"git cat-file blob", "git cat-file blob " + blob[:8], "notAllow", true},
		{"git cat-file --batch", "echo " + blob + " | git cat-file --batch", "notAllow", true},
		{"git status -v", "git add .env; git status -v", "notAllow", false},
		{"git diff with a computed revision", "git diff $REV", "notAllow", false},
		{"git show of a blob id with a pathspec (a blob ignores it)", "git show " + blob + " -- src/a.go", "notAllow", true},
		{"git diff from a folder below (it prints the whole work tree)", "cd src && git diff", "deny", true},
		{"git grep --recurse-submodules", "git grep --recurse-submodules hunter2", "notAllow", true},
		{"git diff --submodule=diff", "git diff --submodule=diff", "notAllow", true},
		// Handled before.
		{"handled: git show HEAD:.env", "git show HEAD:.env", "deny", true},
		{"handled: git log -p -- .env", "git log -p -- .env", "deny", true},
		// Allowed: the files named leave the private file out, or only
		// names and counts are printed.
		{"git grep in src", "git grep package -- src", "allow", false},
		{"git grep of a file", "git grep package src/a.go", "allow", false},
		{"git grep of go files", "git grep package -- '*.go'", "allow", false},
		{"git diff of a file", "git diff -- src/a.go", "allow", false},
		{"git diff of go files", "git diff -- '*.go'", "allow", false},
		{"git diff --stat", "git diff --stat", "allow", false},
		{"git diff --name-only HEAD", "git diff --name-only HEAD", "allow", false},
		{"git log -p of a file", "git log -p -- src/a.go", "allow", false},
		{"git log --stat", "git log --stat", "allow", false},
		{"git log --oneline", "git log --oneline", "allow", false},
		{"git show --stat", "git show --stat", "allow", false},
		{"git show --name-only HEAD", "git show --name-only HEAD", "allow", false},
		{"git show of a file at a commit", "git show HEAD:src/a.go", "allow", false},
		{"git cat-file -t", "git cat-file -t " + blob, "allow", false},
		{"git status", "git status", "allow", false},
		{"git stash show", "git stash show", "allow", false},
	})
}

// git diff prints the files that changed, and git diff --cached those
// staged: a tracked private file unchanged is not printed (a committed
// .env.example under "**/.env.*" leaves plain git diff allowed).
func TestRedteam7GitTrackedUnchanged(t *testing.T) {
	t.Parallel()
	dir := newRepoWorkspace(t, true)
	gitIn(t, dir, "checkout", "--", ".env")
	e := compileIn(t, dir, gitRepoPolicy)
	checkRepoCases(t, e, dir, []repoCase{
		{"git grep (searches every tracked file)", "git grep hunter2", "deny", true},
		{"git diff", "git diff", "allow", false},
		{"git diff --cached", "git diff --cached", "allow", false},
		{"git status -v", "git status -v", "allow", false},
		{"git status -vv", "git status -vv", "allow", false},
	})
	// The change staged: --cached prints it, the work tree matches the
	// index.
	staged := newRepoWorkspace(t, true)
	gitIn(t, staged, "add", ".env")
	e = compileIn(t, staged, gitRepoPolicy)
	checkRepoCases(t, e, staged, []repoCase{
		{"git diff --cached", "git diff --cached", "deny", true},
		{"git status -v", "git status -v", "deny", true},
		{"git diff", "git diff", "allow", false},
	})
}

// The everyday case: .env ignored, never committed. Commands over the
// tracked files are allowed; history still asks, unless narrowed.
func TestRedteam7GitIgnoredPrivate(t *testing.T) {
	t.Parallel()
	dir := newRepoWorkspace(t, false)
	e := compileIn(t, dir, gitRepoPolicy)
	checkRepoCases(t, e, dir, []repoCase{
		{"git grep", "git grep KEY", "allow", false},
		{"git diff", "git diff", "allow", false},
		{"git diff --cached", "git diff --cached", "allow", false},
		{"git status -v", "git status -v", "allow", false},
		{"git log -p (history warden does not search)", "git log -p", "notAllow", false},
		{"git log -p of a file", "git log -p -- src/a.go", "allow", false},
	})
}

// git rm --cached .env untracks the file, and git diff --cached then
// prints it as removed: the commit HEAD names holds it.
func TestRedteam7GitStagedRemoval(t *testing.T) {
	t.Parallel()
	dir := newRepoWorkspace(t, true)
	gitIn(t, dir, "rm", "-q", "--cached", ".env")
	e := compileIn(t, dir, gitRepoPolicy)
	checkRepoCases(t, e, dir, []repoCase{
		{"git diff --cached", "git diff --cached", "deny", true},
		{"git diff --staged", "git diff --staged", "deny", true},
		{"git diff (the work tree beside the index, which no longer has .env)", "git diff", "allow", false},
	})
}

// A workspace inside a bigger repository: git uses the parent's index,
// which tracks the workspace's .env.
func TestRedteam7GitParentRepository(t *testing.T) {
	t.Parallel()
	parent, _ := filepath.EvalSymlinks(t.TempDir())
	gitIn(t, parent, "init", "-q")
	ws := filepath.Join(parent, "ws")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, ".env"), []byte(secret+"\n"), 0o600)
	os.WriteFile(filepath.Join(ws, "src/a.go"), []byte("package a\n"), 0o644)
	gitIn(t, parent, "add", "-A")
	gitIn(t, parent, "commit", "-q", "-m", "one")
	e := compileIn(t, ws, gitRepoPolicy)
	checkRepoCases(t, e, ws, []repoCase{
		{"git grep", "git grep hunter2", "deny", true},
		{"git grep in src", "git grep package -- src", "allow", false},
	})
}

// Index forms: SHA-256 object names (32-byte ids), a linked work tree (a
// .git file), and version 4, whose prefix-compressed names git lists for
// warden (git ls-files).
func TestRedteam7GitIndexForms(t *testing.T) {
	t.Parallel()
	t.Run("sha256", func(t *testing.T) {
		dir := newRepoWorkspace(t, true, "--object-format=sha256")
		e := compileIn(t, dir, gitRepoPolicy)
		checkRepoCases(t, e, dir, []repoCase{
			{"git grep", "git grep hunter2", "deny", true},
			{"git grep in src", "git grep package -- src", "allow", false},
		})
	})
	t.Run("linked work tree", func(t *testing.T) {
		main := newRepoWorkspace(t, true)
		gitIn(t, main, "commit", "-q", "-am", "two")
		wt := filepath.Join(filepath.Dir(main), filepath.Base(main)+"-wt")
		gitIn(t, main, "worktree", "add", "-q", wt)
		t.Cleanup(func() { os.RemoveAll(wt) })
		e := compileIn(t, wt, gitRepoPolicy)
		checkRepoCases(t, e, wt, []repoCase{
			{"git grep", "git grep hunter2", "deny", true},
			{"git grep in src", "git grep package -- src", "allow", false},
		})
	})
	t.Run("version 4", func(t *testing.T) {
		dir := newRepoWorkspace(t, true)
		gitIn(t, dir, "update-index", "--index-version", "4")
		e := compileIn(t, dir, gitRepoPolicy)
		checkRepoCases(t, e, dir, []repoCase{
			{"git grep", "git grep hunter2", "deny", true},
			{"git grep in src", "git grep package -- src", "allow", false},
		})
	})
}
