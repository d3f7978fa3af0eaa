package engine_test

import (
	"testing"

	"github.com/warden-run/warden"
)

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

// A redirection's target is brace-expanded as a command's words are, and
// bash drops the empty words: > {.git/config,} writes .git/config.
func TestRedteam5RedirectBraces(t *testing.T) {
	t.Parallel()
	cases := []soundCase{
		// Findings.
		{"write through {X,}", sh("echo x > {.git/config,}"), "deny"},
		{"write through {,X}", sh("echo x > {,.git/config}"), "deny"},
		{"append through {X,}", sh("echo x >> {.git/hooks/pre-commit,}"), "deny"},
		{"clobber through {X,}", sh("echo x >| {.git/config,}"), "deny"},
		{"&> through {X,}", sh("echo x &> {.git/config,}"), "deny"},
		{">& through {X,}", sh("echo x >& {.git/config,}"), "deny"},
		{"<> through {X,}", sh("exec 3<> {.git/config,}"), "deny"},
		{"read through {X,}", sh("cat < {.env,}"), "deny"},
		// Allowed.
		{"plain redirection", sh("echo x > src/out.txt"), "allow"},
		{"quoted braces are a name", sh("echo x > 'src/a{b,}'"), "allow"},
		{"input redirection", sh("sort < src/a.go"), "allow"},
	}
	checkOpen(t, cases)
	checkSound(t, []soundCase{
		// Finding: cat is allowed, and the read was not seen.
		{"cat < {.env,}", sh("cat < {.env,}"), "deny"},
		{"cat < {src/.env,}", sh("cat < {src/.env,}"), "deny"},
		{"cat < src/a.go", sh("cat < src/a.go"), "allow"},
		{"echo > src file", sh("echo x > src/out.txt"), "allow"},
	})
	checkProgs(t, []soundCase{
		// Finding: sed is allowed and so is any write but the protected
		// ones; the path bash writes was read as a name starting with {.
		{"sed > {.git/config,}", sh("sed p src/a.go > {.git/config,}"), "deny"},
		{"sed > src file", sh("sed p src/a.go > src/b.go"), "allow"},
	})
}

// Links made in the line: a relative link target leads from the link's
// folder, and a copy or move of a link leads from where it lands.
func TestRedteam5LinksMadeInTheLine(t *testing.T) {
	t.Parallel()
	checkOpen(t, []soundCase{
		// Findings: src/g leads to src/hooks, a link into .git/hooks.
		{"ln -s then write through it", sh("ln -s hooks src/g; echo x > src/g/pre-commit"), "deny"},
		{"ln -s to a file through a link", sh("ln -s hooks/pre-commit src/pc"), "deny"},
		{"cp -a of a link", sh("cp -a src/hooks src/g; echo x > src/g/pre-commit"), "deny"},
		{"cp -r of a link", sh("cp -r src/hooks src/g"), "deny"},
		{"cp -P of a link", sh("cp -P src/hooks src/g"), "deny"},
		{"cp -d of a link", sh("cp -d src/hooks src/g"), "deny"},
		// Handled.
		{"handled: ln -s into a folder", sh("ln -s hooks src/"), "deny"},
		{"handled: ln -s -t", sh("ln -s -t src hooks"), "deny"},
		{"handled: ln -s of a protected path", sh("ln -s .git src/g"), "deny"},
		{"handled: mv of a link", sh("mv src/hooks src/g"), "deny"},
		// Allowed: links that lead where writing is fine.
		{"ln -s a sibling", sh("ln -s a.go src/b.go"), "allow"},
		{"ln -sf a sibling", sh("ln -sf a.go src/b.go"), "allow"},
		{"hard link", sh("ln src/a.go src/c.go"), "allow"},
		{"copy of a link that leads elsewhere from its new folder", sh("cp -a src/hooks pkg/app/"), "allow"},
		{"cp -a of a file", sh("cp -a src/a.go src/b.go"), "allow"},
	})
	checkSound(t, []soundCase{
		// Findings: cp is allowed, and src/g is under src/.
		{"cp -a of a link then a write", sh("cp -a src/hooks src/g; echo x > src/g/pre-commit"), "deny"},
		{"cp -r of a link", sh("cp -r src/hooks src/g"), "deny"},
		{"cp -P of a link", sh("cp -P src/hooks src/g"), "deny"},
		// Allowed.
		{"cp -a of a file", sh("cp -a src/a.go src/b.go"), "allow"},
		{"cp -r of a file", sh("cp -r src/a.go src/b.go"), "allow"},
	})
}

