package policy

import (
	"os"
	"path/filepath"
	"strings"
)

// StarterLanguages names the languages of the project in root by their
// marker files (go.mod, package.json, pyproject.toml, Cargo.toml, ...):
// go, node, python, rust, the ones Starter knows the everyday commands of.
func StarterLanguages(root string) []string {
	has := func(names ...string) bool {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(root, n)); err == nil {
				return true
			}
		}
		return false
	}
	var out []string
	if has("go.mod", "go.work") {
		out = append(out, "go")
	}
	if has("package.json") {
		out = append(out, "node")
	}
	if has("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile") {
		out = append(out, "python")
	}
	if has("Cargo.toml") {
		out = append(out, "rust")
	}
	return out
}

// secretGlobs are the files the starter policy keeps from every agent.
var secretGlobs = []string{"**/.env", "**/.env.*", "**/*.pem", "**/*.key", "**/id_rsa*", "**/id_ed25519*",
	"**/.npmrc", "**/.pypirc", "**/.netrc", "**/.aws/credentials"}

// starterLanguage is the everyday commands of one language and a test call.
type starterLanguage struct {
	rule     string
	commands []string
	test     string // a command the tests expect to be allowed
}

var starterLanguages = map[string]starterLanguage{
	"go": {"allow-go", []string{"go build *", "go test *", "go vet *", "go run *", "go fmt *", "gofmt *",
		"go mod tidy *", "go mod download *", "go list *", "go env *", "go version *", "go doc *"}, "go test ./..."},
	"node": {"allow-node", []string{"npm test *", "npm run *", "npm ci *", "npm install", "npm ls *", "npx tsc *",
		"npx eslint *", "npx vitest *", "npx jest *", "node *", "yarn test *", "yarn build *", "pnpm test *", "pnpm build *"}, "npm test"},
	"python": {"allow-python", []string{"pytest *", "python -m pytest *", "python3 -m pytest *", "python -m unittest *",
		"python3 -m unittest *", "ruff check", "ruff check .", "ruff format --check .", "mypy .", "pip list *", "pip show *"}, "python -m pytest -q"},
	"rust": {"allow-rust", []string{"cargo build *", "cargo test *", "cargo check *", "cargo clippy *", "cargo fmt *",
		"cargo run *", "cargo doc *", "rustc --version"}, "cargo test"},
}

