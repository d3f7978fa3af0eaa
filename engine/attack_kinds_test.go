package engine_test

import (
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
)

// Class 10 of issue 31, editor tools of other agent stacks: the Anthropic
// text editor tool, str_replace_editor and create_file were of kind
// other, so an edit rule did not meet them, nor a protected path as an
// edit; a tool of kind other did not need an intent where writes do.
func TestEditorToolsOfOtherStacks(t *testing.T) {
	t.Parallel()
	call := func(tool string, args map[string]any) warden.ToolCall { return warden.ToolCall{Tool: tool, Args: args} }
	checkCoding(t, []soundCase{
		{"text editor tool on a source", call("str_replace_based_edit_tool", map[string]any{"command": "str_replace", "path": "src/a.go", "old_str": "a", "new_str": "b"}), "allow"},
		{"str_replace_editor on a source", call("str_replace_editor", map[string]any{"command": "create", "path": "src/b.go", "file_text": "x"}), "allow"},
		{"create_file on a source", call("create_file", map[string]any{"path": "src/c.go", "content": "x"}), "allow"},
		{"text editor tool on the policy", call("str_replace_based_edit_tool", map[string]any{"command": "create", "path": "warden.yaml", "file_text": "x"}), "deny"},
		{"create_file outside", call("create_file", map[string]any{"path": "/etc/x", "content": "x"}), "deny"},
		// The hosts' skill loaders and MCP resource tools only read.
		{"Skill", call("Skill", map[string]any{"skill": "pdf"}), "allow"},
		{"activate_skill", call("activate_skill", map[string]any{"name": "pdf"}), "allow"},
		{"ListMcpResourcesTool", call("ListMcpResourcesTool", map[string]any{"server": "db"}), "allow"},
		{"ReadMcpResourceTool", call("ReadMcpResourceTool", map[string]any{"server": "db", "uri": "db://x"}), "allow"},
	})
	const pol = `version: 1
default: allow
intents: {file: intents.yaml, require: [write]}
`
	e, _ := newEngine(t, pol)
	if d := e.Decide(call("mcp__db__drop_table", map[string]any{"table": "users"}), nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeMissingIntent {
		t.Errorf("a tool of kind other without an intent: %s %s", d.Decision, d.Code)
	}
	if d := e.Decide(call("Read", map[string]any{"file_path": "a.go"}), nil).Decision; d.Decision != warden.Allow {
		t.Errorf("a read without an intent: %s %s", d.Decision, d.Code)
	}
	// Claude Code's Workflow runs a script: kind other, so it needs an
	// intent where writes do, and it is destructive (asked under the
	// coding example, never allowed by default: {safe: allow}).
	var p policy.Policy
	if k := p.KindOf("Workflow"); k != "other" {
		t.Errorf("Workflow is of kind %s, want other", k)
	}
	wf := call("Workflow", map[string]any{"scriptPath": "scripts/release.js"})
	if d := e.Decide(wf, nil).Decision; d.Decision != warden.Deny || d.Code != warden.CodeMissingIntent {
		t.Errorf("Workflow without an intent: %s %s, want deny %s", d.Decision, d.Code, warden.CodeMissingIntent)
	}
	checkCoding(t, []soundCase{{"Workflow under the coding example", wf, "notAllow"}})
}

// Class 11 of issue 31: a "--" in a rule's command pattern was dropped, so
// "git checkout -- *" met git checkout -b NEW, and the coding example
// asked about creating a branch. It is kept: the pattern meets commands
// written with "--" (or, for deny and ask rules, a computed word).
func TestPatternKeepsDoubleDash(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		{"git checkout -b NEW", sh("git checkout -b feature"), "allow"},
		{"git checkout -- FILE still asks", sh("git checkout -- src/a.go"), "notAllow"},
		{"a computed word may be --", sh("git checkout $X src/a.go"), "notAllow"},
	})
	e, _ := newEngine(t, codingPolicy(t))
	if d := e.Decide(sh("git checkout -- src/a.go"), nil).Decision; d.Code != warden.CodeRuleAsk {
		t.Errorf("git checkout -- src/a.go: %s %s, want the rule's ask", d.Decision, d.Code)
	}
}

// safeOnlyPolicy allows what is of kind safe and asks about the rest: a
// read-only line is allowed without a rule, so every option that writes,
// runs a program or pages must keep a command out of kind safe.
const safeOnlyPolicy = `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
protected: [".git/**"]
private: ["**/.env"]
`

