package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// Red-team tests of paths: links, .. after a link, Unicode forms, case folds, working folders, folders read whole, /dev/fd and /proc spellings, ~+ and globs.

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

// Reads of folders whole: git add stages untracked files (git add -A,
// then git diff --cached prints .env), git grep --untracked and
// --no-index search them, docker build sends its context to the daemon;
// kubectl's template files are printed; pip hash and sha256sum -c read
// files.
func TestRedteam5TreeReads(t *testing.T) {
	t.Parallel()
	checkProgs5(t, []soundCase{
		// Findings.
		{"git add -A", sh("git add -A"), "deny"},
		{"git add --all", sh("git add --all"), "deny"},
		{"git add .", sh("git add ."), "deny"},
		{"git add src", sh("git add src"), "deny"},
		{"git grep --untracked", sh("git grep --untracked KEY"), "deny"},
		{"git grep --no-index", sh("git grep --no-index KEY"), "deny"},
		{"docker build of the workspace", sh("docker build ."), "deny"},
		{"docker build --cache-to into .git", sh("docker build --cache-to type=local,dest=.git/hooks pkg/app"), "deny"},
		{"kubectl -o go-template-file", sh("kubectl create configmap x --dry-run=client -o go-template-file=.env"), "deny"},
		{"kubectl -o jsonpath-file", sh("kubectl get pods -o jsonpath-file=.env"), "deny"},
		{"kubectl --template with a file format", sh("kubectl get pods -o go-template-file --template=.env"), "deny"},
		{"pip hash", sh("pip hash .env"), "deny"},
		{"sha256sum -c", sh("sha256sum -c sums.txt"), "notAllow"},
		// Allowed.
		{"git add a file", sh("git add src/a.go"), "allow"},
		{"git add -u", sh("git add -u"), "allow"},
		{"git add -n", sh("git add -n ."), "allow"},
		{"git grep", sh("git grep KEY"), "allow"},
		{"git diff --cached", sh("git diff --cached"), "allow"},
		{"docker build of a clean folder", sh("docker build -f Dockerfile pkg/evil"), "allow"},
		{"docker build --cache-from an image", sh("docker build --cache-from myimage:latest pkg/evil"), "allow"},
		{"kubectl -o jsonpath", sh("kubectl get pods -o jsonpath='{.items}'"), "allow"},
		{"sha256sum", sh("sha256sum src/a.go"), "allow"},
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

// A shell tool's working folder is read like cd DIR: Codex's exec_command
// and OpenCode's bash take workdir, Gemini CLI's run_shell_command
// directory, and `ls` with no path lists it. Only dir_path was checked:
// {cmd: ls, workdir: ~/.ssh} listed a private folder, and {cmd: ls,
// workdir: /etc} a folder outside the workspace, where `cd ~/.ssh && ls`
// was denied.
func TestRedteam8ShellWorkdir(t *testing.T) {
	t.Parallel()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home folder")
	}
	ssh := filepath.Join(home, ".ssh")
	call := func(tool, key, cmd, dir string) warden.ToolCall {
		cmdKey := "command"
		if tool == "exec_command" {
			cmdKey = "cmd"
		}
		return warden.ToolCall{Tool: tool, Args: map[string]any{cmdKey: cmd, key: dir}}
	}
	checkSoundPolicy(t, `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
private: ["~/.ssh/**", "~/.ssh"]
rules:
  - id: look
    effect: allow
    tool: shell
    command: ["ls *", "git status *"]
`, []soundCase{
		// Findings.
		{"Codex: ls in a private folder", call("exec_command", "workdir", "ls -la", ssh), "deny"},
		{"Codex: ls in ~/.ssh as written", call("exec_command", "workdir", "ls", "~/.ssh"), "deny"},
		{"Codex: ls outside the workspace", call("exec_command", "workdir", "ls", "/etc"), "deny"},
		{"OpenCode: ls in a private folder", call("bash", "workdir", "ls", ssh), "deny"},
		{"Gemini CLI: directory", call("run_shell_command", "directory", "ls", ssh), "deny"},
		{"a cwd argument", call("Bash", "cwd", "ls", "/etc"), "deny"},
		{"git status in another folder outside", call("exec_command", "workdir", "git status", "/etc"), "deny"},
		// Handled before: Gemini CLI's dir_path.
		{"handled: dir_path", call("run_shell_command", "dir_path", "ls", ssh), "deny"},
		// Allowed: a folder of the workspace.
		{"ls in a folder of the workspace", call("exec_command", "workdir", "ls", "src"), "allow"},
		{"ls in the workspace root", call("bash", "workdir", "ls", "."), "allow"},
	})
}

// /dev/fd/N and /dev/stdin, /dev/stdout, /dev/stderr lead to the open
// files of the process that opens them: a file tool's write to /dev/fd/3
// was resolved in warden's own process (to whatever warden had open at 3:
// "/sys/fs/cgroup/cpu/cpu.cfs_quota_us is outside the workspace"), so the
// decision hung on warden's files. They are computed now, like
// /proc/self/fd/3. A shell's own redirections to them stay allowed.
func TestRedteam8DevFd(t *testing.T) {
	t.Parallel()
	write := func(p string) warden.ToolCall {
		return warden.ToolCall{Tool: "Write", Args: map[string]any{"file_path": p, "content": "x"}}
	}
	checkSoundPolicy(t, editAllPolicy, []soundCase{
		{"Write /dev/fd/3", write("/dev/fd/3"), "notAllow"},
		{"Write /dev/fd/0", write("/dev/fd/0"), "notAllow"},
		{"Write /dev/stdout", write("/dev/stdout"), "notAllow"},
		{"echo to the shell's stderr", sh("echo x >&2"), "allow"},
		{"echo to /dev/null", sh("echo x > /dev/null"), "allow"},
	})
	e, _ := newEngine(t, editAllPolicy)
	d := e.Decide(write("/dev/fd/3"), nil).Decision
	if !strings.Contains(d.Reason, "/dev/fd/3") || strings.Contains(d.Reason, "/proc/") || strings.Contains(d.Reason, "/sys/") {
		t.Errorf("the reason names warden's own file, not the call's: %s", d.Reason)
	}
}

// Folders a line works in: cd, and the -C of make, go, npm.
func TestRedteamWorkingFolders(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		// Findings.
		{"cd alone goes home", sh("cd; cat .aws/credentials"), "notAllow"},
		{"cd home then list", sh("cd && ls"), "notAllow"},
		{"another project's Makefile", sh("cd /tmp/other && make deploy"), "notAllow"},
		{"make -C elsewhere", sh("make -C /tmp/other deploy"), "notAllow"},
		{"go test -C elsewhere", sh("go test -C /tmp/evil ./..."), "notAllow"},
		{"go run -C elsewhere", sh("go run -C /tmp/evil ."), "notAllow"},
		{"npm --prefix elsewhere", sh("npm test --prefix /tmp/other"), "notAllow"},
		{"pushd elsewhere", sh("pushd /tmp/other && make deploy"), "notAllow"},
		{"cd up and over", sh("cd ../other && make"), "notAllow"},
		{"computed folder", sh("cd $HOME/other && make deploy"), "notAllow"},
		{"a cd that may not run", sh("cd nowhere; cd ../other && make"), "notAllow"},
		// Handled already.
		{"handled: make -f elsewhere", sh("make -f /tmp/other/Makefile"), "deny"},
		{"handled: cd into the ssh folder", sh("cd ~/.ssh && cat config"), "deny"},
		// Harmless forms stay allowed.
		{"cd src then test", sh("cd src && go test ./..."), "allow"},
		{"git -C .", sh("git -C . status"), "allow"},
	})
}

