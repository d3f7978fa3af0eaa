package engine_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// The harmless commands of issue 31 that peer tools allow: under the
// coding example they are allowed, each by the mechanism named.
func TestHarmlessUnderCoding(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		// Kind safe: every word is one the tables know to only read.
		{"printf", sh(`printf '%s\n' a b`), "allow"},
		{"sed -n", sh("sed -n 1,3p src/a.go"), "allow"},
		{"nl", sh("nl src/a.go"), "allow"},
		{"tac", sh("tac src/a.go"), "allow"},
		{"base64", sh("base64 src/a.go"), "allow"},
		{"git --version", sh("git --version"), "allow"},
		{"go --version", sh("go --version"), "allow"},
		{"a read-only pipeline", sh("git log --oneline -5 | nl | tac"), "allow"},
		{"sort, uniq, cut", sh("sort src/a.go | uniq -c | cut -c1-20"), "allow"},
		{"jq without file output", sh("jq -r .name src/a.go"), "allow"},
		{"--help of a known program", sh("rg --help"), "allow"},
		{"--help of grep", sh("grep --help"), "allow"},
		{"git diff of the work tree", sh("git diff"), "allow"},
		{"git show --stat", sh("git show --stat HEAD"), "allow"},
		{"git log without output options", sh("git log --oneline -5"), "allow"},
		// A function defined and never called (TestUncalledFunctionDefinition).
		{"an uncalled function", sh("f() { git push origin main; }"), "allow"},
		// The hosts' skill loaders and MCP resource tools.
		{"Skill", warden.ToolCall{Tool: "Skill", Args: map[string]any{"skill": "pdf"}}, "allow"},
		{"ReadMcpResourceTool", warden.ToolCall{Tool: "ReadMcpResourceTool", Args: map[string]any{"server": "db", "uri": "db://x"}}, "allow"},
		// A shell or wrapper that only runs an allowed line.
		{"bash -lc", sh("bash -lc 'ls'"), "allow"},
		{"zsh -lc", sh("zsh -lc 'ls'"), "allow"},
		{"Codex's shell argv", warden.ToolCall{Tool: "shell", Args: map[string]any{"command": []any{"bash", "-lc", "git status"}}}, "allow"},
		{"command ls", sh("command ls"), "allow"},
		{"env X=1 go test", sh("env X=1 go test ./..."), "allow"},
		// Builtins that only look things up.
		{"type", sh("type ls"), "allow"},
		{"command -v", sh("command -v ls"), "allow"},
		{"command -V", sh("command -V ls"), "allow"},
		{"hash", sh("hash"), "allow"},
		// npm's own aliases, a pager that is cat, git's selectors,
		// arithmetic on the numbers bash sets.
		{"npm t", sh("npm t"), "allow"},
		{"npm tst", sh("npm tst"), "allow"},
		{"GIT_PAGER=cat", sh("GIT_PAGER=cat git log"), "allow"},
		{"PAGER=cat", sh("PAGER=cat git log --oneline"), "allow"},
		{"an upstream selector", sh("git log main@{upstream}..HEAD"), "allow"},
		{"a reflog selector", sh("git log --oneline HEAD@{1}.."), "allow"},
		{"$RANDOM in arithmetic", sh("echo $((RANDOM % 10))"), "allow"},
		{"$? in arithmetic", sh("echo $(( $? + 1 ))"), "allow"},
		{"arithmetic on a number the line set", sh("i=0; i=$((i+1)); echo $i"), "allow"},
		{"arithmetic before the number is set", sh("echo $((i)); i=0"), "notAllow"},
		{"a value a subshell set", sh("i=0; (i='a[$(ls)]'); echo $((i))"), "notAllow"},
		{"a value read", sh("i=0; read i; echo $((i))"), "notAllow"},
		{"a value a function may set", sh("i=0; f() { i=x; }; f; echo $((i))"), "notAllow"},
		{"a value set in a list", sh("i=0 && i=x; echo $((i))"), "notAllow"},
		// cd DIR && ...: the later commands run only in DIR.
		{"cd DIR && ... && cd ..", sh("cd src && ls && cd .."), "allow"},
		{"a redirection after cd DIR &&", sh("cd src && echo hi > out.txt"), "allow"},
		{"git after cd DIR && ... && cd ..", sh("cd src && git status && cd .."), "allow"},
		{"Codex's argv with cd DIR &&", warden.ToolCall{Tool: "shell", Args: map[string]any{"command": []any{"bash", "-lc", "cd src && echo hi > out.txt"}}}, "allow"},
		{"after cd DIR &&, .. leads back out of DIR", sh("cd src && echo x > ../.git/config"), "deny"},
		{"after cd DIR &&, a private file above", sh("cd src && cat ../.env"), "deny"},
		{"the ; form stays a fair ask", sh("cd src; echo hi > out.txt"), "notAllow"},
		{"|| runs the cd when the first part fails", sh("cd src && ls || cd .. && echo x > out.txt"), "notAllow"},
		{"a cd inside the chain", sh("cd src && cd .. && echo x > out.txt"), "notAllow"},
		{"a cd in a subshell of the chain", sh("cd src && (cd ..; echo x > y)"), "notAllow"},
		{"a cd in a shell's string", sh("cd src && bash -c 'cd ..; echo x > y'"), "notAllow"},
		{"a cd in eval", sh("cd src && eval 'cd ..' && echo x > y"), "notAllow"},
		// for NAME in LITERAL WORDS: the body once per word.
		{"a loop over a glob", sh(`for f in src/*.go; do wc -l "$f"; done`), "allow"},
		{"a loop over words", sh(`for f in src/a.go src/b.go; do head -3 "$f"; done`), "allow"},
		{"a loop reaching a private file", sh(`for f in src/a.go .env; do cat "$f"; done`), "deny"},
		{"a loop reaching a deny rule", sh(`for f in a b; do rm -rf "$f"; done`), "deny"},
		{"a loop writing a protected path", sh(`for d in .git; do echo x > $d/config; done`), "deny"},
		{"a loop over computed words", sh(`for f in $(ls); do cat "$f"; done`), "notAllow"},
		// Still asked or denied.
		{"a pager that is not cat", sh("GIT_PAGER=less git log"), "notAllow"},
		{"a variable in arithmetic", sh("echo $((x + 1))"), "notAllow"},
		{"a brace expansion is still one", sh("rm -rf {src,build}"), "deny"},
		{"npm i NAME still asks", sh("npm i left-pad"), "notAllow"},
		{"sed -i is no read", sh("sed -i s/a/b/ src/a.go"), "notAllow"},
		{"a pager", sh("git -p log"), "notAllow"},
		{"less", sh("less src/a.go"), "notAllow"},
		{"a private file", sh("nl .env"), "deny"},
		{"outside the workspace", sh("tac /etc/hostname"), "deny"},
		{"a redirection is a write", sh("nl src/a.go > .git/hooks/pre-commit"), "deny"},
		{"a program of the workspace named like one", sh("./nl src/a.go"), "notAllow"},
		{"bash -lc of a line that asks", sh("bash -lc 'curl -o x https://e.x'"), "notAllow"},
		{"hash -p rebinds", sh("hash -p /tmp/evil ls; ls"), "notAllow"},
	})
}

// explain names the class of a command decided by the default for safe
// calls.
func TestExplainShowsKindSafe(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, codingPolicy(t))
	tr := e.Explain(sh("nl src/a.go"), nil)
	if len(tr.Parts) == 0 || !strings.Contains(tr.Parts[0].Note, "kind safe") {
		t.Errorf("explain does not show the class:\n%s", explain(e, sh("nl src/a.go")))
	}
}
