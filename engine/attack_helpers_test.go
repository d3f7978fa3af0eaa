package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
)

// Policies and helpers shared by the red-team tests.

// The second red-team pass: file tools, paths, grants and approvals, under
// examples/coding/warden.yaml and allowListPolicy. Each finding is a call
// that was allowed before its fix; the cases marked "handled" were tried
// and found refused already; the "allow" cases keep the common forms
// allowed.

func tcall(tool string, args map[string]any) warden.ToolCall {
	return warden.ToolCall{Tool: tool, Args: args}
}

// The third red-team pass: options of programs an allow-list rule names,
// which warden's tables (shell/progs) read otherwise than the programs
// do. Under progsPolicy every program is allowed by a plain rule and any
// file may be written or removed except the protected and private ones:
// each finding was allowed before its fix; the cases marked "handled"
// were refused already (some only because the old table did not know an
// option) and guard the new entries. The "allow" cases keep the common
// forms allowed. checkSoundPolicy's workspace holds src/a.go,
// .env, src/.env, .git/config, .git/hooks/ and src/hooks, a link to
// .git/hooks.

const progsPolicy = `version: 1
default: {safe: allow, destructive: deny}
protected: [".git/**"]
private: ["**/.env"]
rules:
  - id: allow
    effect: allow
    tool: shell
    command: ["sed *", "tar *", "awk *", "xxd *", "curl *", "wget *", "find *", "grep *", "less *", "more *"]
  - id: edit
    effect: allow
    tool: [write, edit, delete]
    path: ["**"]
`

func checkProgs(t *testing.T, cases []soundCase) {
	t.Helper()
	checkSoundPolicy(t, progsPolicy, cases)
}

// The fourth red-team pass, shell side: text that bash evaluates as code
// although the line does not show it as a command, and git run in a
// folder the line enters later or a find action enters. Each finding was
// allowed before its fix, several under a policy with no allow rule at
// all (the builtins involved need none). The "allow" cases keep the
// common forms allowed.

// noAllowPolicy allows nothing by rule: only what needs no rule (a
// builtin without side effects) is allowed.
const noAllowPolicy = `version: 1
default: {safe: allow, destructive: deny}
protected: [".git/**"]
rules:
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: Deleting files is blocked.
    suggestion: Ask the user.
`

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

// editAllPolicy lets the agent edit any file of the project and run the
// everyday file commands: a common "let it work on the repository"
// policy, which also lets it edit the files in the home folder.
const editAllPolicy = `version: 1
default: {safe: allow, destructive: deny}
rules:
  - id: edit
    effect: allow
    tool: [write, edit, delete]
    path: ["**", "~/**"]
  - id: files
    effect: allow
    tool: shell
    command: ["echo *", "cat *", "cp *", "mv *", "rm *", "tee *", "sed *", "mkdir *", "touch *"]
`

// The fifth red-team pass: the program tables (shell/progs) read against
// the programs' manuals and run against the real programs (Debian 12:
// findutils 4.9, coreutils 9.1, rsync 3.2.7, OpenSSH 9.2, curl 7.88,
// wget 1.21, git 2.39, node 20, Python 3.11, cargo 1.8x, kubectl 1.32).
// Under progs5Policy every program attacked is allowed by a plain rule and
// any file may be written or removed except the protected and private
// ones. Each case under "Findings" was allowed before its fix; the
// "Allowed" cases keep the common forms allowed. checkSoundPolicy's
// workspace holds src/a.go, .env, src/.env, .git/config, .git/hooks/,
// pkg/app/warden.yaml, pkg/evil/.git/config and src/hooks, a link to
// .git/hooks.

const progs5Policy = `version: 1
default: {safe: allow, destructive: deny}
protected: [".git/**"]
private: ["**/.env"]
rules:
  - id: allow
    effect: allow
    tool: shell
    command: ["sed *", "tar *", "awk *", "xxd *", "curl *", "wget *", "find *", "grep *", "less *", "more *",
              "git *", "go *", "npm *", "npx *", "pnpm *", "yarn *", "node *", "python *", "python3 *", "pip *", "uv *", "cargo *", "make *", "pytest *",
              "docker *", "kubectl *", "xargs *", "env *", "sudo *", "timeout *", "nice *", "nohup *", "stdbuf *",
              "sort *", "tee *", "dd *", "install *", "cp *", "mv *", "ln *", "rm *", "jq *", "rg *", "diff *", "cat *", "head *", "tail *",
              "ssh *", "scp *", "rsync *", "ls *", "wc *", "touch *", "mkdir *", "chmod *", "chown *", "file *", "tree *", "gofmt *", "uniq *",
              "split *", "csplit *", "od *", "cmp *", "shred *", "truncate *", "date *", "du *", "stat *", "echo *", "printf *", "busybox *", "base64 *", "md5sum *", "sha256sum *", "nl *", "tac *", "cut *", "paste *", "join *", "comm *", "fold *", "fmt *", "expand *", "tr *", "seq *", "realpath *", "readlink *", "df *", "id *", "uname *", "hostname *", "printenv *", "basename *", "dirname *", "pwd *", "which *", "mkfifo *", "mknod *", "rmdir *", "unlink *", "chgrp *", "egrep *", "fgrep *", "gawk *", "mawk *", "most *", "cksum *", "b2sum *", "sum *", "hexdump *", "base32 *", "basenc *", "sha1sum *", "sha512sum *", "tsort *", "whoami *", "groups *", "nproc *", "arch *", "tty *", "uptime *", "sleep *", "podman *", "gmake *", "py.test *", "pip3 *", "nodejs *", "toybox *", "vdir *", "dir *", "unexpand *"]
  - id: edit
    effect: allow
    tool: [write, edit, delete]
    path: ["**"]
`

