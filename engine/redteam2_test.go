package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
)

// The second red-team pass: file tools, paths, grants and approvals, under
// examples/coding/warden.yaml and allowListPolicy. Each finding is a call
// that was allowed before its fix; the cases marked "handled" were tried
// and found refused already; the "allow" cases keep the common forms
// allowed.

func tcall(tool string, args map[string]any) warden.ToolCall {
	return warden.ToolCall{Tool: tool, Args: args}
}

// A working folder in the arguments of a tool that is not a shell tool:
// the host writes the path from its own folder and ignores the argument
// (OpenCode's tools strip unknown arguments), so warden must not resolve
// the path from it.
func TestRedteam2WorkdirOfFileTools(t *testing.T) {
	t.Parallel()
	cases := []soundCase{
		// Findings: each was allowed (the path resolved inside src/).
		{"Write ../ with workdir", tcall("Write", map[string]any{"file_path": "../evil.md", "content": "x", "workdir": "src"}), "notAllow"},
		{"Write ../ with directory", tcall("Write", map[string]any{"file_path": "../evil.md", "content": "x", "directory": "src"}), "notAllow"},
		{"Write ../ with cwd", tcall("Write", map[string]any{"file_path": "../evil.md", "content": "x", "cwd": "src"}), "notAllow"},
		{"write_file with working_directory", tcall("write_file", map[string]any{"file_path": "../evil.md", "content": "x", "working_directory": "src"}), "notAllow"},
		{"opencode write with workdir", tcall("write", map[string]any{"filePath": "../evil.go", "content": "x", "workdir": "src/a"}), "notAllow"},
		{"write_file with dir_path", tcall("write_file", map[string]any{"file_path": "../evil.md", "content": "x", "dir_path": "src"}), "notAllow"},
		{"apply_patch with workdir", tcall("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: ../evil.md\n+x\n*** End Patch", "workdir": "src"}), "notAllow"},
		{"the policy file from a workdir", tcall("Write", map[string]any{"file_path": "warden.yaml", "content": "x", "workdir": "src"}), "deny"},
		{"the store from a workdir", tcall("Write", map[string]any{"file_path": ".warden/warden.db", "content": "x", "workdir": "src"}), "deny"},
		{"mcp move_file with cwd", tcall("mcp__filesystem__move_file", map[string]any{"source": "src/a.go", "destination": "../a.go", "cwd": "src"}), "notAllow"},
		// Handled: the shell tools' working folders, and the call's cwd.
		{"shell workdir is honoured", tcall("bash", map[string]any{"command": "echo x > config", "workdir": ".git"}), "deny"},
		{"Write relative to the call's cwd", warden.ToolCall{Tool: "Write", Cwd: "src", Args: map[string]any{"file_path": "../.git/config", "content": "x"}}, "deny"},
		// Allowed: a file tool's own path is unchanged.
		{"Write src with an unused workdir", tcall("Write", map[string]any{"file_path": "src/b.go", "content": "x", "workdir": "src"}), "allow"},
	}
	checkSound(t, cases)
	checkCoding(t, cases)
}

// Content search tools whose folder was resolved twice, or not checked for
// the private files inside it.
func TestRedteam2SearchTools(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		// Findings.
		{"gemini grep_search relative dir_path", tcall("grep_search", map[string]any{"pattern": "KEY", "dir_path": "src"}), "deny"},
		{"gemini search_file_content relative dir_path", tcall("search_file_content", map[string]any{"pattern": "KEY", "dir_path": "src"}), "deny"},
		{"roo search_files shows matching lines", tcall("search_files", map[string]any{"path": ".", "regex": "KEY"}), "deny"},
		{"codex grep_files names matching files", tcall("grep_files", map[string]any{"pattern": "^KEY=a", "path": "src"}), "deny"},
		{"codex grep_files in the working folder", tcall("grep_files", map[string]any{"pattern": "^KEY=a"}), "deny"},
		{"gemini read_many_files include", tcall("read_many_files", map[string]any{"include": []any{".env"}}), "deny"},
		{"gemini read_many_files include glob", tcall("read_many_files", map[string]any{"include": []any{"**/*"}}), "deny"},
		{"gemini read_many_files include folder glob", tcall("read_many_files", map[string]any{"include": []any{"src/*"}}), "deny"},
		{"gemini read_many_files include braces", tcall("read_many_files", map[string]any{"include": []any{"{src,pkg}/.e*"}}), "notAllow"},
		{"gemini read_many_files include as a string", tcall("read_many_files", map[string]any{"include": "src/.env"}), "deny"},
		// Handled.
		{"gemini grep_search absolute dir_path", tcall("grep_search", map[string]any{"pattern": "KEY", "dir_path": "/root/.ssh"}), "deny"},
		{"read_many_files paths", tcall("read_many_files", map[string]any{"paths": []any{".env"}}), "deny"},
		{"mcp read_multiple_files", tcall("mcp__filesystem__read_multiple_files", map[string]any{"paths": []any{"src/a.go", ".env"}}), "deny"},
		{"Grep relative path", tcall("Grep", map[string]any{"pattern": "KEY", "path": "src"}), "deny"},
		// Allowed.
		{"grep_search a clean folder", tcall("grep_search", map[string]any{"pattern": "KEY", "dir_path": "pkg/app"}), "allow"},
		{"read_many_files go files", tcall("read_many_files", map[string]any{"include": []any{"src/*.go"}}), "allow"},
		{"mcp search_files lists names", tcall("mcp__filesystem__search_files", map[string]any{"path": ".", "pattern": "env"}), "allow"},
	})
}

