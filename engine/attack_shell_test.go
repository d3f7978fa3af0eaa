package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// Red-team tests of the shell language: variables and what bash evaluates (arithmetic, subscripts, set -a), zsh's readings, text a shell runs (aliases, source, here-documents), redirections and terminal input.

func TestRedteam4BashEvaluates(t *testing.T) {
	t.Parallel()
	cases := []soundCase{
		// Findings: arithmetic, which evaluates a variable's value and the
		// subscripts in it, and so runs their command substitutions.
		{"test -v with a subscript", sh(`[ -v 'a[$(rm -rf src)]' ]`), "deny"},
		{"test builtin -v", sh(`test -v 'a[$(rm -rf /)]'`), "deny"},
		{"read into a subscript", sh(`read 'a[$(rm -rf /)]' <<< x`), "deny"},
		{"printf -v into a subscript", sh(`printf -v 'a[$(rm -rf /)]' x`), "deny"},
		{"unset a subscript", sh(`a=(1); unset 'a[$(rm -rf /)]'`), "deny"},
		{"mapfile into a subscript", sh(`mapfile 'a[$(rm -rf /)]' < /dev/null`), "deny"},
		{"indirect expansion", sh(`x='a[$(rm -rf /)]'; : ${!x}`), "deny"},
		{"prompt expansion", sh(`x='$(rm -rf /)'; : ${x@P}`), "deny"},
		{"prompt expansion of text read from a file", sh(`read -r x < src/a.go; : ${x@P}`), "deny"},
		{"arithmetic expansion of a variable", sh(`: $((x))`), "deny"},
		{"old arithmetic expansion", sh(`: $[x]`), "deny"},
		{"arithmetic command", sh(`(( x ))`), "deny"},
		{"numeric test in [[", sh(`[[ x -eq 1 ]]`), "deny"},
		{"shift by arithmetic", sh(`shift $((x))`), "deny"},
		{"C-style for", sh(`for ((i=x;0;)); do :; done`), "deny"},
		{"let", sh(`let x`), "deny"},
		{"declare -i", sh(`declare -i x; x='a[$(rm -rf /)]'`), "deny"},
		{"declare of a subscript", sh(`declare 'a[$(rm -rf /)]'=1`), "deny"},
		{"assignment to a quoted subscript", sh(`a['$(rm -rf /)']=1`), "deny"},
		{"array element subscript", sh(`a=([x]=1)`), "deny"},
		{"subscript of an expansion", sh(`: ${a[x]}`), "deny"},
		{"substring offset", sh(`: ${s:x:1}`), "deny"},
		{"[[ -v with a subscript", sh(`[[ -v a[x] ]]`), "deny"},
		{"read with a computed name", sh(`read "$n" <<< x`), "deny"},
		{"mapfile's callback", sh(`mapfile -C 'rm -rf src' -c 1 a < src/a.go`), "deny"},
		// Second pass.
		{"OPTIND is an integer variable", sh(`OPTIND='a[$(rm -rf src)]'`), "deny"},
		{"RANDOM assigned from a variable", sh(`x='a[$(rm -rf src)]'; RANDOM=x`), "deny"},
		{"read into OPTIND", sh(`read OPTIND <<< 'a[$(rm -rf src)]'`), "deny"},
		{"for over OPTIND", sh(`for OPTIND in 'a[$(rm -rf src)]'; do :; done`), "deny"},
		{"test with a computed -v", sh(`o=-v; [ "$o" 'a[$(rm -rf src)]' ]`), "deny"},
		{"test builtin with a computed -v", sh(`o=-v; test $o 'a[$(rm -rf src)]'`), "deny"},
		{"read -ra into PS4", sh(`read -raPS4 <<< x; set -x; :`), "deny"},
		{"read -ra into PATH", sh(`read -raPATH <<< /tmp/evil`), "deny"},
		{"printf with a computed -v", sh(`o=-v; printf "$o" 'a[$(rm -rf src)]' x`), "deny"},
		{"a comparison of a variable", sh(`[ "$x" = y ]`), "allow"},
		{"arithmetic in a here-document", sh(": <<EOF\n$((x))\nEOF"), "deny"},
		// Allowed: no variable is evaluated.
		{"numbers only", sh(`: $((1+2)) $((0x1f)) $((2#101))`), "allow"},
		{"length, default, keys, names", sh(`: ${#x} ${x:-d} ${!a[@]} ${!pre*} ${x@Q}`), "allow"},
		{"read a line", sh(`read -r line`), "allow"},
		{"test of numbers", sh(`[ 1 -eq 1 ]`), "allow"},
	}
	checkSoundPolicy(t, noAllowPolicy, cases)
	for i := range cases {
		if cases[i].expect == "deny" {
			cases[i].expect = "notAllow"
		}
	}
	checkSound(t, cases)
	checkCoding(t, cases)
}

