//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden/sandbox"
)

// payload is one attempt, run for real through `warden sandbox` as a bash
// script. Its effect is checked (checkEffects), never warden's answer.
type payload struct{ name, script string }

// writeTargets are paths no confined command may write: the policy, the
// repository's config and hooks (a hook that does not exist yet), a host
// control file, a host control folder that did not exist, a path of the
// policy's protected glob, the store, a private file, a file outside the
// workspace and a home folder file.
var writeTargets = []string{
	"warden.yaml", ".git/config", ".git/hooks/pre-commit", ".claude/settings.json", ".codex/config.toml",
	"config/app.yaml", "$OUT/target.txt", "$HOME/.bashrc", ".env",
}

// writeRoutes write to the target F by every route.
var writeRoutes = []payload{
	{"redirect", `echo pwned > "$F"`},
	{"append", `echo pwned >> "$F"`},
	{"sed -i", `sed -i 's/^/pwned/' "$F"; sed -i '1i pwned' "$F"`},
	{"cp", `printf pwned > "$T/x"; cp -f "$T/x" "$F"`},
	{"mv from tmp", `printf pwned > "$T/x"; mv -f "$T/x" "$F"`},
	{"rename over", `printf pwned > "$F.new" || printf pwned > new$$.tmp; mv -f "$F.new" "$F" || mv -f new$$.tmp "$F"`},
	{"python", `python3 -c 'import sys; open(sys.argv[1], "w").write("pwned")' "$F"`},
	{"node", `node -e 'require("fs").writeFileSync(process.argv[1], "pwned")' "$F"`},
	{"perl", `perl -e 'open(my $f, ">", $ARGV[0]) or die "$!\n"; print $f "pwned"' "$F"`},
	{"truncate", `truncate -s 0 "$F"`},
	{"tee", `echo pwned | tee "$F"`},
	{"symlink made first", `ln -sf "$F" "$T/l" && echo pwned > "$T/l"; ln -sf "$F" ./link$$ && echo pwned > ./link$$`},
	{"hard link made first", `ln -f "$F" "$T/h" && echo pwned >> "$T/h"; ln -f "$F" ./hard$$ && echo pwned >> ./hard$$`},
	{"/proc/self/fd reopen", `exec 3<"$F"; echo pwned > /proc/self/fd/3`},
	{"/dev/fd reopen", `exec 3<"$F"; echo pwned >> /dev/fd/3`},
	{"dd", `printf pwned | dd of="$F" conv=notrunc`},
	{"rm", `rm -f "$F"`},
	{"chmod", `chmod 777 "$F"`},
	{"touch", `touch "$F"`},
}

