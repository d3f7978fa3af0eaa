package engine_test

import "testing"

// Class 8 of issue 31, subcommands that write but were not in the
// tables: git archive -o, git bundle create, git am, go fix, go mod tidy,
// cargo fmt, npm version, npm pkg set, npm init. Their writes are now
// recorded (shell/progs/writes.go, git.go), so a protected path or an
// intent's scope meets them; an unknown subcommand of a program with a
// table is a computed command (class 1), and rg -z runs decompressors.
func TestSubcommandsThatWrite(t *testing.T) {
	t.Parallel()
	const pol = `version: 1
default: allow
workspace: {root: ., outside: deny}
protected: [".git/**", "go.mod", "go.sum", "package.json", "src/**"]
`
	checkSoundPolicy(t, pol, []soundCase{
		{"git archive -o into .git", sh("git archive -o .git/hooks/pre-commit HEAD"), "deny"},
		{"git bundle create into .git", sh("git bundle create .git/hooks/x HEAD"), "deny"},
		{"git am rewrites the work tree", sh("git am x.patch"), "notAllow"},
		{"go mod tidy writes go.mod", sh("go mod tidy"), "deny"},
		{"go fix rewrites sources", sh("go fix ./..."), "notAllow"},
		{"cargo fmt rewrites sources", sh("cargo fmt"), "notAllow"},
		{"npm version runs scripts and git", sh("npm version patch"), "notAllow"},
		{"npm pkg set writes package.json", sh("npm pkg set scripts.x=y"), "deny"},
		{"npm init writes package.json", sh("npm init -y"), "deny"},
		{"npm init NAME runs a package", sh("npm init vite"), "notAllow"},
		{"an unknown subcommand", sh("go frobnicate"), "notAllow"},
		{"rg -z", sh("rg -z pat build"), "notAllow"},
		// Controls.
		{"git archive to a file", sh("git archive -o build/x.tar HEAD"), "allow"},
		{"go mod tidy -diff only prints", sh("go mod tidy -diff"), "allow"},
		{"cargo fmt --check only checks", sh("cargo fmt --check"), "allow"},
		{"npm version alone prints", sh("npm version"), "allow"},
		{"npm pkg get", sh("npm pkg get name"), "allow"},
	})
}