// set -a exports every later assignment: TAR_OPTIONS=... then reaches tar.
func TestRedteam4AllExport(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		{"set -a", sh("set -a; TAR_OPTIONS='--checkpoint=1 --checkpoint-action=exec=touch\\ x'; tar -tf a.tar"), "notAllow"},
		{"set -o allexport", sh("set -o allexport; TAR_OPTIONS=x; tar -tf a.tar"), "notAllow"},
		{"set -e", sh("set -e; ls src"), "allow"},
	})
}

// A file tool's path with a $ component after the first was expanded
// again and again, without end: memory grew until the process died.
func TestRedteam4DollarPathEnds(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		{"Write a/$x", tcall("Write", map[string]any{"file_path": "src/$x", "content": "x"}), "notAllow"},
		{"Write a/${x}/b", tcall("Write", map[string]any{"file_path": "src/${x}/b.go", "content": "x"}), "notAllow"},
		{"Read a/$x", tcall("Read", map[string]any{"file_path": "src/$HOME"}), "notAllow"},
	})
	e, _ := newEngine(t, allowListPolicy)
	if d := e.Decide(warden.ToolCall{Tool: "Edit", Args: map[string]any{"file_path": "a/$b/$c/$d", "old_string": "x", "new_string": "y"}}, nil).Decision; d.Decision == warden.Allow {
		t.Errorf("a path of variables: %s", d.Decision)
	}
}

// The fifth red-team pass, terminal side: Codex's write_stdin types text
// into a running process's terminal, where a line editor and an
// interactive shell change the line before it runs. Each finding was
// allowed before its fix under allowListPolicy (echo, ls, cat and git
// status allowed by rule; .env private; src writable). The "allow" cases
// keep plain typed commands, polls and interrupts allowed.
func TestRedteam5TerminalInput(t *testing.T) {
	t.Parallel()
	typed := func(s string) warden.ToolCall {
		return warden.ToolCall{Tool: "write_stdin", Args: map[string]any{"session_id": 1, "chars": s}}
	}
	checkSound(t, []soundCase{
		// Findings: the line editor rewrites the line.
		{"Ctrl-U erases what was typed", typed("echo hi\x15rm -rf src\n"), "deny"},
		{"backspaces erase the allowed command", typed("echo hi" + strings.Repeat("\b", 7) + "cat .env\n"), "deny"},
		{"DEL erases", typed("echo hi" + strings.Repeat("\x7f", 7) + "cat .env\n"), "deny"},
		{"Ctrl-W erases a word", typed("echo \x17\x17cat .env\n"), "deny"},
		{"Ctrl-A moves to the line's start", typed("ls \x01rm -rf src #\n"), "deny"},
		{"Tab completes a private name", typed("cat .en\t\n"), "deny"},
		{"Ctrl-R searches the history", typed("\x12rm\n"), "deny"},
		{"an escape sequence", typed("echo \x1b[Drm -rf src\n"), "deny"},
		{"a C1 control character", typed("echo \u009b1Drm\n"), "deny"},
		// Findings: CR is Enter in a terminal, so two lines run.
		{"CR ends a line", typed("echo hi\rcat .env\r"), "deny"},
		// Findings: an interactive bash's history expansion.
		{"history reference as an argument", typed("ls !-2\n"), "deny"},
		{"history substitution", typed("echo !!:gs,a,b,\n"), "deny"},
		{"history search", typed("echo !?rm?\n"), "deny"},
		{"quick substitution", typed("^echo ^\n"), "deny"},
		// Handled: what the text says is decided as before.
		{"handled: a denied command", typed("rm -rf src\n"), "deny"},
		{"handled: a private read", typed("cat .env\n"), "deny"},
		{"handled: bytes that are not UTF-8 (meta keys)", typed("echo \xe4\n"), "deny"},
		{"handled: quick substitution on a later line", typed("ls\n^ls^cat .env\n"), "deny"},
		// Allowed.
		{"a plain command", typed("git status\n"), "allow"},
		{"Enter as CR LF", typed("ls -la\r\n"), "allow"},
		{"text without Enter", typed("ls -la"), "allow"},
		{"a poll sends nothing", typed(""), "allow"},
		{"an interrupt", typed("\x03"), "allow"},
		{"an end of input", typed("\x04"), "allow"},
		{"test negation", typed("[ ! -f x ] && echo hi\n"), "allow"},
		{"a ! at the end", typed("echo hi!\n"), "allow"},
		{"a caret inside a line", typed("echo a^b\n"), "allow"},
	})
}