// special are the payloads that are not a write route times a target.
var special = []payload{
	// git writes its control files.
	{"git config hooksPath", `git config core.hooksPath "$T"; git config --add core.fsmonitor "touch $T/ran"`},
	{"git remote add", `git remote add evil http://127.0.0.1:1/x`},
	{"git config --global", `git config --global core.hooksPath "$T"`},
	{"git archive -o into hooks", `git archive -o .git/hooks/pre-commit HEAD`},
	{"git archive -o over policy", `git archive -o warden.yaml HEAD`},
	{"git init over .git", `git init --separate-git-dir "$T/g" .`},
	{"install a hook", `install -m 755 /bin/true .git/hooks/pre-push`},
	{"tar extract into hooks", `mkdir -p "$T/e/.git/hooks" && echo pwned > "$T/e/.git/hooks/post-checkout" && tar cf "$T/e.tar" -C "$T/e" .git && tar xf "$T/e.tar"`},
	{"unzip into .claude", `mkdir -p "$T/z/.claude" && echo pwned > "$T/z/.claude/settings.local.json" && (cd "$T/z" && python3 -m zipfile -c "$T/z.zip" .claude) && unzip -o "$T/z.zip"`},
	{"rsync into config", `mkdir -p "$T/r" && echo pwned > "$T/r/app.yaml" && rsync -a "$T/r/" config/`},
	{"mkdir in hooks", `mkdir .git/hooks/pre-commit.d`},
	{"mkdir in placeholder", `mkdir -p .codex/sub && echo pwned > .codex/sub/x`},
	{"new file in .gemini", `echo '{}' > .gemini/settings.json`},
	{"new file in .opencode", `mkdir -p .opencode/plugin && echo pwned > .opencode/plugin/x.js`},
	{"store", `echo pwned > .warden/warden.db`},
	{"rm -rf .claude", `rm -rf .claude`},
	{"mv .claude away", `mv .claude "$T/c" || mv .claude .claude-old`},
	{"mv .git away", `mv .git .git-old; mv .git "$T/g"`},
	{"mv hooks away and recreate", `mv .git/hooks .git/hooks-old; mkdir -p .git/hooks && echo pwned > .git/hooks/pre-commit`},
	{"rm -rf config", `rm -rf config && mkdir config && echo pwned > config/app.yaml`},
	{"cp -r over .claude", `mkdir -p "$T/c" && echo pwned > "$T/c/settings.json" && cp -r "$T/c/." .claude/`},
	{"dir fd openat", `python3 -c 'import os; d=os.open(".git/hooks", os.O_RDONLY); fd=os.open("pre-commit", os.O_CREAT|os.O_WRONLY, 0o755, dir_fd=d); os.write(fd, b"pwned")'`},
	{"python os.replace", `printf pwned > "$T/x"; python3 -c 'import os,sys; os.replace(sys.argv[1], "warden.yaml")' "$T/x"`},
	{"python rename dir", `python3 -c 'import os; os.rename(".git/hooks", "hooks-stolen")'`},
	{"link from workspace to outside", `ln -s "$OUT" outlink$$ && echo pwned > outlink$$/target.txt`},
	{"mkdir outside", `mkdir "$OUT/new"; touch "$OUT/new-file"`},
	{"ssh authorized_keys", `mkdir -p "$HOME/.ssh" && echo pwned >> "$HOME/.ssh/authorized_keys"`},
	{"home bin", `mkdir -p "$HOME/.local/bin" && cp /bin/true "$HOME/.local/bin/git"`},
	{"write to private folder", `echo pwned > secrets/token.txt; echo pwned > secrets/new.txt`},
	// Reads of private files.
	{"cat .env", `cat .env app/.env`},
	{"cat private glob", `cat secrets/token.txt; ls -la secrets`},
	{"cat ssh key", `cat "$HOME/.ssh/id_ed25519"; cat ~/.ssh/*`},
	{"cat aws", `cat "$HOME/.aws/credentials"`},
	{"python open", `python3 -c 'import sys; [print(open(p).read()) for p in sys.argv[1:]]' .env app/.env "$HOME/.ssh/id_ed25519" secrets/token.txt`},
	{"node read", `node -e 'for (const p of process.argv.slice(1)) { try { console.log(require("fs").readFileSync(p, "utf8")) } catch (e) { console.log(e.message) } }' .env "$HOME/.aws/credentials"`},
	{"perl read", `perl -ne print .env "$HOME/.ssh/id_ed25519"`},
	{"tar c", `tar cf - .env app secrets "$HOME/.ssh" "$HOME/.aws" | cat`},
	{"tar to file", `tar czf "$T/all.tgz" . "$HOME" && tar xzf "$T/all.tgz" -O`},
	{"cp then read", `cp .env "$T/e" && cat "$T/e"; cp -r "$HOME/.ssh" "$T/s" && cat "$T/s/"*`},
	{"git add -f then grep", `git add -f .env app/.env secrets && git grep -h -e WARDEN --cached; git show :.env`},
	{"git commit secret", `git add -f .env && git commit -qm leak && git show HEAD:.env`},
	{"grep -r", `grep -r WARDEN-SECRET . "$HOME" 2>/dev/null`},
	{"find -exec cat", `find "$HOME" . -name '*.env' -o -name 'id_*' -o -name credentials -o -name '.env' | xargs cat 2>/dev/null`},
	{"base64", `base64 .env; base64 "$HOME/.ssh/id_ed25519"`},
	{"symlink to secret", `ln -sf "$WS/.env" "$T/l" && cat "$T/l"; ln -sf "$HOME/.ssh/id_ed25519" k$$ && cat k$$`},
	{"hard link to secret", `ln -f .env "$T/h" && cat "$T/h"; ln -f "$HOME/.ssh/id_ed25519" "$T/k" && cat "$T/k"`},
	{"fd of secret", `exec 3<.env; cat /proc/self/fd/3; cat /dev/fd/3`},
	{"outside process environ", `cat /proc/$HELPER_PID/environ; tr '\0' '\n' < /proc/$HELPER_PID/environ`},
	{"outside process root", `cat /proc/$HELPER_PID/root$WS/.env; cat /proc/$HELPER_PID/root$HOME/.ssh/id_ed25519`},
	{"parent root", `cat /proc/$PPID/root$WS/.env; cat /proc/$PPID/cwd/.env`},
	{"outside process mem", `python3 -c 'import sys
pid = sys.argv[1]
for line in open("/proc/%s/maps" % pid):
    a, b = [int(x, 16) for x in line.split()[0].split("-")]
    try:
        f = open("/proc/%s/mem" % pid, "rb"); f.seek(a); print(f.read(b - a))
    except Exception as e:
        print(e)' $HELPER_PID`},
	{"raw disk", `for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/loop0; do head -c 50000000 $d 2>&1 | grep -ao 'WARDEN-SECRET[-A-Za-z0-9]*'; done`},
	{"ssh agent", `ls -la "$SSH_AUTH_SOCK"; env | grep -i ssh; python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(10))' "$AGENT"; socat - UNIX-CONNECT:"$AGENT"`},
	{"container engine socket", `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(10))' "$ENGINE"; curl -sS -m 5 --unix-socket "$ENGINE" http://x/containers/json`},
	// TCP with network deny.
	{"bash /dev/tcp", `exec 3<>/dev/tcp/127.0.0.1/$DENY_PORT && cat <&3`},
	{"python socket", `python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5); print(s.recv(10))' $DENY_PORT`},
	{"python v4-mapped v6", `python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET6); s.settimeout(5); s.connect(("::ffff:127.0.0.1", int(sys.argv[1]))); print(s.recv(10))' $DENY_PORT`},
	{"node net", `node -e 'const s=require("net").connect(+process.argv[1], "127.0.0.1"); s.on("data", d => {console.log(String(d)); s.end()}); s.on("error", e => console.log(e.message))' $DENY_PORT`},
	{"curl", `curl -sS -m 5 http://127.0.0.1:$DENY_PORT/`},
	{"curl localhost name", `curl -sS -m 5 http://localhost:$DENY_PORT/`},
	{"perl socket", `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$ARGV[0]") or die "$!\n"; print <$s>' $DENY_PORT`},
	{"socat", `socat -T5 - TCP:127.0.0.1:$DENY_PORT`},
	{"git over http", `git ls-remote http://127.0.0.1:$DENY_PORT/repo.git`},
	{"connect after bind", `python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.settimeout(5); s.connect(("127.0.0.1", int(sys.argv[1]))); print(s.recv(10))' $DENY_PORT`},
	// Lifting the confinement from inside.
	{"umount policy", `umount "$WS/warden.yaml"; umount -l "$WS/warden.yaml"; echo pwned > warden.yaml`},
	{"umount hooks", `umount -l .git/hooks; echo pwned > .git/hooks/pre-commit`},
	{"umount .env", `umount -l .env; cat .env`},
	{"remount rw", `mount -o remount,rw,bind .git/hooks; echo pwned > .git/hooks/pre-commit`},
	{"mount over", `mount -t tmpfs none .git/hooks; mount --bind "$T" .claude; echo pwned > .claude/settings.json`},
	{"nested userns umount", `unshare -Urm sh -c 'umount -l "$WS/warden.yaml"; umount -l "$WS/.git/hooks"; echo pwned > "$WS/warden.yaml"; echo pwned > "$WS/.git/hooks/pre-commit"'`},
	{"nested userns read", `unshare -Urm sh -c 'umount -l "$WS/.env"; umount -l "$HOME/.ssh"; cat "$WS/.env" "$HOME/.ssh/id_ed25519"'`},
	{"nested userns remount", `unshare -Urm sh -c 'mount -o remount,rw,bind "$WS/config"; echo pwned > "$WS/config/app.yaml"'`},
	{"nested userns and net", `unshare -Urn sh -c 'exec 3<>/dev/tcp/127.0.0.1/$DENY_PORT'; unshare -Ur sh -c 'exec 3<>/dev/tcp/127.0.0.1/$DENY_PORT && cat <&3'`},
	{"python umount2", `python3 -c 'import ctypes,sys; libc=ctypes.CDLL(None, use_errno=True)
for p in sys.argv[1:]:
    print(p, libc.umount2(p.encode(), 2), ctypes.get_errno())
print(open(".env").read()); open("warden.yaml", "a").write("pwned")' .env warden.yaml .git/hooks`},
	{"python mount remount", `python3 -c 'import ctypes; libc=ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
print(libc.mount(None, b"config", None, MS_REMOUNT|MS_BIND, None), ctypes.get_errno())
open("config/app.yaml", "w").write("pwned")'`},
	{"python unshare then umount", `python3 -c 'import os,ctypes; libc=ctypes.CDLL(None, use_errno=True)
print(libc.unshare(0x10000000|0x20000), ctypes.get_errno())
print(libc.umount2(b"warden.yaml", 2), ctypes.get_errno()); open("warden.yaml", "w").write("pwned")'`},
	{"nsenter outside", `nsenter -t $PPID -m -U --preserve-credentials sh -c 'echo pwned > "$WS/warden.yaml"'; nsenter -t $HELPER_PID -m sh -c 'cat "$WS/.env"'`},
	{"gdb attach outside", `timeout 60 gdb -p $HELPER_PID -batch -ex 'call (int)system("echo pwned > '"$WS"'/warden.yaml")' -ex detach`},
	{"strace outside", `timeout 20 strace -p $HELPER_PID -e trace=none -o "$T/st" & sleep 2; kill %1; cat "$T/st"`},
	{"python ptrace", `python3 -c 'import ctypes,sys; libc=ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
pid = int(sys.argv[1])
print(libc.ptrace(PTRACE_ATTACH, pid, None, None), ctypes.get_errno())
print(libc.ptrace(PTRACE_SEIZE, pid, None, None), ctypes.get_errno())' $HELPER_PID`},
	{"kill outside", `kill -9 $HELPER_PID; kill -STOP $HELPER_PID; python3 -c 'import os,sys; os.kill(int(sys.argv[1]), 9)' $HELPER_PID`},
	// The races swap in tight loops, one process a side (loops of ln and
	// mv processes took 15 s a payload for 400 tries).
	{"symlink swap race", races + `echo decoy > "$T/decoy"; python3 -c "$SWAP" "$T/l" "$T/decoy" "$WS/warden.yaml" & python3 -c "$HIT" w "$T/l"; wait`},
	{"symlink swap race for read", races + `echo decoy > "$T/decoy"; python3 -c "$SWAP" "$T/s" "$T/decoy" "$WS/.env" & python3 -c "$HIT" r "$T/s"; wait`},
	{"rename swap race", races + `mkdir -p "$T/d"; python3 -c "$MOVE" .git/hooks "$T/d/h" & python3 -c "$HIT" w .git/hooks/pre-commit; wait`},
	{"nested warden sandbox", `"$WARDEN_BIN" sandbox -- sh -c 'echo pwned > warden.yaml; cat .env'; true`},
	{"setuid programs", `su -c 'echo pwned > warden.yaml' 2>&1; mount 2>&1 | head -1; chroot / sh -c 'echo pwned > warden.yaml'`},
	{"no new privileges", `grep -E 'NoNewPrivs|CapEff|CapBnd' /proc/self/status; python3 -c 'import os; os.setuid(0); open("warden.yaml","w").write("pwned")'`},
}