// Paths spelt oddly, through links, and with bytes the kernel refuses.
func TestRedteam2Paths(t *testing.T) {
	t.Parallel()
	w := func(p string) warden.ToolCall {
		return tcall("Write", map[string]any{"file_path": p, "content": "x"})
	}
	r := func(p string) warden.ToolCall { return tcall("Read", map[string]any{"file_path": p}) }
	cases := []soundCase{
		// Findings. A NUL byte ends the path for a program written in C.
		{"NUL byte before an allowed suffix", w("src/.env\x00.go"), "deny"},
		{"NUL byte in a search folder", tcall("Grep", map[string]any{"pattern": "KEY", "path": "src\x00/../pkg"}), "deny"},
		// ~user and $VAR, as a tool that expands them (Python's
		// os.path.expanduser and expandvars) reads them.
		{"~user", r("~root/.ssh/id_rsa"), "deny"},
		{"$HOME", r("$HOME/.ssh/id_rsa"), "notAllow"},
		{"$HOME write", w("$HOME/.bashrc"), "notAllow"},
		{"${HOME} read", r("${HOME}/.aws/credentials"), "notAllow"},
		{"Grep ~user", tcall("Grep", map[string]any{"pattern": "KEY", "path": "~root/.ssh"}), "deny"},
		// Code points HFS+ ignores in file names.
		{"zero-width joiner in .git", w(".g\u200cit/config.md"), "deny"},
		{"byte order mark in .git", tcall("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: .gi\ufefft/hooks/x.go\n+x\n*** End Patch"}), "deny"},
		{"zero-width in the policy file", w("warden\u200d.yaml"), "deny"},
		// Handled.
		{"NUL byte in a patch header", tcall("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: .git/config\x00src/a.go\n+x\n*** End Patch"}), "deny"},
		{"link then ..", w("src/hooks/../config"), "deny"},
		{"through a folder link", w("src/hooks/pre-commit"), "deny"},
		{"//", w("src//..//.git/config"), "deny"},
		{"/./", w("src/./../.git/./config"), "deny"},
		{"trailing slash", w(".git/config/"), "deny"},
		{"case of .git", w(".GIT/config"), "deny"},
		{"case of .env", r("src/.ENV"), "deny"},
		{"case of the policy file", w("WARDEN.yaml"), "deny"},
		{"case of .warden", w(".Warden/warden.db"), "deny"},
		{"/proc/self/cwd", w("/proc/self/cwd/.git/config"), "notAllow"},
		{"/proc/self/root", w("/proc/self/root/etc/passwd"), "notAllow"},
		{"/dev/fd", w("/dev/fd/3"), "notAllow"},
		{"very long path", w("src/" + strings.Repeat("a/", 3000) + strings.Repeat("../", 3001) + ".git/config"), "deny"},
		{"trailing dot", w(".git./config"), "notAllow"},
		{"mcp move into .git", tcall("mcp__filesystem__move_file", map[string]any{"source": "src/a.go", "destination": ".git/hooks/pre-commit"}), "deny"},
		{"mcp move .env away", tcall("mcp__filesystem__move_file", map[string]any{"source": ".env", "destination": "src/x.go"}), "deny"},
		{"mcp create_directory in .git", tcall("mcp__filesystem__create_directory", map[string]any{"path": ".git/hooks2"}), "deny"},
		{"NotebookEdit in .git", tcall("NotebookEdit", map[string]any{"notebook_path": ".git/x.ipynb", "new_source": "x"}), "deny"},
		{"patch CRLF move into .git", tcall("patch", map[string]any{"patchText": "*** Begin Patch\r\n*** Update File: src/a.go\r\n*** Move to: .git/hooks/pre-commit\r\n@@\r\n-a\r\n+b\r\n*** End Patch"}), "deny"},
		{"patch indented header", tcall("apply_patch", map[string]any{"input": "  *** Begin Patch\n*** Add File: src/x.go\n+x\n   *** Add File:   .warden/foo\n+x\n*** End Patch"}), "deny"},
		{"patch deletes the policy", tcall("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Delete File: warden.yaml\n*** End Patch"}), "deny"},
		{"patch .. out of the workspace", tcall("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: src/../../out.go\n+x\n*** End Patch"}), "deny"},
	}
	checkSound(t, cases)
	checkCoding(t, cases)
}

