package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
)

// gitAddPolicy allows the everyday git commands and edits, and keeps .env
// files private.
const gitAddPolicy = `version: 1
default: {safe: allow, destructive: deny}
private: ["**/.env"]
rules:
  - id: git
    effect: allow
    tool: shell
    command: ["git add *", "git commit *", "git grep *", "echo *", "cp *"]
`

// gitRepo makes a repository with a private file at the top, and more in
// folders, and compiles gitAddPolicy in it; ignore is its .gitignore.
func gitRepo(t *testing.T, ignore string, track ...string) (*engine.Engine, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", ".")
	for _, d := range []string{"src", "build", "keep"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	for _, f := range []string{".env", "src/a.go", "build/.env", "keep/.env"} {
		os.WriteFile(filepath.Join(dir, f), []byte("X=1\n"), 0o644)
	}
	if ignore != "" {
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(ignore), 0o644)
	}
	for _, f := range track {
		run("add", "-f", f)
	}
	return compileIn(t, dir, gitAddPolicy), dir
}

// git add reads the folders it adds, but not the files the repository's
// ignore files leave out: a private file git ignores is not read, one it
// would stage is (git diff --cached then prints it). Each "notAllow" case
// is a private file git would stage; the "allow" cases are the everyday
// `git add -A` in a repository whose .gitignore names .env.
func TestRedteam5GitAddIgnores(t *testing.T) {
	t.Parallel()
	type tc struct {
		name, ignore string
		track        []string
		cwd, cmd     string
		want         string
	}
	cases := []tc{
		{"ignored everywhere", ".env\n", nil, "", "git add -A", "allow"},
		{"ignored, git add .", ".env\n", nil, "", "git add .", "allow"},
		{"ignored, a folder", ".env\n", nil, "", "git add keep", "allow"},
		{"ignored by a folder pattern", ".env\nbuild/\n", nil, "", "git add --all && git commit -m x", "allow"},
		{"not ignored", "*.log\n", nil, "", "git add -A", "notAllow"},
		{"no .gitignore", "", nil, "", "git add .", "notAllow"},
		{"forced", ".env\n", nil, "", "git add -f .", "notAllow"},
		{"re-included by a later pattern", ".env\n!keep/.env\n", nil, "", "git add -A", "notAllow"},
		{"a folder-only pattern does not name a file", ".env/\n", nil, "", "git add -A", "notAllow"},
		{"an anchored pattern names the top only", "/.env\n", nil, "", "git add -A", "notAllow"},
		{"tracked: git adds it whatever .gitignore says", ".env\n", []string{".env"}, "", "git add -A", "notAllow"},
		{"tracked inside an ignored folder", ".env\nbuild/\n", []string{"build/.env"}, "", "git add -A", "notAllow"},
		{"the line un-ignores it first", ".env\n", nil, "", `echo '!.env' >> .gitignore && git add -A`, "notAllow"},
		{"the line copies an ignore file in", ".env\n", nil, "", `cp /tmp/x .gitignore; git add .`, "notAllow"},
		{"a negation warden cannot read is not trusted", ".env\n!\\#x\n", nil, "", "git add -A", "notAllow"},
		{"git add -A from a folder adds the whole tree", "", nil, "src", "git add -A", "notAllow"},
		{"git add . from a folder adds that folder", "", nil, "src", "git add .", "allow"},
		{"git add :/ from a folder adds the whole tree", "", nil, "src", "git add :/", "notAllow"},
		{"git add :/ with .env ignored", ".env\n", nil, "src", "git add :/", "allow"},
		{"git add :/src from a folder", "", nil, "src", "git add :/src", "allow"},
		{"git grep --untracked leaves out ignored files", ".env\n", nil, "", "git grep --untracked X", "allow"},
		{"git grep --no-index reads ignored files", ".env\n", nil, "", "git grep --no-index X", "notAllow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, dir := gitRepo(t, c.ignore, c.track...)
			call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": c.cmd}}
			if c.cwd != "" {
				call.Cwd = filepath.Join(dir, c.cwd)
			}
			d := e.Decide(call)
			if c.want == "allow" && d.Decision != warden.Allow || c.want == "notAllow" && d.Decision == warden.Allow {
				t.Errorf("%s (.gitignore %q): got %s %s (%s); want %s\n%s", c.cmd, c.ignore, d.Decision, d.Code, d.Reason, c.want, explain(e, call))
			}
		})
	}
}