// The reason a model gets for typed control characters names the
// character and says what to send instead.
func TestRedteam5TerminalReason(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, allowListPolicy)
	d := e.Decide(warden.ToolCall{Tool: "write_stdin", Args: map[string]any{"session_id": 1, "chars": "echo hi\x15rm -rf src\n"}}, nil).Decision
	if d.Decision != warden.Deny || d.Code != warden.CodeUnparsable {
		t.Fatalf("got %s %s", d.Decision, d.Code)
	}
	for _, want := range []string{"U+0015", "line editor", "plain text"} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason %q lacks %q", d.Reason, want)
		}
	}
}

// A here-document or here-string is the input of every command the line
// runs with it: a shell a wrapper runs reads it (`sudo bash <<EOF`), and
// so does one in a line a shell runs (`bash -c bash <<EOF`). The
// pathspecs git takes from a file (--pathspec-from-file) are computed.
func TestRedteam5WrappedHereDocuments(t *testing.T) {
	t.Parallel()
	checkWrap5(t, []soundCase{
		// Findings.
		{"sudo bash with a here-document", sh("sudo bash <<EOF\nrm -rf .git\nEOF"), "deny"},
		{"env bash with a here-document", sh("env bash <<'EOF'\necho x > .git/config\nEOF"), "deny"},
		{"nice sh with a here-string", sh(`nice sh <<< 'rm -rf .git'`), "deny"},
		{"bash -c bash with a here-document", sh("bash -c bash <<EOF\nrm -rf .git\nEOF"), "deny"},
		{"git add of the files a list names", sh("git add --pathspec-from-file=list"), "notAllow"},
		{"git rm of the files a list names", sh("git rm --pathspec-from-file=list"), "notAllow"},
		{"git restore of the files a list names", sh("git restore --pathspec-from-file=list"), "notAllow"},
		// Handled.
		{"handled: bash with a here-document", sh("bash <<EOF\nrm -rf .git\nEOF"), "deny"},
		{"handled: sudo bash with a computed here-string", sh(`sudo bash <<< "$x"`), "notAllow"},
		// Allowed.
		{"a here-document for cat under sudo", sh("sudo cat <<EOF\nrm -rf .git\nEOF"), "allow"},
	})
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

// The reason names a program or subcommand as the model wrote it, not
// the table's list of aliases ("of run run-script rum urn", "of pytest
// py.test", "of make gmake").
func TestRedteam8OptionText(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, `version: 1
default: {safe: allow, destructive: ask}
rules:
  - id: build
    effect: allow
    tool: shell
    command: ["npm run *", "pytest *", "make *", "cargo build *"]
`)
	for cmd, want := range map[string]string{
		"npm run build --script-shell=/tmp/x": "of npm run runs another program",
		"pytest -p evil":                      "option -p of pytest can run",
		"make --eval=x":                       "of make can run",
		"cargo build --config x=1":            "option --config of cargo build can run",
	} {
		d := e.Decide(bash(cmd), nil).Decision
		if d.Decision == warden.Allow || !strings.Contains(d.Reason, want) {
			t.Errorf("%s: %s %q; want a reason with %q", cmd, d.Decision, d.Reason, want)
		}
		for _, alias := range []string{"run-script", "py.test", "gmake"} {
			if strings.Contains(d.Reason, alias) {
				t.Errorf("%s: the reason lists the alias %s: %s", cmd, alias, d.Reason)
			}
		}
	}
}