// A dangling link, and a link an earlier call left behind: the write goes
// where the link leads.
func TestRedteam2Links(t *testing.T) {
	t.Parallel()
	e, dir := newEngine(t, codingPolicy(t))
	for _, d := range []string{"src", ".git/hooks"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("../.git/hooks/post-merge", filepath.Join(dir, "src/dangling.go"))
	os.Symlink("../warden.yaml", filepath.Join(dir, "src/policy.md"))
	os.Symlink(filepath.Join(dir, ".warden"), filepath.Join(dir, "docs"))
	for _, p := range []string{"src/dangling.go", "src/policy.md", "docs/warden.db", dir + "/src/policy.md"} {
		if d := e.Decide(tcall("Write", map[string]any{"file_path": p, "content": "x"}), nil).Decision; d.Decision != warden.Deny {
			t.Errorf("handled: write %s: %s %s", p, d.Decision, d.Code)
		}
	}
}

// A grant for a command that reads its input from elsewhere on the line
// covers that line only: sh < setup.sh is not sh < evil.sh.
func TestRedteam2GrantsForInput(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, codingPolicy(t))
	// The grants an always answer leaves for the line: one per command
	// that asks.
	grantsOf := func(cmd string) []warden.Grant {
		t.Helper()
		var gs []warden.Grant
		for _, p := range e.Explain(sh(cmd), nil).Parts {
			if p.Effect == warden.Ask && p.Subject == warden.SubjectCommand {
				gs = append(gs, warden.Grant{ID: fmt.Sprintf("g%d", len(gs)), Tool: "Bash", Subject: warden.SubjectCommand, Value: p.GrantValue(), UsesLeft: -1})
			}
		}
		if len(gs) == 0 {
			t.Fatalf("%s: no part asks", cmd)
		}
		return gs
	}
	for _, c := range []struct{ granted, other string }{
		// Findings: the grant (and the approval, which is keyed by the
		// same values) covered the other line.
		{"sh < setup.sh", "sh < evil.sh"},
		{"cat setup.sh | sh", "cat evil.sh | sh"},
		{"python3 - <<'EOF'\nprint(1)\nEOF", "python3 - <<'EOF'\nimport shutil; shutil.rmtree('/')\nEOF"},
		{"python3 <<< 'print(1)'", "python3 <<< 'import os; os.system(\"rm -rf ~\")'"},
		{"sh < setup.sh", "sh"},
		{"cat setup.sh | (sh)", "cat evil.sh | (sh)"},
		{"cat setup.sh | (sh | cat)", "cat evil.sh | (sh | cat)"},
		{"cat setup.sh | bash -c sh", "cat evil.sh | bash -c sh"},
		// Handled: the arguments are part of the command.
		{"python3 a.py", "python3 b.py"},
		{"node -e 'console.log(1)'", "node -e 'require(\"fs\").rmSync(\"src\",{recursive:true})'"},
	} {
		s := &engine.Session{Grants: grantsOf(c.granted)}
		if d := e.Decide(sh(c.granted), s).Decision; d.Decision != warden.Allow {
			t.Errorf("the granted line %q: %s %s", c.granted, d.Decision, d.Code)
		}
		if d := e.Decide(sh(c.other), s).Decision; d.Decision == warden.Allow {
			t.Errorf("a grant for %q allowed %q", c.granted, c.other)
		}
	}
	// The line is kept as a hash: a secret on it stays out of the grant.
	for _, g := range grantsOf("printf 'token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB' | python3 x.py") {
		if strings.HasPrefix(g.Value, "python3") && strings.Contains(g.Value, "ghp_") {
			t.Errorf("the grant holds the line: %q", g.Value)
		}
	}
	// Allowed: a command whose output only is piped keeps its grant.
	if d := e.Decide(sh("python3 x.py 2>&1 | tail -5"), &engine.Session{Grants: grantsOf("python3 x.py")}).Decision; d.Decision != warden.Allow {
		t.Errorf("a grant for python3 x.py, piped to tail: %s %s", d.Decision, d.Code)
	}
}