// The known read-only commands (kind safe), attacked again for issue 31:
// git --help runs man (or the viewer git's configuration names) and less
// --help shows its help in the pager, yet both were safe as "--help of a
// known program"; jq's env and $ENV print the environment, as printenv
// (which is not safe) does; rg --help asked as a search of the whole
// workspace. The other probes were kept out of safe already.
func TestSafeKindProbes(t *testing.T) {
	t.Parallel()
	cases := []soundCase{
		// Findings.
		{"git --help runs man", sh("git --help"), "notAllow"},
		{"less --help pages", sh("less --help"), "notAllow"},
		{"jq env", sh("jq -n env"), "notAllow"},
		{"jq env.NAME", sh("jq -n env.AWS_SECRET_ACCESS_KEY"), "notAllow"},
		{"jq $ENV", sh("jq -n '$ENV.HOME'"), "notAllow"},
	}
	for _, c := range []string{
		"sort -o out.txt src/a.go", "sort --output=out.txt src/a.go", "sort --compress-program=gzip src/a.go",
		"sort -T /tmp src/a.go", "sort --files0-from=list src/a.go", "uniq src/a.go out.txt",
		"git log --output=out.txt", "git log --output out.txt", "git diff --output=x", "git diff --ext-diff",
		"git show --ext-diff HEAD", "git log -p --ext-diff", "git diff --textconv", "git show --textconv HEAD",
		"git log --show-signature", "git log --help", "git help log", "git -c core.pager=x log", "git --paginate log",
		"git -p log", "git --exec-path=/tmp log", "git grep -O foo", "git grep --open-files-in-pager=x foo",
		"git --config-env=core.pager=X log", "GIT_PAGER=x git log", "PAGER=x git log", "GIT_EXTERNAL_DIFF=x git diff",
		"MANPAGER=x git --help", "LD_PRELOAD=/tmp/x.so cat src/a.go", "HOME=/tmp git log",
		"jq --from-file prog.jq src/a.go", "jq -n 'import \"x\" as x; 1'", "base64 -w0 src/a.go > x",
		"tac src/a.go > out.txt", "nl src/a.go | tee out.txt",
		"sed -n 'w out.txt' src/a.go", "sed -n 'e ls' src/a.go", "sed -n '1e ls' src/a.go", "sed -n 's/a/b/w out.txt' src/a.go",
		"sed -n 's/a/ls/e' src/a.go", "sed -n 'W x' src/a.go", "sed -n -f script.sed src/a.go", "sed -ni p src/a.go",
		"sed -n p src/a.go --in-place", "less src/a.go", "more src/a.go", "man ls", "LESSOPEN='|x %s' less src/a.go",
		"xxd -r src/a.go out.bin", "xxd src/a.go out.hex", "tree -o out.txt src", "tree -R src",
		"rg --pre ./pre.sh foo src", "rg -z foo src", "rg --search-zip foo src", "printf -v PATH x", "echo $(touch x)",
		"sha256sum -c sums.txt", "env", "printenv",
		"find src -delete", "find src -exec cat {} ;", "find src -execdir ls ;", "find src -ok rm {} ;",
		"find src -fprint out.txt", "find src -fprintf out.txt %p", "find src -fls out.txt", "find src -fprint0 out.txt",
	} {
		cases = append(cases, soundCase{c, sh(c), "notAllow"})
	}
	// Private reads among them are denied.
	for _, c := range []string{"jq --rawfile x .env .", "sed -n 'R .env' src/a.go", "git blame --contents=.env src/a.go",
		"grep -f .env src/a.go", "du -X .env src", "wc --files0-from=.env", "diff --from-file=.env src/a.go"} {
		cases = append(cases, soundCase{c, sh(c), "deny"})
	}
	// Controls: read-only lines stay allowed without a rule.
	for _, c := range []string{"grep --help", "rg --help", "rg --version", "git --version", "cat --help", "sort src/a.go",
		"uniq src/a.go", "cut -d: -f1 src/a.go", "jq . src/a.go", "jq .env src/a.go", "jq -r '.environment' src/a.go",
		"jq 'getpath([\"env\"])' src/a.go", "sed -n 1,3p src/a.go", "nl -ba src/a.go", "tac src/a.go", "base64 src/a.go",
		"git log --oneline -5", "git log --no-ext-diff", "git diff", "git status --porcelain", "sort -c src/a.go",
		"find src -name '*.go'", "find . -type f -newer src/a.go", "find src -printf '%p\n'"} {
		cases = append(cases, soundCase{c, sh(c), "allow"})
	}
	checkSoundPolicy(t, safeOnlyPolicy, cases)
}
