//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/cli"
	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/sandbox"
)

// The test binary is warden for these tests: with cliEnv set it runs
// warden's command line (`sandbox` included, and the confining child it
// re-executes itself as), so every payload goes through the real
// `warden sandbox`.
const cliEnv = "WARDEN_SANDBOX_TEST_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		if v := os.Getenv("WARDEN_TEST_HOST_SOCKET"); v != "" {
			sandbox.SetHostSockets([]string{v})
		}
		os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const nobody = 65534

var (
	helperOnce sync.Once
	helperData []byte
	helperErr  error
)

// helperBinary builds cmd/warden-sandbox once.
func helperBinary(t *testing.T) []byte {
	helperOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warden-sandbox-helper-")
		if err != nil {
			helperErr = err
			return
		}
		defer os.RemoveAll(dir)
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "warden-sandbox"), "../cmd/warden-sandbox")
		if out, err := cmd.CombinedOutput(); err != nil {
			helperErr = fmt.Errorf("go build ./cmd/warden-sandbox: %v\n%s", err, out)
			return
		}
		helperData, helperErr = os.ReadFile(filepath.Join(dir, "warden-sandbox"))
	})
	if helperErr != nil {
		t.Fatal(helperErr)
	}
	return helperData
}

// fixture is a scratch workspace with a real git repository, secrets in
// .env files, in a temporary HOME's .ssh and .aws and in a private
// folder, protected files, a folder outside every writable place, two
// loopback listeners (one on a port the policy allows) and an outside
// process holding a secret in its environment.
type fixture struct {
	uid      int // the user the sandbox runs as
	base     string
	bin      string
	ws       string
	home     string
	outside  string
	tmp      string
	secrets  []string
	allow    *listener
	deny     *listener
	sockets  []*listener // an ssh agent and a container engine stand-in
	helper   *exec.Cmd
	env      []string
	snapshot map[string]string
	// rewrite, when set, is the line a payload runs as (a hook's
	// rewrite of a call, with the payload in the call's place); else
	// payloads run through `warden sandbox`.
	rewrite func(script string) string
}

type listener struct {
	ln    net.Listener
	port  int
	count atomic.Int64
}

func listen(t *testing.T, network, addr string) *listener {
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{ln: ln}
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		l.port = a.Port
	} else {
		os.Chmod(addr, 0o777)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.count.Add(1)
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return l
}