// yamlList renders strings as a YAML flow list of double-quoted scalars.
func yamlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = `"` + s + `"`
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Starter is the policy `warden init` writes into a project without one,
// with the everyday commands of the languages given (go, node, python,
// rust; see StarterLanguages; others are left out). It loads, lints clean
// and its tests pass (TestStarter, and warden's TestStarterPolicy).
func Starter(langs []string) string {
	var b strings.Builder
	b.WriteString(`# warden policy: every tool call the agents in this project make is decided here.
# The format: docs/policy.md in the warden repository
# (https://github.com/warden-run/warden/blob/main/docs/policy.md).
# ` + "`warden lint`" + ` checks this file; ` + "`warden test`" + ` runs the tests at the end.
sealed: true           # ends with end: true: a file cut short (a crashed editor) is refused
version: 1
mode: enforce
default:
  safe: allow          # read, list, todo
  confined: allow      # a shell command no rule covers runs confined (sandbox: below)
  destructive: ask     # shell, write, edit, delete, fetch, ... unless a rule allows it
sandbox:
  shell: on            # allowed shell commands run confined where the kernel can (warden doctor)
  network: deny        # no outbound TCP from a confined command, except to ports:
  ports: []            # e.g. [5432] for a test database
workspace:
  root: .
  outside: deny        # no file outside this folder
protected:             # no agent may write, edit or delete these (the policy and .warden/ always)
  - ".git/**"
private:               # secrets: no agent may read these, nor write them
`)
	for _, g := range secretGlobs {
		b.WriteString("  - \"" + g + "\"\n")
	}
	b.WriteString(`approvals:
  expires: 24h         # an unanswered approval is dropped after this
rules:
  # Destructive classes: denied.
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: ["rm -rf *", "rm -r *"]
    message: Recursive deletion is blocked.
    suggestion: Delete specific files by name, or ask the user to remove the folder.
  - id: no-force-push
    effect: deny
    tool: shell
    command: ["git push --force *", "git push -f *", "git push --force-with-lease *"]
    message: Force-pushing rewrites shared history.
    suggestion: Push without --force, or ask the user.
  - id: no-disk-tools
    effect: deny
    tool: shell
    command: ["mkfs *", "dd *", "shred *", "fdisk *", "chmod -R 777 *"]
    message: Disk and permission tools can destroy data.
    suggestion: Ask the user to run it.
  # Leaving this machine: a human approves.
  - id: ask-push
    effect: ask
    tool: shell
    command: ["git push *"]
    message: Pushing sends commits to a shared remote.
    suggestion: Commit locally and ask the user to approve the push.
  - id: ask-publish
    effect: ask
    tool: shell
    command: ["npm publish *", "yarn publish *", "pnpm publish *", "cargo publish *", "twine upload *",
              "gh release *", "docker push *", "go mod vendor *"]
    message: Publishing is a release decision for the user.
    suggestion: Prepare the release and ask the user to approve it.
  # Everyday commands.
  - id: allow-read-commands
    effect: allow
    tool: shell
    command: ["ls *", "cat *", "head *", "tail *", "wc *", "grep *", "rg *", "find *", "pwd *", "tree *",
              "diff *", "echo *", "which *", "sort *", "uniq *", "file *", "stat *", "true", "cd *", "test *"]
  - id: allow-git
    effect: allow
    tool: shell
    command: ["git status *", "git diff *", "git log *", "git show *", "git branch *", "git blame *",
              "git add *", "git commit *", "git stash *", "git switch *", "git checkout -b *", "git fetch *"]
  - id: allow-edit-workspace
    effect: allow
    tool: [write, edit]
    path: ["**"]
`)
	var known []string
	for _, l := range langs {
		if sl, ok := starterLanguages[l]; ok {
			known = append(known, l)
			b.WriteString("  - id: " + sl.rule + "\n    effect: allow\n    tool: shell\n    command: " + yamlList(sl.commands) + "\n")
		}
	}
	if len(known) == 0 {
		b.WriteString("  # No Go, Node, Python or Rust project found: add your build and test commands here, as above.\n")
	}
	b.WriteString(`tests:
  - name: reading the project is allowed
    call: {tool: Read, args: {file_path: README.md}}
    expect: allow
  - name: reading a secret is denied
    call: {tool: Read, args: {file_path: .env}}
    expect: deny
    code: PROTECTED_PATH
  - name: printing a secret is denied
    call: {tool: Bash, args: {command: "cat config/.env"}}
    expect: deny
    code: PROTECTED_PATH
  - name: writing a secret is denied
    call: {tool: Write, args: {file_path: config/.env, content: "X=1"}}
    expect: deny
    code: PROTECTED_PATH
  - name: editing outside the project is denied
    call: {tool: Write, args: {file_path: /etc/hosts, content: "x"}}
    expect: deny
    code: OUTSIDE_WORKSPACE
  - name: editing the project is allowed
    call: {tool: Edit, args: {file_path: src/main.txt, old_string: a, new_string: b}}
    expect: allow
  - name: git status is allowed
    call: {tool: Bash, args: {command: "git status && git diff"}}
    expect: allow
  - name: pushing asks
    call: {tool: Bash, args: {command: "git push origin main"}}
    expect: ask
    rule: ask-push
  - name: force-pushing is denied
    call: {tool: Bash, args: {command: "git push --force origin main"}}
    expect: deny
    rule: no-force-push
  - name: recursive deletion is denied
    call: {tool: Bash, args: {command: "rm -rf build"}}
    expect: deny
    rule: no-rm-rf
`)
	for _, l := range known {
		sl := starterLanguages[l]
		b.WriteString("  - name: " + l + " tests run\n    call: {tool: Bash, args: {command: \"" + sl.test + "\"}}\n    expect: allow\n")
	}
	b.WriteString("end: true              # the end of the policy (see sealed: at the top)\n")
	return b.String()
}
