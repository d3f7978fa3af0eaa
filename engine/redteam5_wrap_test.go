package engine_test

import (
	"strings"
	"testing"
)

// The fifth red-team pass, continued: the wrappers the shell package sees
// through (shell/wrap.go), read against the programs themselves on Debian
// 12 (findutils 4.9.0, coreutils 9.1, util-linux 2.38.1, procps-ng 4.0.2,
// sudo 1.9.13, OpenDoas 6.8.2, GNU time 1.9, strace 6.1). Under
// wrap5Policy the wrappers are allowed too. Each case under "Findings"
// was allowed, or missed by the deny rules, before its fix; the "Allowed"
// cases keep the common forms allowed. The default for destructive calls
// is ask: a "deny" is the deny of a protected path, which only a reading
// of the real command finds.

var wrap5Policy = strings.NewReplacer(`"unexpand *"]`,
	`"unexpand *", "flock *", "runuser *", "su *", "watch *", "chroot *", "doas *", "time *", "strace *", "chrt *", "ionice *", "taskset *", "setsid *"]`,
	"destructive: deny", "destructive: ask").Replace(progs5Policy)

func checkWrap5(t *testing.T, cases []soundCase) {
	t.Helper()
	if wrap5Policy == progs5Policy {
		t.Fatal("wrap5Policy did not extend progs5Policy")
	}
	checkSoundPolicy(t, wrap5Policy, cases)
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

// A pattern that names an option's value matches only that value: an
// allow for `kubectl apply --dry-run=client *` does not allow another
// value, two values of which one is another, or a computed one; a deny
// for one value meets that value and a computed one. Before, option values
// were not compared at all.
func TestRedteam5PatternOptionValues(t *testing.T) {
	t.Parallel()
	// default: ask, so that a read-only git log (kind safe under
	// {safe: allow}) is decided by the rules alone.
	const pol = `version: 1
default: ask
rules:
  - id: no-lease-main
    effect: deny
    tool: shell
    command: ["git push --force-with-lease=main *"]
    message: Do not force main.
    suggestion: Push a branch.
  - id: allow
    effect: allow
    tool: shell
    command: ["kubectl apply --dry-run=client *", "git log --format=oneline *", "go test -run Test* *", "git push *", "go vet *"]
`
	checkSoundPolicy(t, pol, []soundCase{
		// Findings (kubectl's --dry-run values were refused by its table
		// already; any other program's were not compared).
		{"a glob on the value", sh("go test -run Bench ./..."), "notAllow"},
		{"a format", sh("git log --format=%H"), "notAllow"},
		// Handled by kubectl's table, and by the values now.
		{"handled: another value", sh("kubectl apply --dry-run=none -f src/x.yaml"), "notAllow"},
		{"handled: a second value", sh("kubectl apply --dry-run=client --dry-run=none -f src/x.yaml"), "notAllow"},
		{"handled: a computed value", sh(`kubectl apply --dry-run="$m" -f src/x.yaml`), "notAllow"},
		// A deny for one value.
		{"the denied value", sh("git push --force-with-lease=main origin"), "deny"},
		{"a computed value meets the deny", sh(`git push --force-with-lease="$b" origin`), "deny"},
		// Allowed.
		{"the value named", sh("kubectl apply --dry-run=client -f src/x.yaml"), "allow"},
		{"the value as a separate word", sh("go test -run TestX ./..."), "allow"},
		{"the glob matches", sh("go test -run 'TestA|TestB' ./..."), "allow"},
		{"the format named", sh("git log --format=oneline -3"), "allow"},
		// Found too: a deny for one value met every value.
		{"another value, not denied", sh("git push --force-with-lease=dev origin"), "allow"},
		{"no value named in the rule", sh("go vet -vettool=x ./..."), "notAllow"},
	})
}