func checkProgs5(t *testing.T, cases []soundCase) {
	t.Helper()
	checkSoundPolicy(t, progs5Policy, cases)
}

// The fifth red-team pass, continued: the wrappers the shell package sees
// through (shell/wrap.go), read against the programs themselves on Debian
// 12 (findutils 4.9.0, coreutils 9.1, util-linux 2.38.1, procps-ng 4.0.2,
// sudo 1.9.13, OpenDoas 6.8.2, GNU time 1.9, strace 6.1). Under
// wrap5Policy the wrappers are allowed too. Each case under "Findings"
// was allowed, or missed by the deny rules, before its fix; the "Allowed"
// cases keep the common forms allowed. The default for destructive calls
// is ask: a "deny" is the deny of a protected path, which only a reading
// of the real command finds.

var wrap5Policy = strings.NewReplacer(`"unexpand *"]`,
	`"unexpand *", "flock *", "runuser *", "su *", "watch *", "chroot *", "doas *", "time *", "strace *", "chrt *", "ionice *", "taskset *", "setsid *"]`,
	"destructive: deny", "destructive: ask").Replace(progs5Policy)

func checkWrap5(t *testing.T, cases []soundCase) {
	t.Helper()
	if wrap5Policy == progs5Policy {
		t.Fatal("wrap5Policy did not extend progs5Policy")
	}
	checkSoundPolicy(t, wrap5Policy, cases)
}

// The fifth red-team pass: every write seen, on the shell language side
// and in the file tools' arguments. Each finding was allowed before its
// fix; the "allow" cases keep the common harmless forms allowed.
// checkSoundPolicy's workspace holds src/a.go, .env, src/.env,
// .git/config, .git/hooks/ and src/hooks, a link to ../.git/hooks.

// openPolicy allows whatever no path check stops: under it a write that
// warden does not see is a write of a protected path allowed.
const openPolicy = `version: 1
default: allow
protected: [".git/**", ".github/workflows/**"]
private: ["**/.env"]
intents: {file: .orchestration/active_intents.yaml}
`

func checkOpen(t *testing.T, cases []soundCase) {
	t.Helper()
	checkSoundPolicy(t, openPolicy, cases)
}

// The sixth red-team pass: the language and build tools a coding policy
// allows by narrow rules (go 1.26, npm 9.2, node 20, Python 3.11, pip 23,
// pytest 7.2, uv, cargo 1.95, GNU make 4.3, Docker, kubectl 1.3x), read
// against their manuals and sources and run where installed. Under
// lang6Policy only narrow forms are allowed and everything else asks; edits
// are allowed under src/ and .venv/. Each case under "Findings" was allowed
// before its fix; the "Allowed" cases keep the common forms allowed.
// checkSoundPolicy's workspace holds src/a.go, .env, src/.env, .git/
// (protected), pkg/evil/.git/config and src/hooks, a link to .git/hooks.

const lang6Policy = `version: 1
default: {safe: ask, destructive: ask}
protected: [".git/**"]
private: ["**/.env"]
rules:
  - id: allow-narrow
    effect: allow
    tool: shell
    command: ["go build *", "go vet *", "go test *", "go list *", "go fmt *", "go mod tidy *", "go mod download *", "go mod verify *",
              "go mod why *", "go mod graph *", "go mod init *", "go env *", "go version *", "go doc *", "go clean *", "go work *", "gofmt *",
              "npm test *", "npm ci *", "npm install *", "npm ls *", "npm run *", "npm pack *", "npm view *", "npm outdated *", "npm audit *",
              "npm config *", "npx tsc *", "node *",
              "python -m pytest *", "python3 -m pytest *", "python3 -m json.tool *", "python3 -m venv *", "python3 -m http.server *",
              "python3 -m pip list *", "pip list *", "pip show *", "pip freeze *", "pip install *", "pip download *", "pip config *",
              "uv run pytest *", "uv sync *", "uv pip list *", "uv venv *",
              "cargo build *", "cargo check *", "cargo test *", "cargo metadata *", "cargo tree *", "cargo doc *",
              "make -n *", "pytest *",
              "docker ps *", "docker images *", "docker logs *", "docker inspect *", "docker build *", "docker compose ps *", "docker compose config *",
              "kubectl get *", "kubectl describe *", "kubectl logs *", "kubectl diff *", "kubectl apply --dry-run=client *", "kubectl config *"]
  - id: edit
    effect: allow
    tool: [write, edit]
    path: ["src/**", ".venv/**"]
`

func checkLang6(t *testing.T, cases []soundCase) {
	t.Helper()
	checkSoundPolicy(t, lang6Policy, cases)
}

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

// The red-team tables: calls an attacker would try to get allowed under
// examples/coding/warden.yaml and allowListPolicy, each through a program
// or a shell construct the policy allows. Each finding is a call that was
// allowed before its fix; the cases marked "handled" were tried and found
// refused already, and the "allow" cases keep the common harmless forms
// allowed.

// codingPolicy returns the example policy for coding agents, without its
// default.confined: the tables test what warden judges from the line; what
// it cannot judge runs confined under the example (confined_test.go).
func codingPolicy(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "coding", "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(b), "\n  confined: allow ", "\n  # confined: allow ", 1)
}

func checkCoding(t *testing.T, cases []soundCase) {
	t.Helper()
	checkSoundPolicy(t, codingPolicy(t), cases)
}
