//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
	"golang.org/x/sys/unix"
)

func loadPolicy(t *testing.T, dir, yaml string) *policy.Policy {
	t.Helper()
	write(t, filepath.Join(dir, "warden.yaml"), yaml, 0o644)
	p, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFromPolicy checks what a policy resolves to on disk: the protected
// paths that exist (a glob's folder whole), the private ones, the
// placeholders for missing host folders, and the writable folders.
func TestFromPolicy(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config/app.yaml", "secrets/key.pem", "deep/a/.env", ".env.local", "src/x.go", ".git/config", ".git/hooks/pre-push.sample", "cache/.keep", ".claude/settings.json"} {
		write(t, filepath.Join(dir, f), "x", 0o644)
	}
	p := loadPolicy(t, dir, "version: 1\nprotected: [\"config/**\", \"src/*.go\"]\nprivate: [\"secrets/**\", \"**/.env.*\"]\nsandbox: {shell: on, network: deny, ports: [5432], writable: [cache]}\n")
	s, err := sandbox.FromPolicy(p, "")
	if err != nil {
		t.Fatal(err)
	}
	in := func(list []string, rel string) bool { return slices.Contains(list, filepath.Join(dir, rel)) }
	for _, rel := range []string{"warden.yaml", "config", "src/x.go", ".git/config", ".git/hooks", ".claude", ".codex", ".gemini", ".opencode", ".warden"} {
		if !in(s.ReadOnly, rel) {
			t.Errorf("read-only lacks %s: %q", rel, s.ReadOnly)
		}
	}
	for _, rel := range []string{".codex", ".gemini", ".opencode", ".warden", ".git/info"} {
		if !in(s.Placeholders, rel) {
			t.Errorf("placeholders lack %s: %q", rel, s.Placeholders)
		}
	}
	if in(s.Placeholders, ".claude") || in(s.ReadOnly, "src") || in(s.ReadOnly, "cache") {
		t.Errorf("too much confined: read-only %q, placeholders %q", s.ReadOnly, s.Placeholders)
	}
	for _, rel := range []string{"secrets", "deep/a/.env", ".env.local"} {
		if !in(s.Hidden, rel) {
			t.Errorf("hidden lacks %s: %q", rel, s.Hidden)
		}
	}
	if !in(s.Writable, "cache") || !in(s.Writable, "") || !slices.Contains(s.Writable, "/tmp") {
		t.Errorf("writable = %q", s.Writable)
	}
	if !s.NetworkDeny || !slices.Equal(s.Ports, []int{5432}) || s.Required {
		t.Errorf("network %v ports %v required %v", s.NetworkDeny, s.Ports, s.Required)
	}
	// FromPolicy reads; it creates nothing.
	if _, err := os.Stat(filepath.Join(dir, ".codex")); err == nil {
		t.Error("FromPolicy created .codex")
	}
}

func TestFromPolicyMissingWorkspace(t *testing.T) {
	p := loadPolicy(t, t.TempDir(), "version: 1\n")
	_, err := sandbox.FromPolicy(p, "/nonexistent/warden-ws")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/warden-ws does not exist") {
		t.Fatalf("err = %v", err)
	}
}