// Variables assigned other than by NAME=VALUE before a command, and
// variables that change how a program reads its words or where cd goes.
func TestRedteamShellVariables(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		// Findings.
		{"CDPATH leads cd out of the workspace", sh("CDPATH=~ cd .aws && cat credentials"), "notAllow"},
		{"CDPATH assigned first", sh("CDPATH=/root; cd .ssh; cat config"), "notAllow"},
		{"POSIXLY_CORRECT turns -n's value into a file", sh("POSIXLY_CORRECT=1 head src/a.go -n .env"), "notAllow"},
		{"POSIXLY_CORRECT with -c", sh("POSIXLY_CORRECT=1 head src/a.go -c /root/.ssh/id_rsa"), "notAllow"},
		{"LESS runs a command in git's pager", sh("LESS='+!touch /tmp/pwned' git log"), "notAllow"},
		{"LESSOPEN runs a command in git's pager", sh("LESSOPEN='|touch /tmp/x %s' git -p log"), "notAllow"},
		{"read assigns PATH", sh("read PATH <<< src; ls"), "notAllow"},
		{"read -a assigns PATH", sh("read -a PATH <<< src; ls"), "notAllow"},
		{"read assigns CDPATH", sh("read CDPATH <<< /root; cd .aws; cat credentials"), "notAllow"},
		{"while read PATH", sh("while read PATH; do ls; done <<< src"), "notAllow"},
		{"for loop assigns PATH", sh("for PATH in src; do ls; done"), "notAllow"},
		{"for loop assigns CDPATH", sh("for CDPATH in /root; do cd .aws; cat credentials; done"), "notAllow"},
		{"select assigns PATH", sh("select PATH in src; do ls; done"), "notAllow"},
		{"${PATH:=...}", sh(": ${PATH:=src}; ls"), "notAllow"},
		{"${CDPATH=...}", sh("echo ${CDPATH=/root} && cd .aws && cat credentials"), "notAllow"},
		{"arithmetic assigns PATH", sh("(( PATH=1 )); ls"), "notAllow"},
		{"arithmetic expansion assigns PATH", sh("x=$(( PATH=2 )); ls"), "notAllow"},
		{"quoted let assigns PATH", sh("let 'PATH=1'; ls"), "notAllow"},
		{"nameref through a computed name", sh("r=PATH; declare -n x=$r; x=src; ls"), "notAllow"},
		{"declare with a quoted assignment", sh(`declare "PATH=src"; ls`), "notAllow"},
		{"set -k makes operands variables", sh("set -k; git diff GIT_EXTERNAL_DIFF=./src/evil"), "notAllow"},
		{"set -k and LD_PRELOAD", sh("set -k; cat LD_PRELOAD=src/evil.so src/a.go"), "notAllow"},
		{"set -o keyword", sh("set -o keyword; git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=evil"), "notAllow"},
		{"set -ek", sh("set -ek; ls PATH=src"), "notAllow"},
		// Handled already.
		{"handled: printf -v PATH", sh("printf -v PATH src; ls"), "notAllow"},
		{"handled: declare -n literal", sh("declare -n r=PATH; r=src; ls"), "notAllow"},
		{"handled: export PATH", sh("export PATH=src; ls"), "notAllow"},
		{"handled: function named like an allowed command", sh("ls() { touch /tmp/x; }; ls"), "notAllow"},
		{"handled: alias", sh("alias ls='touch x'; ls"), "notAllow"},
		{"handled: coproc", sh("coproc rm -rf src"), "deny"},
		{"handled: time", sh("time rm -rf src"), "deny"},
		{"handled: process substitution write", sh("echo x > >(tee .env)"), "deny"},
		{"handled: exec redirection", sh("exec 3>.env"), "deny"},
		{"handled: env -S", sh("env -S 'rm -rf src'"), "deny"},
		{"handled: cd - is computed", sh("cd .git; cd -; echo x > config"), "deny"},
		// Harmless forms stay allowed.
		{"read a line", sh("read -r line < src/a.go; echo $line"), "allow"},
		{"while read", sh(`while read -r l; do echo "$l"; done < src/a.go`), "allow"},
		{"default expansion of another name", sh("echo ${X:=1}"), "allow"},
		{"set -euo pipefail", sh("set -euo pipefail; ls"), "allow"},
		{"set +o keyword", sh("set +o keyword; ls"), "allow"},
	})
}