// Aliases and source read commands that the line shows as text.
func TestRedteam5ShellText(t *testing.T) {
	t.Parallel()
	checkOpen(t, []soundCase{
		// Findings.
		{"alias whose text writes", sh("shopt -s expand_aliases; alias e='echo x > .git/config'"), "deny"},
		{"alias that ends in a redirection", sh("shopt -s expand_aliases\nalias e='cd .git; echo x >'\ne config"), "notAllow"},
		{"source of a here-string", sh("source /dev/stdin <<< 'echo x > .git/config'"), "deny"},
		{". of a here-string", sh(". /dev/stdin <<< 'echo x > .git/config'"), "deny"},
		{"source of a here-document", sh("source /dev/stdin <<'EOF'\necho x > .git/config\nEOF"), "deny"},
		{"source of an echoed pipe", sh("echo 'echo x > .git/config' | source /dev/stdin"), "deny"},
		// Handled: the word after the alias is checked as a path.
		{"handled: alias then a protected word", sh("shopt -s expand_aliases\nalias e='echo x >'\ne .git/config"), "notAllow"},
		// Allowed.
		{"an alias that lists", sh("alias ll='ls -la'"), "allow"},
		{"alias lists the aliases", sh("alias"), "allow"},
		{"source of a harmless here-string", sh("source /dev/stdin <<< 'ls'"), "allow"},
	})
	checkSound(t, []soundCase{
		{"alias stays refused", sh("alias ll='ls -la'"), "notAllow"},
		{"alias that ends in a redirection", sh("shopt -s expand_aliases\nalias e='echo x >'\ne .git/config"), "notAllow"},
	})
}

// Patch bodies read as git and patch read them: quoted names, the names
// of a diff --git line (a new empty file, a binary patch), and a unified
// diff that holds a line "*** Begin Patch".
func TestRedteam5PatchHeaders(t *testing.T) {
	t.Parallel()
	mcp := func(body string) warden.ToolCall {
		return tcall("mcp__git__apply", map[string]any{"patch": body})
	}
	ap := func(body string) warden.ToolCall { return tcall("apply_patch", map[string]any{"input": body}) }
	cases := []soundCase{
		// Findings.
		{"quoted +++ name", ap("--- \"a/x\"\n+++ \"b/.env\"\n@@ -0,0 +1 @@\n+x\n"), "deny"},
		{"octal-quoted +++ name", ap("--- a/x\n+++ \"b/\\056env\"\n@@ -0,0 +1 @@\n+x\n"), "deny"},
		{"new empty file", mcp("diff --git a/.env b/.env\nnew file mode 100644\nindex 0000000..e69de29\n"), "deny"},
		{"binary patch", mcp("diff --git a/src/x b/.git/hooks/pre-commit\nnew file mode 100755\nGIT binary patch\nliteral 3\nKcmZ?wwn\n\nliteral 0\nKcmV+b0RR6000031\n\n"), "deny"},
		{"quoted diff --git names", mcp("diff --git \"a/.env\" \"b/.env\"\ndeleted file mode 100644\n"), "deny"},
		{"Begin Patch line in a unified diff", mcp("--- a/src/x\n+++ b/src/x\n@@ -0,0 +1 @@\n+*** Begin Patch\n--- a/x\n+++ b/.env\n@@ -0,0 +1 @@\n+x\n"), "deny"},
		// Allowed.
		{"codex update", ap("*** Begin Patch\n*** Update File: src/a.go\n@@\n-x\n+y\n*** End Patch"), "allow"},
		{"diff of a name with spaces", ap("diff --git a/src/my file.go b/src/my file.go\n--- a/src/my file.go\n+++ b/src/my file.go\n@@ -1 +1 @@\n-a\n+b\n"), "allow"},
		{"git rename in src", ap("diff --git a/src/a.go b/src/b.go\nsimilarity index 100%\nrename from src/a.go\nrename to src/b.go\n"), "allow"},
	}
	checkOpen(t, cases)
	checkSound(t, []soundCase{
		{"codex update in src", ap("*** Begin Patch\n*** Update File: src/a.go\n@@\n-x\n+y\n*** End Patch"), "allow"},
		{"diff of a name with spaces in src", ap("diff --git a/src/my file.go b/src/my file.go\n--- a/src/my file.go\n+++ b/src/my file.go\n@@ -1 +1 @@\n-a\n+b\n"), "allow"},
		{"quoted name in src (asked before)", ap("--- \"a/src/x y.go\"\n+++ \"b/src/x y.go\"\n@@ -1 +1 @@\n-a\n+b\n"), "allow"},
	})
}