// The write and read tools' paths: on a file system that ignores case
// (macOS, Windows) .ENV is .env and WARDEN.yaml the policy.
func TestRedteamToolPaths(t *testing.T) {
	t.Parallel()
	read := func(p string) warden.ToolCall {
		return warden.ToolCall{Tool: "Read", Args: map[string]any{"file_path": p}}
	}
	checkCoding(t, []soundCase{
		// Findings.
		{"write src/.ENV", file("Write", "src/.ENV"), "deny"},
		{"read src/.ENV", read("src/.ENV"), "deny"},
		{"read SRC/.Env", read("SRC/.Env"), "deny"},
		{"write src/key.PEM", file("Write", "src/key.PEM"), "deny"},
		{"write WARDEN.yaml", file("Write", "WARDEN.yaml"), "deny"},
		{"write .Warden", file("Write", ".Warden/x"), "deny"},
		{"write .GIT/config", file("Write", ".GIT/config"), "deny"},
		{"cat src/.ENV", sh("cat src/.ENV"), "deny"},
		{"echo into Warden.Yaml", sh("echo x > Warden.Yaml"), "deny"},
		// Handled already.
		{"handled: dot-dot", file("Write", "src/../.git/config"), "deny"},
		{"handled: link into .git", file("Write", "src/hooks/pre-commit"), "deny"},
		{"handled: trailing slash", file("Write", "warden.yaml/"), "deny"},
		{"handled: double slashes", file("Write", "src//..//.git//config"), "deny"},
		{"handled: src/.git", file("Write", "src/.git"), "deny"},
		{"handled: home", file("Write", "~/.bashrc"), "deny"},
		{"handled: .env.local", file("Write", "src/.env.local"), "deny"},
		// Harmless forms stay allowed.
		{"write src", file("Write", "src/x.go"), "allow"},
		{"read src", read("src/a.go"), "allow"},
	})
}