// Lines a zsh host (Codex's shell, macOS) reads otherwise than bash: glob
// qualifiers run commands, cd OLD NEW substitutes in the working folder,
// and ** descends any number of folders.
func TestRedteamZshReadings(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		{"glob qualifier runs a command", sh("echo *(e:'touch /tmp/x':)"), "notAllow"},
		{"cd OLD NEW", sh("cd app other && make deploy"), "notAllow"},
		{"cat src/*.go", sh("cat src/*.go"), "allow"},
	})
	e, dir := newEngine(t, codingPolicy(t))
	os.MkdirAll(filepath.Join(dir, "pkg/app/sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "pkg/app/sub/.env"), []byte("S=1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg/app/sub/a.go"), []byte("package a\n"), 0o644)
	for _, c := range []struct {
		cmd  string
		want warden.Effect
	}{
		{"cat pkg/**/.*", warden.Deny},
		{"head pkg/**/.e*", warden.Deny},
		{"cat pkg/**/*.go", warden.Allow},
	} {
		if d := e.Decide(sh(c.cmd), nil).Decision; d.Decision != c.want {
			t.Errorf("%s: %s %s (%s), want %s", c.cmd, d.Decision, d.Code, d.Reason, c.want)
		}
	}
}

// The harmless list of issue 31: a function the line defines and never
// calls runs nothing now. Its body was judged as if it ran, so f() { git
// push; } asked, and under default: {destructive: deny} any definition
// whose body wrote was denied. The body is now judged only for what
// would be denied (a deny rule, a protected or private path): a shell
// that persists between calls may run it later, so the definition of a
// denied call is still denied, with a reason that says so. A function
// named after a program warden knows, or one the line may call (by name,
// through trap, eval or a computed command), is judged as if run.
func TestUncalledFunctionDefinition(t *testing.T) {
	t.Parallel()
	checkCoding(t, []soundCase{
		// A definition alone: harmless (each asked before).
		{"a definition whose body asks", sh("f() { git push origin main; }"), "allow"},
		{"a definition whose body is destructive", sh("f() { rm build/x; }"), "allow"},
		{"function keyword", sh("function deploy { git push origin main; }"), "allow"},
		{"nested definitions, none called", sh("f() { g() { git push origin main; }; g; }"), "allow"},
		{"a definition beside an allowed command", sh("f() { git push origin main; }; ls src"), "allow"},
		// A body that would be denied still denies the definition.
		{"a denied command in the body", sh("f() { rm -rf build; }"), "deny"},
		{"a protected path in the body", sh("f() { echo x > .git/config; }"), "deny"},
		{"a private path in the body", sh("f() { cat .env; }"), "deny"},
		{"a denied command in a nested body", sh("f() { g() { npm publish; }; }"), "deny"},
		{"a denied command in a shell the body runs", sh("f() { bash -c 'rm -rf build'; }"), "deny"},
		// Called, or callable: judged as if run.
		{"called", sh("f() { git push origin main; }; f"), "notAllow"},
		{"called through trap", sh("f() { git push origin main; }; trap f EXIT"), "notAllow"},
		{"called through eval", sh("f() { git push origin main; }; eval f"), "notAllow"},
		{"a computed command may call it", sh("f() { git push origin main; }; $CMD"), "notAllow"},
		{"called by a later shell", sh("f() { git push origin main; }; export -f f; bash -c f"), "notAllow"},
		{"named after a known program", sh("ls() { git push origin main; }"), "notAllow"},
		{"named after a builtin", sh("cd() { git push origin main; }"), "notAllow"},
		{"command_not_found_handle runs for any unknown name", sh("command_not_found_handle() { git push origin main; }"), "notAllow"},
	})
	e, _ := newEngine(t, codingPolicy(t))
	d := e.Decide(sh("f() { rm -rf build; }"), nil).Decision
	if d.Code != warden.CodeRuleDeny || !strings.Contains(d.Reason, "function f is not called") || !strings.Contains(d.Reason, "Recursive forced deletion") {
		t.Errorf("uncalled denied body: %s %s %q, want the rule's deny saying the function is not called", d.Decision, d.Code, d.Reason)
	}
	if d := e.Decide(sh("f() { rm -rf build; }; f"), nil).Decision; strings.Contains(d.Reason, "not called") {
		t.Errorf("called function: reason %q says it is not called", d.Reason)
	}
	// Kind safe: under default {safe: allow, destructive: deny} the
	// definition is allowed, and the deny rule of the body still denies.
	checkSoundPolicy(t, noAllowPolicy, []soundCase{
		{"definition under destructive: deny", sh("f() { touch build/x; }"), "allow"},
		{"deny rule in the body", sh("f() { rm build/x; }"), "deny"},
		{"called under destructive: deny", sh("f() { touch build/x; }; f"), "deny"},
	})
}

// A function named after a program a rule names replaces it for the
// rule's later calls in a persistent shell: judged as if run.
func TestUncalledFunctionNamedLikeARuleProgram(t *testing.T) {
	t.Parallel()
	const pol = `version: 1
default: {safe: allow, destructive: ask}
rules:
  - id: tf
    effect: allow
    tool: shell
    command: ["terraform plan"]
`
	checkSoundPolicy(t, pol, []soundCase{
		{"named after a rule's program", sh("terraform() { rm -rf build; }"), "notAllow"},
		{"another name", sh("tfplan() { rm -rf build; }"), "allow"},
	})
}