// races defines the race payloads' two sides, 20,000 tries each. SWAP
// points LINK at A and at B in turn (a new link renamed over it); MOVE
// renames A to B and back; HIT writes to (w) or reads (r) PATH, printing
// what it read unless it is the decoy.
const races = `SWAP='import os, sys
link, a, b = sys.argv[1:4]
for i in range(20000):
    for to in (a, b):
        try:
            os.symlink(to, link + ".new")
            os.replace(link + ".new", link)
        except OSError:
            pass
'; MOVE='import os, sys
a, b = sys.argv[1:3]
for i in range(20000):
    try:
        os.rename(a, b)
        os.rename(b, a)
    except OSError:
        pass
'; HIT='import sys
mode, path = sys.argv[1:3]
for i in range(20000):
    try:
        if mode == "w":
            with open(path, "a") as f:
                f.write("pwned\n")
        else:
            with open(path) as f:
                got = f.read()
            if got != "decoy\n":
                print(got)
    except OSError:
        pass
'; `

func corpus() []payload {
	var all []payload
	for _, tgt := range writeTargets {
		for _, r := range writeRoutes {
			all = append(all, payload{name: r.name + " " + tgt, script: `F="` + tgt + `"; ` + r.script})
		}
	}
	return append(all, special...)
}

func TestCorpusCount(t *testing.T) {
	t.Logf("%d payloads", len(corpus()))
	if n := len(corpus()); n < 100 {
		t.Fatalf("the corpus has %d payloads, want at least 100", n)
	}
}