// TestPlan checks what a run enforces on kernels that lack a mechanism:
// under required, an error that names what is missing and never a run;
// under on, warnings.
func TestPlan(t *testing.T) {
	full := sandbox.Kernel{LandlockABI: 7, UserNS: true}
	cases := []struct {
		name     string
		k        sandbox.Kernel
		required bool
		wantErr  string
		want     sandbox.Plan
		warnings []string
	}{
		{name: "full", k: full, want: sandbox.Plan{Landlock: 7, Mounts: true, Network: true, Scoped: true}},
		{name: "abi 3", k: sandbox.Kernel{LandlockABI: 3, UserNS: true}, want: sandbox.Plan{Landlock: 3, Mounts: true}, warnings: []string{"cannot restrict TCP"}},
		{name: "abi 3 required", k: sandbox.Kernel{LandlockABI: 3, UserNS: true}, required: true, wantErr: "cannot restrict TCP (ABI 4, Linux 6.7, is needed)"},
		{name: "no userns", k: sandbox.Kernel{LandlockABI: 7, UserNSNote: "AppArmor restricts unprivileged user namespaces"}, want: sandbox.Plan{Landlock: 7, Network: true, Scoped: true},
			warnings: []string{"user namespaces are not available (AppArmor restricts unprivileged user namespaces), so protected paths inside the workspace are writable"}},
		{name: "no userns required", k: sandbox.Kernel{LandlockABI: 7}, required: true, wantErr: "user namespaces are not available"},
		{name: "nothing", k: sandbox.Kernel{}, want: sandbox.Plan{}, warnings: []string{"no Landlock", "user namespaces are not available", "cannot restrict TCP"}},
		{name: "nothing required", k: sandbox.Kernel{}, required: true, wantErr: "Nothing was run"},
		{name: "macOS", k: sandbox.Kernel{OS: "darwin"}, warnings: []string{"cannot confine commands on darwin yet"}},
		{name: "macOS required", k: sandbox.Kernel{OS: "darwin"}, required: true, wantErr: "cannot confine commands on darwin yet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := sandbox.Spec{NetworkDeny: true, Required: c.required}
			plan, err := s.Plan(c.k)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.Landlock != c.want.Landlock || plan.Mounts != c.want.Mounts || plan.Network != c.want.Network || plan.Scoped != c.want.Scoped {
				t.Errorf("plan = %+v, want %+v", plan, c.want)
			}
			if len(plan.Warnings) != len(c.warnings) {
				t.Fatalf("warnings = %q, want %q", plan.Warnings, c.warnings)
			}
			for i, w := range c.warnings {
				if !strings.Contains(plan.Warnings[i], w) {
					t.Errorf("warning %d = %q, want %q", i, plan.Warnings[i], w)
				}
			}
			if plan.Confined() != (c.want.Landlock > 0 || c.want.Mounts) {
				t.Errorf("confined = %v", plan.Confined())
			}
		})
	}
}