// A protected or private path written in the other Unicode normal form:
// macOS takes é composed and decomposed as one name.
func TestRedteam2UnicodeForms(t *testing.T) {
	t.Parallel()
	pol := `version: 1
default: {safe: allow, destructive: allow}
workspace: {root: ., outside: deny}
protected: ["clé/**"]
private: ["**/reçu.txt"]
`
	w := func(p string) warden.ToolCall {
		return tcall("Write", map[string]any{"file_path": p, "content": "x"})
	}
	checkSoundPolicy(t, pol, []soundCase{
		// Findings: allowed by the default before.
		{"decomposed é of a protected folder", w("cle\u0301/x"), "deny"},
		{"decomposed ç of a private file", tcall("Read", map[string]any{"file_path": "src/rec\u0327u.txt"}), "deny"},
		{"shell write in the decomposed form", sh("echo x > cle\u0301/x"), "deny"},
		// Handled.
		{"composed é", w("cl\u00e9/x"), "deny"},
		// Allowed.
		{"another folder", w("cle/x"), "allow"},
	})
}

func TestRedteam2UnicodeFormsShellRead(t *testing.T) {
	t.Parallel()
	pol := `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
private: ["**/reçu.txt"]
rules:
  - {id: cat, effect: allow, tool: shell, command: "cat *"}
`
	checkSoundPolicy(t, pol, []soundCase{
		// Finding.
		{"cat the decomposed spelling", sh("cat src/rec\u0327u.txt"), "deny"},
		// Handled.
		{"cat the composed spelling", sh("cat src/re\u00e7u.txt"), "deny"},
		{"cat another file", sh("cat src/recu.txt"), "allow"},
	})
}

// A working folder with ".." after a symbolic link: chdir goes to the
// link's target's parent (src/hooks/.. is .git when src/hooks links to
// .git/hooks), and Codex runs its command there.
func TestRedteam2WorkdirDotDotAfterLink(t *testing.T) {
	t.Parallel()
	cases := []soundCase{
		// Findings: checked as src/config before.
		{"codex workdir", tcall("exec_command", map[string]any{"cmd": "echo x > config", "workdir": "src/hooks/.."}), "deny"},
		{"opencode workdir", tcall("bash", map[string]any{"command": "echo x > config", "workdir": "src/hooks/.."}), "deny"},
		{"gemini dir_path", tcall("run_shell_command", map[string]any{"command": "echo x > config", "dir_path": "src/hooks/../"}), "deny"},
		{"the call's cwd", warden.ToolCall{Tool: "Bash", Cwd: "src/hooks/..", Args: map[string]any{"command": "echo x > config"}}, "deny"},
		{"a file tool from the call's cwd", warden.ToolCall{Tool: "Write", Cwd: "src/hooks/..", Args: map[string]any{"file_path": "config", "content": "x"}}, "deny"},
		// Handled: cd on the line.
		{"cd on the line", sh("cd src/hooks/.. && echo x > config"), "deny"},
		// Allowed.
		{"a plain workdir", tcall("bash", map[string]any{"command": "echo x > b.go", "workdir": "src/"}), "allow"},
		{"a plain cwd", warden.ToolCall{Tool: "Write", Cwd: "./src", Args: map[string]any{"file_path": "b.go", "content": "x"}}, "allow"},
	}
	checkSound(t, cases)
	checkCoding(t, cases)
}

// An MCP resource that is a file, read through Codex's read_mcp_resource.
func TestRedteam2ResourceURI(t *testing.T) {
	t.Parallel()
	res := func(uri string) warden.ToolCall {
		return tcall("read_mcp_resource", map[string]any{"server": "filesystem", "uri": uri})
	}
	cases := []soundCase{
		// Findings: allowed as a read of nothing in particular.
		{"file URI of a private file", res("file:///root/.ssh/id_rsa"), "deny"},
		{"file URI with an encoded name", res("file:///root/.ssh/id%5Frsa"), "deny"},
		{"file URI on localhost", res("file://localhost/root/.aws/credentials"), "deny"},
		{"file URI on another host", res("file://elsewhere/root/.ssh/id_rsa"), "notAllow"},
		{"FILE: in capitals", res("FILE:///root/.ssh/id_rsa"), "deny"},
		// Allowed: a resource that is not a file.
		{"another scheme", res("repo://issues/12"), "allow"},
	}
	checkSound(t, cases)
	checkCoding(t, cases)
}