// A folder read whole is read through the links inside it: grep -R, rg -L,
// diff -r and cp -rL follow them.
func TestRedteamTreeReadsFollowLinks(t *testing.T) {
	t.Parallel()
	e, dir := newEngine(t, codingPolicy(t))
	os.WriteFile(filepath.Join(dir, ".env"), []byte("S=1\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "lk"), 0o755)
	os.MkdirAll(filepath.Join(dir, "secrets"), 0o755)
	os.WriteFile(filepath.Join(dir, "secrets/.env"), []byte("S=1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "lk/a.txt"), []byte("x\n"), 0o644)
	os.Symlink("../.env", filepath.Join(dir, "lk/e"))
	os.MkdirAll(filepath.Join(dir, "lk2"), 0o755)
	os.Symlink("../secrets", filepath.Join(dir, "lk2/s"))
	os.MkdirAll(filepath.Join(dir, "clean"), 0o755)
	os.Symlink("../lk/a.txt", filepath.Join(dir, "clean/a"))
	for _, c := range []struct {
		cmd  string
		want warden.Effect
	}{
		{"grep -R KEY lk", warden.Deny},
		{"rg -L KEY lk", warden.Deny},
		{"diff -rN lk pkg", warden.Deny},
		{"grep -R KEY lk2", warden.Deny},
		{"grep -R KEY clean", warden.Allow},
		{"rg KEY lk", warden.Allow}, // rg follows links only with -L
	} {
		if d := e.Decide(sh(c.cmd), nil).Decision; d.Decision != c.want {
			t.Errorf("%s: %s %s (%s), want %s", c.cmd, d.Decision, d.Code, d.Reason, c.want)
		}
	}
}

// Class 9 of issue 31, paths: /dev/fd/.. is /proc/self, and
// /proc/self/cwd the command's own folder, so /dev/fd/../cwd/.env is the
// workspace's .env (bash confirms: cat /dev/fd/../cwd/.env prints it), and
// ~+ is $PWD; both were asked about as computed paths. They are now
// spellings checked beside the path (engine/paths.go procAlias, the ~+
// prefix in shell/parse.go), so one that lands on a protected or private
// path is denied as such. A glob whose literal prefix leaves the
// workspace or names a private folder is a listing of that folder.
func TestPathSpellings(t *testing.T) {
	t.Parallel()
	checkAllowDefault(t, []soundCase{
		{"/dev/fd/../cwd to a private file", sh("cat /dev/fd/../cwd/.env"), "deny"},
		{"/dev/fd/../cwd to a protected file", sh("echo x > /dev/fd/../cwd/.git/config"), "deny"},
		{"/proc/self/cwd after a cd", sh("cd src && cat /proc/self/cwd/.env"), "deny"},
		{"/proc/thread-self/cwd", sh("cat /proc/thread-self/cwd/.env"), "deny"},
		{"/proc/self/root", sh("cat /proc/self/root/etc/hostname"), "deny"},
		{"~+ to a private file", sh("cat ~+/.env"), "deny"},
		{"~+ to a protected file", sh("echo x > ~+/.git/config"), "deny"},
		{"~+/.. leaves the workspace", sh("cat ~+/../x"), "deny"},
		{"a glob under a private folder", sh("cat ~/.ssh/*"), "deny"},
		{"a glob outside", sh("cat /etc/**"), "deny"},
		{"a glob above the workspace", sh("cat ../**/*.pem"), "deny"},
		// Still computed: where another process's folder is.
		{"another process's cwd", sh("cat /proc/1/cwd/x"), "notAllow"},
		// Controls.
		{"~+ inside", sh("cat ~+/src/a.go"), "allow"},
		{"a glob inside", sh("cat src/*.go"), "allow"},
	})
}
