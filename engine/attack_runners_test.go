package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Class 7 of issue 31, programs that run a command they are given: npm
// exec -- rm -rf x was judged as npm alone, git bisect run and submodule
// foreach only stopped an allow, and fakeroot, setpriv, script -c, tmux
// new and the others were programs warden had no table for, so a deny
// rule for the command they ran never met it. They are now wrappers
// (shell/wrap.go, shell/runners.go) or table entries whose command is
// judged with all its words (progs.Result.Runs, Shell effects).
func TestRunnersJudgeTheirCommand(t *testing.T) {
	t.Parallel()
	forms := []string{
		"git bisect run INNER", "git submodule foreach 'INNER'", "git filter-branch --tree-filter 'INNER' HEAD",
		"git difftool -x 'INNER'", "git difftool --extcmd='INNER'",
		"npm exec -- INNER", "pnpm exec INNER", "yarn exec INNER", "uv run INNER", "npx cross-env A=1 INNER",
		"script -c 'INNER'", "script -qc 'INNER' /dev/null", "parallel INNER ::: a", "zip -TT 'INNER' x.zip a",
		"fakeroot INNER", "setpriv INNER", "prlimit --nofile=1024 INNER", "unshare INNER", "chronic INNER",
		"ifne INNER", "faketime '2020-01-01' INNER", "valgrind -q INNER", "ltrace INNER", "perf stat INNER",
		"hyperfine 'INNER'", "hyperfine --prepare 'INNER' 'true'", "tmux new -d 'INNER'", "screen -dm INNER",
		"direnv exec . INNER", "nix-shell --run 'INNER'", "sg grp 'INNER'", "sg grp -c 'INNER'",
		"dbus-run-session INNER", "cpulimit -l 50 INNER",
	}
	var cases []soundCase
	for _, f := range forms {
		cases = append(cases, soundCase{f, sh(strings.ReplaceAll(f, "INNER", "rm -rf src")), "deny"})
	}
	cases = append(cases,
		// What warden cannot read of them is a computed command.
		soundCase{"expect -c", sh("expect -c 'spawn ls'"), "notAllow"},
		soundCase{"gdb -ex shell", sh("gdb -batch -ex 'shell ls' ./prog"), "notAllow"},
		soundCase{"gdb -x FILE", sh("gdb -x cmds.gdb ./prog"), "notAllow"},
		soundCase{"parallel reading commands from its input", sh("parallel < cmds.txt"), "notAllow"},
		soundCase{"tmux send-keys", sh("tmux send-keys -t 0 'ls' Enter"), "notAllow"},
		soundCase{"fakeroot with an option it does not know", sh("fakeroot --frob ls"), "notAllow"},
		soundCase{"script without -c starts a shell", sh("script out.log"), "notAllow"},
		soundCase{"a protected path in the command", sh("setpriv --reset-env sh -c 'echo x > .git/config'"), "deny"},
		soundCase{"git submodule update", sh("git submodule update --init"), "notAllow"},
		// Controls: everyday uses stay allowed under default: allow.
		soundCase{"npm exec of a tool", sh("npm exec -- tsc --noEmit"), "allow"},
		soundCase{"uv run pytest", sh("uv run pytest -q"), "allow"},
		soundCase{"valgrind a test program", sh("valgrind -q --leak-check=full ./build/test"), "allow"},
		soundCase{"perf stat ls", sh("perf stat ls src"), "allow"},
		soundCase{"tmux ls", sh("tmux ls"), "allow"},
		soundCase{"git bisect log", sh("git bisect log"), "allow"},
		soundCase{"git submodule status", sh("git submodule status"), "allow"},
		soundCase{"gdb bt", sh("gdb -batch -ex bt ./prog core"), "allow"},
		soundCase{"hyperfine of a build", sh("hyperfine --warmup 1 'go build ./...'"), "allow"},
	)
	checkAllowDefault(t, cases)
}

// The premise, with the programs installed here: each runs the command it
// is given.
func TestRunnersRunTheirCommand(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"script -qc 'INNER' /dev/null", "setpriv INNER", "prlimit --nofile=1024 INNER",
		"fakeroot INNER", "dbus-run-session INNER", "zip -q -T -TT 'INNER' x.zip /etc/hostname"} {
		if _, err := exec.LookPath(strings.Fields(f)[0]); err != nil {
			continue
		}
		bashRunsInner(t, f)
	}
}