// A policy file in a folder below the workspace root: the hooks run
// without --policy and find the policy nearest the folder a call is made
// from (policy.Find from the host's cwd), so a permissive warden.yaml an
// agent writes into src/ governs its calls once it has run cd src, and
// removing a package's own policy hands its calls to a wider one.
func TestRedteam2NestedPolicy(t *testing.T) {
	t.Parallel()
	w := func(p string) warden.ToolCall {
		return tcall("Write", map[string]any{"file_path": p, "content": "version: 1\ndefault: allow\n"})
	}
	cases := []soundCase{
		// Findings: each was allowed (src/** and *.md allow edits).
		{"Write src/warden.yaml", w("src/warden.yaml"), "deny"},
		{"Write src/warden.yml", w("src/warden.yml"), "deny"},
		{"Write src/warden.json", w("src/warden.json"), "deny"},
		{"Write another case", w("src/Warden.YAML"), "deny"},
		{"a store folder below", w("src/.warden/warden.db"), "deny"},
		{"shell redirect", sh("echo 'default: allow' > src/warden.yaml"), "deny"},
		{"cp over a nested policy", sh("cp src/a.go src/warden.yaml"), "deny"},
		{"patch adds a policy", tcall("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: src/warden.yaml\n+version: 1\n*** End Patch"}), "deny"},
		{"mcp move a file onto a policy name", tcall("mcp__filesystem__move_file", map[string]any{"source": "src/a.go", "destination": "src/warden.yaml"}), "deny"},
		{"delete a package's policy", tcall("delete_file", map[string]any{"path": "pkg/app/warden.yaml"}), "deny"},
		// Allowed: reading a policy, and other names.
		{"Read a nested policy", tcall("Read", map[string]any{"file_path": "pkg/app/warden.yaml"}), "allow"},
		{"a file named like it", w("src/warden.yaml.go"), "allow"},
	}
	checkSound(t, cases)
	checkCoding(t, cases)
}

// git run with the host's working folder (the call's cwd, which Claude
// Code keeps after a cd, or a shell tool's workdir) inside a repository
// an agent wrote with file tools: git fetch runs its core.sshCommand.
func TestRedteam2GitInTheWorkingFolder(t *testing.T) {
	t.Parallel()
	for _, pol := range []string{allowListPolicy, codingPolicy(t)} {
		e, dir := newEngine(t, pol)
		for _, f := range []string{"src/ev/HEAD", "src/ev/objects/.keep", "src/ev/refs/.keep", "src/sub/.git", "src/plain/a.go", ".git/HEAD"} {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
			os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644)
		}
		os.MkdirAll(filepath.Join(dir, ".git/objects"), 0o755)
		os.MkdirAll(filepath.Join(dir, ".git/refs"), 0o755)
		in := func(cwd, cmd string) warden.ToolCall {
			return warden.ToolCall{Tool: "Bash", Cwd: cwd, Args: map[string]any{"command": cmd}}
		}
		for _, c := range []struct {
			name string
			call warden.ToolCall
			want string
		}{
			// Findings: allowed before.
			{"cwd is a bare repository's folder", in("src/ev", "git status"), "notAllow"},
			{"cwd below it", in("src/ev/refs", "git log"), "notAllow"},
			{"cwd in a nested repository", in("src/sub", "git diff"), "notAllow"},
			{"opencode workdir", tcall("bash", map[string]any{"command": "git status", "workdir": "src/ev"}), "notAllow"},
			{"absolute cwd", in(dir+"/src/ev", "git status"), "notAllow"},
			// Handled: cd and -C on the line.
			{"cd on the line", sh("cd src/ev && git status"), "notAllow"},
			{"git -C", sh("git -C src/ev status"), "notAllow"},
			// Allowed: the workspace's own repository.
			{"the root", in("", "git status"), "allow"},
			{"a plain folder", in("src/plain", "git status"), "allow"},
			{"inside .git", in(".git", "git status"), "allow"},
		} {
			d := e.Decide(c.call, nil).Decision
			if ok := d.Decision == warden.Allow; ok != (c.want == "allow") {
				t.Errorf("%s: %s %s (%s), want %s", c.name, d.Decision, d.Code, d.Reason, c.want)
			}
		}
	}
}