// Arguments of other tools whose names say they hold a path: an MCP
// server's target_file, output_path, file.
func TestRedteam5LooseToolArguments(t *testing.T) {
	t.Parallel()
	checkOpen(t, []soundCase{
		// Findings.
		{"target_file", tcall("mcp__notes__save", map[string]any{"target_file": ".git/config", "text": "x"}), "deny"},
		{"output_path", tcall("mcp__notes__save", map[string]any{"output_path": ".git/hooks/pre-commit", "text": "x"}), "deny"},
		{"file as a string", tcall("mcp__notes__save", map[string]any{"file": ".git/config", "text": "x"}), "deny"},
		{"file read", tcall("mcp__notes__read", map[string]any{"file": ".env"}), "deny"},
		{"sourceFile read", tcall("mcp__notes__read", map[string]any{"sourceFile": "src/.env"}), "deny"},
		// Allowed.
		{"target_file in src", tcall("mcp__notes__save", map[string]any{"target_file": "src/notes.md", "text": "x"}), "allow"},
		{"a text naming .env", tcall("mcp__notes__save", map[string]any{"text": ".env", "target_file": "src/n.md"}), "allow"},
		{"a query naming .env", tcall("mcp__github__search_code", map[string]any{"query": ".env"}), "allow"},
		{"camelCase and a folder", tcall("mcp__notes__save", map[string]any{"outputPath": "src/n.md", "backup_dir": "src/b"}), "allow"},
		// Found again: a word holding "dst" is not a path (OpenCode's edit).
		{"OpenCode edit whose old text is .env", tcall("edit", map[string]any{"filePath": "src/a.go", "oldString": ".env", "newString": ".env.local"}), "allow"},
		{"outputPath names a hook", tcall("mcp__notes__save", map[string]any{"outputPath": ".git/hooks/pre-commit"}), "deny"},
		{"a sub folder", tcall("mcp__notes__save", map[string]any{"subdir": ".git/hooks"}), "deny"},
	})
}

// Names that a file system which ignores case takes for a protected one:
// APFS folds the long s to s (.github/workflowſ is .github/workflows),
// Windows upper-cases the dotless i to I (.gıt is .git).
func TestRedteam5CaseFolds(t *testing.T) {
	t.Parallel()
	checkOpen(t, []soundCase{
		// Findings.
		{"long s", tcall("Write", map[string]any{"file_path": ".github/workflowſ/ci.yml", "content": "x"}), "deny"},
		{"long s in the shell", sh("echo x > .github/workflowſ/ci.yml"), "deny"},
		{"dotless i", tcall("Write", map[string]any{"file_path": ".gıt/config", "content": "x"}), "deny"},
		{"intents file with a long s", sh("echo x > .orchestration/active_intentſ.yaml"), "deny"},
		// Handled.
		{"handled: upper case", tcall("Write", map[string]any{"file_path": ".GIT/config", "content": "x"}), "deny"},
		{"handled: Kelvin sign", tcall("Write", map[string]any{"file_path": ".git/hoo\u212as/x", "content": "x"}), "deny"},
		// Allowed.
		{"a long s elsewhere", tcall("Write", map[string]any{"file_path": "src/ſ.go", "content": "x"}), "allow"},
		{"workflows of another folder", tcall("Write", map[string]any{"file_path": "src/workflowſ/x", "content": "x"}), "allow"},
	})
}