func secret(label string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return "WARDEN-SECRET-" + label + "-" + hex.EncodeToString(b)
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := exectest.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func gitRun(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// newFixture builds the scratch world for a sandbox that runs as uid (0
// or nobody). It lives under /var/tmp, which is not writable confined.
func newFixture(t *testing.T, uid int, writable ...string) *fixture {
	t.Helper()
	return newFixtureHook(t, uid, false, writable...)
}

// newFixtureHook is newFixture whose payloads run, when hook is set, as
// a hook's rewrite of an allowed call runs (useHookRewrite).
func newFixtureHook(t *testing.T, uid int, hook bool, writable ...string) *fixture {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "warden-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	f := &fixture{uid: uid, base: base, ws: filepath.Join(base, "ws"), home: filepath.Join(base, "home"),
		outside: filepath.Join(base, "outside"), tmp: filepath.Join(base, "tmp"), bin: filepath.Join(base, "warden")}
	// A copy of the test binary anyone may run (go test's own folder is
	// private to root).
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	write(t, f.bin, string(self), 0o755)
	if uid == 0 || hook {
		// As root, the small helper lies next to warden and is the
		// confining child (as an installed warden has it); as nobody,
		// warden is its own child.
		write(t, filepath.Join(base, "warden-sandbox"), string(helperBinary(t)), 0o755)
	}

	f.allow = listen(t, "tcp4", "127.0.0.1:0")
	f.deny = listen(t, "tcp4", "127.0.0.1:0")
	agent, engine := filepath.Join(base, "agent.sock"), filepath.Join(base, "docker.sock")
	f.sockets = []*listener{listen(t, "unix", agent), listen(t, "unix", engine)}
	sEnv, sNested, sSSH, sAWS, sPriv, sHelper := secret("ENV"), secret("NESTED"), secret("SSH"), secret("AWS"), secret("PRIVATE"), secret("HELPER")
	f.secrets = []string{sEnv, sNested, sSSH, sAWS, sPriv, sHelper}

	write(t, filepath.Join(f.ws, "warden.yaml"), fmt.Sprintf(`version: 1
default: ask
protected: ["config/**"]
private: ["secrets/**"]
sandbox:
  shell: required
  network: deny
  ports: [%d]
  writable: [%s]
`, f.allow.port, strings.Join(writable, ", ")), 0o644)
	write(t, filepath.Join(f.ws, ".env"), "API_TOKEN="+sEnv+"\n", 0o600)
	write(t, filepath.Join(f.ws, "app", ".env"), "DB_PASSWORD="+sNested+"\n", 0o600)
	write(t, filepath.Join(f.ws, "secrets", "token.txt"), sPriv+"\n", 0o600)
	write(t, filepath.Join(f.ws, "config", "app.yaml"), "debug: false\n", 0o644)
	write(t, filepath.Join(f.ws, ".claude", "settings.json"), `{"hooks":{}}`+"\n", 0o644)
	write(t, filepath.Join(f.ws, "src", "main.txt"), "hello\n", 0o644)
	write(t, filepath.Join(f.home, ".ssh", "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\n"+sSSH+"\n-----END OPENSSH PRIVATE KEY-----\n", 0o600)
	write(t, filepath.Join(f.home, ".aws", "credentials"), "[default]\naws_secret_access_key = "+sAWS+"\n", 0o600)
	write(t, filepath.Join(f.home, ".bashrc"), "# bashrc\n", 0o644)
	write(t, filepath.Join(f.outside, "target.txt"), "outside\n", 0o644)
	if err := os.MkdirAll(f.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	f.env = []string{"PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin", "HOME=" + f.home, "TMPDIR=" + f.tmp, "LANG=C.UTF-8",
		cliEnv + "=1", "WS=" + f.ws, "OUT=" + f.outside, "T=" + f.tmp,
		"SSH_AUTH_SOCK=" + agent, "AGENT=" + agent, "WARDEN_TEST_HOST_SOCKET=" + engine, "ENGINE=" + engine,
		"ALLOW_PORT=" + strconv.Itoa(f.allow.port), "DENY_PORT=" + strconv.Itoa(f.deny.port),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	gitRun(t, f.ws, f.env, "init", "-q", "-b", "main")
	write(t, filepath.Join(f.ws, ".gitignore"), ".env\nsecrets/\n", 0o644)
	gitRun(t, f.ws, f.env, "add", ".")
	gitRun(t, f.ws, f.env, "commit", "-qm", "first")
	if uid != 0 {
		for _, d := range []string{f.ws, f.home, f.outside, f.tmp} {
			filepath.WalkDir(d, func(p string, _ fs.DirEntry, _ error) error { return os.Lchown(p, uid, uid) })
		}
	}
	// The outside process: same user as the sandbox, a secret in its
	// environment.
	f.helper = f.command("sleep", "3600")
	f.helper.Env = append(f.helper.Env, "HELPER_SECRET="+sHelper)
	if err := f.helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.helper.Process.Kill(); f.helper.Wait() })
	f.env = append(f.env, "HELPER_PID="+strconv.Itoa(f.helper.Process.Pid))
	if hook {
		f.useHookRewrite(t)
	}
	// A first run creates the protected placeholders (.codex, ...).
	if out, code := f.run(t, "true"); code != 0 {
		t.Fatalf("warden sandbox -- true: exit %d\n%s", code, out)
	}
	f.snapshot = f.protectedState(t)
	return f
}

// command runs argv as the fixture's user.
func (f *fixture) command(argv ...string) *exec.Cmd {
	if f.uid != os.Geteuid() {
		argv = append([]string{"setpriv", "--reuid", strconv.Itoa(f.uid), "--regid", strconv.Itoa(f.uid), "--clear-groups", "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string(nil), f.env...)
	cmd.Dir = f.ws
	return cmd
}

// run runs a bash script through `warden sandbox` in the workspace and
// returns its output (stdout and stderr) and exit code.
func (f *fixture) run(t *testing.T, script string, env ...string) (string, int) {
	t.Helper()
	cmd := f.command(f.bin, "sandbox", "--cwd", f.ws, "--", "bash", "-c", script)
	if f.rewrite != nil {
		cmd = f.command("bash", "-c", f.rewrite(script))
	}
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
		<-done
		t.Fatalf("payload still running after 5 minutes: %s", script)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// useHookRewrite makes f's payloads run as a hook's rewrite of an
// allowed shell call runs them: warden's Claude Code hook decides a call
// in the workspace, and each payload takes the call's place in the line
// it answers with. Where unshare can start the runner (sandbox.Unshare),
// that line must be RewriteInside's.
func (f *fixture) useHookRewrite(t *testing.T) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"session_id": "corpus", "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "true"}, "cwd": f.ws})
	cmd := f.command(f.bin, "hook", "claude")
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	var ans struct {
		Out struct {
			UpdatedInput struct {
				Command string `json:"command"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err != nil || json.Unmarshal(out, &ans) != nil {
		t.Fatalf("warden hook claude: %v\n%s", err, out)
	}
	line := ans.Out.UpdatedInput.Command
	if u := sandbox.Unshare(); u != "" && !strings.HasPrefix(line, sandbox.Quote(u)+" ") {
		t.Fatalf("the hook's rewrite does not start the runner with %s:\n%s", u, line)
	}
	if inner, ok := sandbox.Unwrap(f.bin, "", line); !ok || inner != "true" {
		t.Fatalf("the hook's answer is not a rewrite of the call:\n%s", out)
	}
	head := strings.TrimSuffix(line, sandbox.Quote("true"))
	f.rewrite = func(script string) string { return head + sandbox.Quote(script) }
}

// tempDir returns the n-th scratch folder under the fixture's TMPDIR,
// owned by the fixture's user.
func (f *fixture) tempDir(t *testing.T, n int) string {
	d := filepath.Join(f.tmp, strconv.Itoa(n))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Error(err)
	}
	os.Chown(d, f.uid, f.uid)
	return d
}

// protectedState is the exact state of everything no confined command
// may change: the protected paths, the private files, the outside folder
// and the home folder (kind, mode, size, link target, content hash).
func (f *fixture) protectedState(t *testing.T) map[string]string {
	st := map[string]string{}
	roots := []string{
		filepath.Join(f.ws, "warden.yaml"), filepath.Join(f.ws, ".git", "config"), filepath.Join(f.ws, ".git", "hooks"),
		filepath.Join(f.ws, ".git", "info"), filepath.Join(f.ws, ".claude"), filepath.Join(f.ws, ".codex"),
		filepath.Join(f.ws, ".gemini"), filepath.Join(f.ws, ".opencode"), filepath.Join(f.ws, ".warden"),
		filepath.Join(f.ws, "config"), filepath.Join(f.ws, ".env"), filepath.Join(f.ws, "app", ".env"),
		filepath.Join(f.ws, "secrets"), f.home, f.outside,
	}
	for _, r := range roots {
		filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				st[p] = "missing"
				return nil
			}
			info, err := os.Lstat(p)
			if err != nil {
				st[p] = "missing"
				return nil
			}
			v := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
			switch {
			case info.Mode()&os.ModeSymlink != 0:
				to, _ := os.Readlink(p)
				v += " -> " + to
			case info.Mode().IsRegular():
				b, _ := os.ReadFile(p)
				sum := sha256.Sum256(b)
				v += " " + hex.EncodeToString(sum[:8])
			}
			if sys, ok := info.Sys().(*syscall.Stat_t); ok {
				v += fmt.Sprintf(" ino=%d nlink=%d uid=%d", sys.Ino, sys.Nlink, sys.Uid)
			}
			st[p] = v
			return nil
		})
	}
	return st
}

// checkEffects fails the test when anything protected changed, a secret
// is in the output or in any file a confined command could have written,
// the denied listener got a connection, or the outside process died.
func (f *fixture) checkEffects(t *testing.T, name, out string, denyBefore int64) {
	t.Helper()
	now := f.protectedState(t)
	var diffs []string
	for p, v := range now {
		if f.snapshot[p] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %q, was %q", p, v, f.snapshot[p]))
		}
	}
	for p, v := range f.snapshot {
		if _, ok := now[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: gone, was %q", p, v))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: protected state changed:\n  %s\noutput:\n%s", name, strings.Join(diffs, "\n  "), out)
		f.snapshot = now // report each change once
	}
	for _, s := range f.secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s: a secret reached the output:\n%s", name, out)
		}
	}
	skip := map[string]bool{filepath.Join(f.ws, ".env"): true, filepath.Join(f.ws, "app", ".env"): true}
	for _, root := range []string{f.ws, f.tmp} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || skip[p] || strings.HasPrefix(p, filepath.Join(f.ws, "secrets")+"/") {
				return nil
			}
			if info, err := d.Info(); err != nil || !info.Mode().IsRegular() {
				return nil
			}
			fh, err := os.Open(p)
			if err != nil {
				return nil
			}
			b, _ := io.ReadAll(io.LimitReader(fh, 16<<20))
			fh.Close()
			for _, s := range f.secrets {
				if bytes.Contains(b, []byte(s)) {
					t.Errorf("%s: a secret was written to %s", name, p)
				}
			}
			return nil
		})
	}
	for _, l := range f.sockets {
		if n := l.count.Load(); n != 0 {
			t.Errorf("%s: the socket %s got %d connection(s)\noutput:\n%s", name, l.ln.Addr(), n, out)
			l.count.Store(0)
		}
	}
	if n := f.deny.count.Load(); n != denyBefore {
		t.Errorf("%s: the denied port got %d connection(s)\noutput:\n%s", name, n-denyBefore, out)
	}
	if err := f.helper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("%s: the outside process was killed: %v", name, err)
	}
}