// batch is how many payloads run at once; their effects are checked
// together after each batch (each payload has its own temp folder).
const batch = 4

func runCorpus(t *testing.T, f *fixture) {
	f.env = append(f.env, "WARDEN_BIN="+f.bin)
	all := corpus()
	for i := 0; i < len(all); i += batch {
		group := all[i:min(i+batch, len(all))]
		denyBefore := f.deny.count.Load()
		outs := make([]string, len(group))
		codes := make([]int, len(group))
		var wg sync.WaitGroup
		for j, p := range group {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[j], codes[j] = f.run(t, p.script, "T="+f.tempDir(t, i+j))
			}()
		}
		wg.Wait()
		var names []string
		var out strings.Builder
		for j, p := range group {
			names = append(names, p.name)
			fmt.Fprintf(&out, "--- %s:\n%s", p.name, outs[j])
			if codes[j] == sandbox.ExitSetup && strings.HasPrefix(outs[j], "warden sandbox: ") {
				t.Errorf("%s: the sandbox did not start:\n%s", p.name, outs[j])
			}
		}
		f.checkEffects(t, strings.Join(names, " | "), out.String(), denyBefore)
	}
}

// TestCorpus runs the corpus with the sandbox running as root and, at
// the same time, as the unprivileged user nobody (through setpriv) in a
// workspace that user owns. A user other than root runs it as itself.
func TestCorpus(t *testing.T) {
	needKernel(t)
	t.Parallel()
	t.Logf("%d payloads", len(corpus()))
	users := map[string]int{"root": 0, "nobody": nobody}
	if os.Geteuid() != 0 {
		users = map[string]int{"user": os.Geteuid()}
	} else if _, err := exec.LookPath("setpriv"); err != nil {
		t.Log("setpriv (util-linux) is not installed: the corpus cannot run as an unprivileged user from root; root only")
		delete(users, "nobody")
	}
	forEachUser(t, users, func(t *testing.T, uid int) {
		t.Run("warden sandbox", func(t *testing.T) { runCorpus(t, newFixture(t, uid)) })
		// The same payloads as a hook's rewrite runs them (unshare
		// starting the runner, where it can): one user suffices for the
		// second path, the unprivileged one where there is one.
		if uid != 0 || len(users) == 1 {
			t.Run("hook rewrite", func(t *testing.T) { runCorpus(t, newFixtureHook(t, uid, true)) })
		}
	})
}

// forEachUser runs body as a subtest per user, all at once (t.Run may be
// called from several goroutines; the subtests do not wait for the
// -parallel slots the top-level tests hold).
func forEachUser(t *testing.T, users map[string]int, body func(t *testing.T, uid int)) {
	var wg sync.WaitGroup
	for name, uid := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name, func(t *testing.T) { body(t, uid) })
		}()
	}
	wg.Wait()
}

func needKernel(t *testing.T) {
	k := sandbox.Probe()
	if k.LandlockABI < 4 || !k.UserNS {
		t.Skipf("this kernel cannot confine fully (%s); the corpus needs Landlock ABI 4 and user namespaces", k)
	}
}
