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
			d := e.Decide(call, nil).Decision
			if c.want == "allow" && d.Decision != warden.Allow || c.want == "notAllow" && d.Decision == warden.Allow {
				t.Errorf("%s (.gitignore %q): got %s %s (%s); want %s\n%s", c.cmd, c.ignore, d.Decision, d.Code, d.Reason, c.want, explain(e, call))
			}
		})
	}
}

// git after one plain cd runs in the repository found from that folder:
// the workspace's own is what the rules are for (`cd /abs/project && git
// status`, the form the hosts' models write most); a repository an agent
// wrote, a line that may make one first, a folder entered twice (a loop)
// or another kind of folder change is not vouched for. go build runs git
// the same way (its version control stamp).
func TestRedteam5GitAfterOneCd(t *testing.T) {
	t.Parallel()
	const pol = `version: 1
default: {safe: allow, destructive: deny}
rules:
  - id: git
    effect: allow
    tool: shell
    command: ["git status *", "git log *", "git init *", "go build *", "mkdir *", "echo *", "cp *"]
`
	e, dir := newEngine(t, pol)
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	run("init", "-q", ".")
	run("init", "-q", "pkg/evil")
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	e = compileIn(t, dir, pol) // the root is a repository now
	for _, c := range []soundCase{
		{"the workspace's own repository, absolute", sh("cd " + dir + " && git status"), "allow"},
		{"a folder of the workspace's repository", sh("cd src && git log --oneline"), "allow"},
		{"go build in a folder", sh("cd src && go build ./..."), "allow"},
		{"a repository the agent wrote", sh("cd pkg/evil && git status"), "notAllow"},
		{"go build in a repository the agent wrote", sh("cd pkg/evil && go build ."), "notAllow"},
		{"a loop enters the folder twice", sh("for i in 1 2; do git status; cd src; done"), "notAllow"},
		{"two cds", sh("cd src && cd ../pkg && git status"), "notAllow"},
		{"pushd", sh("pushd src && git status"), "notAllow"},
		{"a computed folder", sh(`cd "$d" && git status`), "notAllow"},
		{"outside the workspace", sh("cd /tmp && git status"), "notAllow"},
		{"the line makes a repository first", sh("mkdir -p x/refs x/objects && echo 'ref: refs/heads/m' > x/HEAD && cd x && git status"), "notAllow"},
		{"the line copies one in first", sh("cp -r pkg/evil/.git src/.git; cd src && git status"), "notAllow"},
		{"git init first", sh("cd src && git init && git status"), "notAllow"},
		{"a subshell's cd, then git in the call's folder", sh("(cd pkg/evil) && git status"), "notAllow"},
	} {
		d := e.Decide(c.call, nil).Decision
		if c.expect == "allow" && d.Decision != warden.Allow || c.expect == "notAllow" && d.Decision == warden.Allow {
			t.Errorf("%s: %v: got %s %s (%s); want %s\n%s", c.name, c.call.Args, d.Decision, d.Code, d.Reason, c.expect, explain(e, c.call))
		}
	}
}
