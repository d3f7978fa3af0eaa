package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
)

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

func TestRedteam4GitAfterCd(t *testing.T) {
	t.Parallel()
	cases := []soundCase{
		// Findings: git runs after the cd (the loop's second round, and
		// find's -execdir folder), where an agent could have written a
		// repository whose configuration runs programs.
		{"cd later in a while loop", sh("while true; do git status; cd src; done"), "notAllow"},
		{"cd later in an until loop", sh("until false; do git status; cd src; done"), "notAllow"},
		{"cd later in a for loop", sh("for i in 1 2; do git status; cd src; done"), "notAllow"},
		{"cd later in select", sh("select x in a; do git status; cd src; done"), "notAllow"},
		{"find -execdir git", sh(`find src/a.go -execdir git status \;`), "notAllow"},
		{"find -okdir git", sh(`find src/a.go -okdir git status \;`), "notAllow"},
		{"env -C", sh("env -C src git status"), "notAllow"},
		{"env --chdir", sh("env --chdir=src git status"), "notAllow"},
		{"git --bare", sh("git --bare diff a b"), "notAllow"},
		{"git --bare init", sh("git --bare init"), "notAllow"},
		{"a loop given as an argument vector", warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": []any{"bash", "-lc", "for i in 1 2; do git status; cd src; done"}}}, "notAllow"},
		// Allowed: git where no cd is.
		{"git alone", sh("git status"), "allow"},
		{"git and a listing", sh("git status && ls src"), "allow"},
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

// A workspace without .git whose root an agent made look like a
// repository (HEAD, objects/, refs/, a config that runs a program): git
// there takes the root for that repository.
func TestRedteam4RootLooksLikeARepository(t *testing.T) {
	t.Parallel()
	e, dir := newEngine(t, allowListPolicy)
	if d := e.Decide(sh("git status"), nil).Decision; d.Decision != warden.Allow {
		t.Fatalf("git status in a plain folder: %s %s", d.Decision, d.Reason)
	}
	for _, f := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := e.Decide(sh("git status"), nil).Decision; d.Decision == warden.Allow {
		t.Errorf("git status in a root that is a repository's folder: %s", d.Decision)
	}
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