// TestRunWardenGone: a warden binary that is not there fails the run
// with the setup code and an error; the program does not run.
func TestRunWardenGone(t *testing.T) {
	k := sandbox.Probe()
	if k.LandlockABI == 0 && !k.UserNS {
		t.Skip("nothing to confine with here")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	s := sandbox.Spec{Root: dir, Writable: []string{dir}}
	code, _, err := s.Run(context.Background(), filepath.Join(dir, "no-warden"), []string{"touch", marker})
	if code != sandbox.ExitSetup || err == nil || !strings.Contains(err.Error(), "start the sandbox") {
		t.Errorf("code %d, err %v", code, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran")
	}
}

// TestCLIFaults: bad input to `warden sandbox` gives a clear message and
// the setup exit code, and runs nothing.
func TestCLIFaults(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	write(t, filepath.Join(bad, "warden.yaml"), "version: 1\nsandbox:\n  shell: always\n", 0o644)
	good := filepath.Join(dir, "good")
	write(t, filepath.Join(good, "warden.yaml"), "version: 1\nsandbox: {shell: required}\n", 0o644)
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	marker := filepath.Join(dir, "ran")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing cwd", []string{"--cwd", "/nonexistent/ws", "--", "touch", marker}, sandbox.ExitSetup, "--cwd: stat /nonexistent/ws: no such file or directory; nothing was run"},
		{"no policy", []string{"--cwd", empty, "--", "touch", marker}, sandbox.ExitSetup, "no warden.yaml found"},
		{"bad policy", []string{"--cwd", bad, "--", "touch", marker}, sandbox.ExitSetup, "warden.yaml:3:10: error: sandbox.shell"},
		{"missing policy file", []string{"--policy", filepath.Join(dir, "nope.yaml"), "--", "touch", marker}, sandbox.ExitSetup, "nope.yaml"},
		{"no program", []string{"--cwd", good}, 1, "Usage: warden sandbox"},
		{"explain", []string{"--cwd", good, "--explain"}, 0, `"landlock_abi"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"sandbox"}, c.args...)...)
			cmd.Env = append(os.Environ(), cliEnv+"=1")
			cmd.Dir = dir
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(string(out), c.want) {
				t.Errorf("exit %d, want %d; output:\n%s\nwant it to contain %q", code, c.code, out, c.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the program ran")
			}
		})
	}
}

// TestSpecRunner runs payloads through the small helper with a spec
// written ahead (warden-sandbox --spec FILE), as a hook's rewrite would,
// and checks their effects; a benign write goes through.
func TestSpecRunner(t *testing.T) {
	needKernel(t)
	t.Parallel()
	f := newFixture(t, os.Geteuid())
	p, err := policy.Load(filepath.Join(f.ws, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.FromPolicy(p, "")
	if err != nil {
		t.Fatal(err)
	}
	file, err := s.WriteFile(filepath.Join(f.ws, ".warden", "sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(f.base, "warden-sandbox")
	if _, err := os.Stat(helper); err != nil {
		write(t, helper, string(helperBinary(t)), 0o755)
	}
	f.snapshot = f.protectedState(t)
	payloads := append([]payload{}, special[:12]...)
	for _, r := range writeRoutes[:8] {
		payloads = append(payloads, payload{r.name + " hook", `F=.git/hooks/pre-commit; ` + r.script})
	}
	for _, p := range payloads {
		denyBefore := f.deny.count.Load()
		cmd := f.command(helper, "--spec", file, "--cwd", f.ws, "--", "bash", "-c", p.script)
		cmd.Env = append(cmd.Env, "T="+f.tempDir(t, 0))
		out, _ := cmd.CombinedOutput()
		f.checkEffects(t, p.name, string(out), denyBefore)
	}
	cmd := f.command(helper, "--spec", file, "--cwd", f.ws, "--", "sh", "-c", "echo made > made.txt && cat .env")
	out, err := cmd.CombinedOutput()
	if b, _ := os.ReadFile(filepath.Join(f.ws, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("benign write through the spec: %v, %q\n%s", err, b, out)
	}
	f.checkEffects(t, "benign", string(out), f.deny.count.Load())
}

// TestNoTerminalInjection: a confined program whose stdin is the user's
// terminal cannot push input into it (TIOCSTI) to be run after it exits:
// it runs in a session of its own, or gives the terminal up, without a
// controlling terminal either way. The same program unconfined can (the
// check is live).
func TestNoTerminalInjection(t *testing.T) {
	needKernel(t)
	f := newFixture(t, os.Geteuid())
	script := "import fcntl, termios\nfor c in b'echo pwned\\n':\n    fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n"
	injected := func(argv ...string) string {
		ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			t.Skipf("no pseudo-terminals: %v", err)
		}
		defer ptmx.Close()
		if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
			t.Fatal(err)
		}
		n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
		if err != nil {
			t.Fatal(err)
		}
		tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append([]string(nil), f.env...)
		cmd.Dir = f.ws
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		// What is waiting in the terminal's input queue: what the user's
		// shell would read next.
		fd := int(tty.Fd()) // Fd makes the descriptor blocking: once
		unix.SetNonblock(fd, true)
		buf := make([]byte, 256)
		k, _ := unix.Read(fd, buf)
		return string(buf[:max(k, 0)])
	}
	if got := injected("python3", "-c", script); !strings.Contains(got, "pwned") {
		t.Skipf("TIOCSTI does not work here even unconfined (input queue %q)", got)
	}
	if got := injected(f.bin, "sandbox", "--cwd", f.ws, "--", "python3", "-c", script); strings.Contains(got, "pwned") {
		t.Errorf("the confined program pushed input into the terminal: %q", got)
	}
	// A hook's rewrite (unshare starting the runner, which confines
	// itself: it gives up the terminal instead of starting a session).
	// The line run by the shell itself (a session leader with the
	// terminal: the runner confines a child in a session of its own), and
	// by a child of the shell (the runner gives the terminal up).
	f.useHookRewrite(t)
	line := f.rewrite("python3 -c " + sandbox.Quote(script))
	for _, l := range []string{line, line + "; true"} {
		if got := injected("bash", "-c", l); strings.Contains(got, "pwned") {
			t.Errorf("the program confined by the hook's rewrite pushed input into the terminal: %q\n%s", got, l)
		}
	}
}

// TestRunTooLarge: a confinement too large for the child's environment
// fails with a message that says what to do; nothing runs.
func TestRunTooLarge(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	s := sandbox.Spec{Root: dir, Writable: []string{dir}, Required: true}
	for i := 0; i < 5000; i++ {
		s.ReadOnly = append(s.ReadOnly, filepath.Join(dir, fmt.Sprintf("protected-file-with-a-long-name-%06d", i)))
	}
	code, _, err := s.Run(context.Background(), "", []string{"touch", marker})
	if code != sandbox.ExitSetup || err == nil || !strings.Contains(err.Error(), "too large to hand to the confining child") {
		t.Errorf("code %d, err %v", code, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran")
	}
}

// TestChildOtherVersion: a confining child handed a confinement of
// another version (a stale warden-sandbox next to warden) runs nothing.
func TestChildOtherVersion(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	cmd := exec.Command(os.Args[0], "sandbox", sandbox.ChildArg, "--", "touch", marker)
	cmd.Env = append(os.Environ(), cliEnv+"=1", `WARDEN_SANDBOX_SPEC={"v":99,"root":"/","writable":["/"]}`)
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != sandbox.ExitSetup || !strings.Contains(string(out), "another version") {
		t.Errorf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran")
	}
}
