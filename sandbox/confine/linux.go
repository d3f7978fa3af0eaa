//go:build linux

package confine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Probe reports what the running kernel offers. It reads a few files
// under /proc and asks Landlock its version; it starts no process.
func Probe() Kernel {
	k := probeKernel()
	if p, err := exec.LookPath("bwrap"); err == nil {
		k.Bwrap = p
	}
	return k
}

func probeKernel() Kernel {
	var k Kernel
	if v, err := landlockABI(); err == nil {
		k.LandlockABI = v
	}
	k.UserNS, k.UserNSNote = userNSAvailable()
	return disabled(k, os.Getenv(DisableEnv))
}

func landlockABI() (int, error) {
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func readInt(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return v, err == nil
}

// userNSAvailable checks the switches distributions use to turn user
// namespaces off. A run that still fails to create one says so.
func userNSAvailable() (bool, string) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return false, "the kernel has no user namespaces"
	}
	if v, ok := readInt("/proc/sys/user/max_user_namespaces"); ok && v == 0 {
		return false, "user.max_user_namespaces is 0"
	}
	if os.Geteuid() != 0 {
		if v, ok := readInt("/proc/sys/kernel/unprivileged_userns_clone"); ok && v == 0 {
			return false, "kernel.unprivileged_userns_clone is 0"
		}
		if v, ok := readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && v == 1 {
			return false, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1)"
		}
	}
	return true, ""
}

// wire is what the child reads from its environment.
type wire struct {
	// V is wireVersion: a warden-sandbox of another version next to
	// warden refuses to run rather than misread the confinement.
	V int `json:"v"`
	// GoMaxProcs is the caller's GOMAXPROCS ("" when unset): the child
	// runs with GOMAXPROCS=1 (fewer runtime threads to start, and to stop
	// when it executes the program) and gives the program the caller's.
	GoMaxProcs *string `json:"gomaxprocs,omitempty"`
	Spec
	Plan Plan `json:"plan"`
}

const wireVersion = 2 // 2: GoMaxProcs

// Command returns the command that runs argv confined by s, and the plan
// of what it enforces. exe is the warden binary (empty: this process's
// own, /proc/self/exe, which stays valid even when the file is replaced
// or removed). The caller may set Stdin, Stdout, Stderr and Dir; Env must
// keep the entry Command puts in it. When the kernel offers nothing and
// s is not Required, the command is argv itself, unconfined, and the plan
// says so. Command creates the missing protected folders (Placeholders).
func (s Spec) Command(ctx context.Context, exe string, argv []string) (*exec.Cmd, Plan, error) {
	if len(argv) == 0 {
		return nil, Plan{}, errors.New("no program to run")
	}
	if err := s.Check(); err != nil {
		return nil, Plan{}, err
	}
	plan, err := s.Plan(probeKernel())
	if err != nil {
		return nil, Plan{}, err
	}
	return s.command(ctx, exe, argv, plan)
}

func (s Spec) command(ctx context.Context, exe string, argv []string, plan Plan) (*exec.Cmd, Plan, error) {
	if !plan.Confined() {
		return exec.CommandContext(ctx, argv[0], argv[1:]...), plan, nil
	}
	s = s.withSessionSockets()
	if exe == "" {
		exe = "/proc/self/exe"
	}
	if plan.Mounts {
		for _, d := range s.Placeholders {
			if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				if s.Required {
					return nil, Plan{}, fmt.Errorf("create the protected folder %s (so that a confined command cannot): %w", d, err)
				}
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s could not be created (%v), so a confined command may create it", d, err))
			}
		}
	}
	w := wire{V: wireVersion, Spec: s, Plan: plan}
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
		w.GoMaxProcs = &v
	}
	data, err := json.Marshal(w)
	if err != nil {
		return nil, Plan{}, err
	}
	cmd := exec.CommandContext(ctx, exe, append([]string{"sandbox", ChildArg, "--"}, argv...)...)
	cmd.Args[0] = "warden"
	cmd.Env = append(os.Environ(), specEnv+"="+string(data), "GOMAXPROCS=1")
	// A session of its own: the program has no controlling terminal, so
	// it cannot push input into the user's terminal (TIOCSTI) to be run
	// after it exits. warden, still in the terminal's foreground, gets
	// the terminal's signals and forwards them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if plan.Mounts {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		if uid != 0 {
			// A user other than root loses the namespace's capabilities
			// when the child executes warden; it keeps the two it needs
			// (mount, and the bounding set and securebits it then
			// clears) as ambient ones.
			cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
		}
	}
	return cmd, plan, nil
}

// Run runs argv confined by s with this process's stdin, stdout and
// stderr, forwards the signals it gets (interrupt, terminate, hang up,
// quit, user signals, window change) and returns the program's exit code
// (128+N for a program killed by signal N), with the plan it ran under.
// A run that cannot be set up under Required returns ExitSetup and the
// error; nothing ran.
func (s Spec) Run(ctx context.Context, exe string, argv []string) (int, Plan, error) {
	if err := s.Check(); err != nil {
		return ExitSetup, Plan{}, err
	}
	plan, err := s.Plan(probeKernel())
	if err != nil {
		return ExitSetup, Plan{}, err
	}
	cmd, plan, err := s.command(ctx, exe, argv, plan)
	if err != nil {
		return ExitSetup, Plan{}, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	err = cmd.Start()
	if err != nil && plan.Mounts && !s.Required && userNSRefused(err) {
		// The kernel refused the user namespace (a distribution's
		// restriction the probe did not see): confine with what is left.
		plan.Mounts = false
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("a user namespace could not be created (%v), so protected paths inside the workspace are writable and private paths readable", err))
		if cmd, plan, err = s.command(ctx, exe, argv, plan); err == nil {
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			err = cmd.Start()
		}
	}
	if err != nil {
		if errors.Is(err, syscall.E2BIG) {
			return ExitSetup, plan, fmt.Errorf("start the sandbox: the confinement (%d read-only and %d hidden paths) is too large to hand to the confining child; narrow the policy's protected and private globs", len(s.ReadOnly), len(s.Hidden))
		}
		if plan.Mounts && userNSRefused(err) {
			return ExitSetup, plan, fmt.Errorf("start the sandbox: a user namespace could not be created (%v): the kernel, or a sandbox this runs inside (Codex's own, a container's), refuses it. Nothing was run. Run the command where user namespaces are allowed (see warden doctor), or set sandbox.shell: on to run it with Landlock alone", err)
		}
		if plan.Confined() {
			if errors.Is(err, os.ErrNotExist) && exe != "" {
				return ExitSetup, plan, fmt.Errorf("start the sandbox: the confining program %s is gone (warden was removed or reinstalled while this ran): install warden again and run the command again; nothing was run (%w)", exe, err)
			}
			return ExitSetup, plan, fmt.Errorf("start the sandbox: %w", err)
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return ExitNotFound, plan, err
		}
		return ExitCannotRun, plan, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	return exitCode(cmd, err), plan, nil
}

// userNSRefused reports whether starting the child failed because the
// kernel refused the user namespace (not because warden's binary is gone).
func userNSRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS)
}

func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return ExitSetup
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// IsChild reports whether args (without the program name) are the
// confining child's: warden's `sandbox` command hands them to ChildMain.
func IsChild(args []string) bool { return len(args) > 0 && args[0] == ChildArg }

// ChildMain is the confining child: it reads the Spec from its
// environment, confines itself and executes the program after "--" in
// args. It returns only on failure, with the exit code to use, having
// written the reason to stderr.
func ChildMain(args []string) int { return childMain(args, true) }

// ChildMainInit is ChildMain for a package init function of the main
// package (cmd/warden-sandbox), which the runtime runs on the main
// thread, locked to it: the child then starts one runtime thread fewer
// (the template thread LockOSThread starts), and execve has fewer
// threads to stop before the program runs (each must get a CPU first, a
// wait of milliseconds on a loaded machine).
func ChildMainInit(args []string) int { return childMain(args, false) }

func childMain(args []string, lock bool) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "warden sandbox: "+format+"\n", a...)
		return code
	}
	if len(args) < 3 || args[0] != ChildArg || args[1] != "--" {
		return fail(ExitSetup, "internal: bad arguments for the confining child")
	}
	argv := args[2:]
	var w wire
	if err := json.Unmarshal([]byte(os.Getenv(specEnv)), &w); err != nil {
		return fail(ExitSetup, "internal: no confinement given to the child (%v); nothing was run", err)
	}
	if w.V != wireVersion {
		return fail(ExitSetup, "the confining child (%s) is another version than the warden that started it: install warden and warden-sandbox from the same build; nothing was run", os.Args[0])
	}
	if err := confine(&w, lock); err != nil {
		return fail(ExitSetup, "%v; nothing was run", err)
	}
	return execConfined(&w, argv, true, fail)
}

// execConfined executes argv in the confined calling thread, with the
// environment the program gets: without the sandbox's own variables and
// the spec's UnsetEnv, with ConfinedEnv; child: the confining child's,
// whose GOMAXPROCS is its own (the program gets w.GoMaxProcs). It
// returns only on failure.
func execConfined(w *wire, argv []string, child bool, fail func(code int, format string, a ...any) int) int {
	env := os.Environ()
	out := env[:0]
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if name == specEnv || name == ConfinedEnv || name == DisableEnv || name == "GOMAXPROCS" && child {
			continue
		}
		drop := false
		for _, u := range w.UnsetEnv {
			drop = drop || name == u
		}
		if !drop {
			out = append(out, e)
		}
	}
	if w.GoMaxProcs != nil {
		out = append(out, "GOMAXPROCS="+*w.GoMaxProcs)
	}
	out = append(out, ConfinedEnv+"=1")
	path := argv[0]
	if !strings.Contains(path, "/") {
		p, err := lookPath(path, out)
		if err != nil {
			return fail(ExitNotFound, "%s: command not found", path)
		}
		path = p
	}
	err := syscall.Exec(path, argv, out)
	if errors.Is(err, syscall.ENOENT) {
		return fail(ExitNotFound, "%s: no such file", argv[0])
	}
	return fail(ExitCannotRun, "%s: %v", argv[0], err)
}

// runInside confines this process and executes argv in it: the runner
// started by unshare(1) in a user and mount namespace of its own
// (InsideArg, sandbox.RewriteInside), one process where Run takes two
// (the runner, and the confining child it starts in new namespaces).
// It returns only on failure.
func runInside(s Spec, argv []string, stderr io.Writer, lock bool) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, HelperName+": "+format+"; nothing was run\n", a...)
		return code
	}
	if err := s.Check(); err != nil {
		return fail(ExitSetup, "%v", err)
	}
	if err := ownUserNS(); err != nil {
		return fail(ExitSetup, "%v", err)
	}
	// This process is in a user namespace of its own (ownUserNS): its
	// mounts are possible whatever the switches say of new ones, which
	// are not read.
	var k Kernel
	if v, err := landlockABI(); err == nil {
		k.LandlockABI = v
	}
	k.UserNS = true
	k = disabled(k, os.Getenv(DisableEnv))
	plan, err := s.Plan(k)
	if err != nil {
		return fail(ExitSetup, "%v", err)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", HelperName, w)
	}
	s = s.withSessionSockets()
	for _, d := range s.Placeholders {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			if s.Required {
				return fail(ExitSetup, "create the protected folder %s (so that a confined command cannot): %v", d, err)
			}
			fmt.Fprintf(stderr, "%s: warning: %s could not be created (%v), so a confined command may create it\n", HelperName, d, err)
		}
	}
	leader, err := leaveTerminal()
	if err != nil {
		return fail(ExitSetup, "%v", err)
	}
	if leader {
		// A session leader with a terminal: the confining child, in a
		// session of its own (and namespaces inside these), as Run has
		// it.
		code, _, err := s.Run(context.Background(), "", argv)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", HelperName, err)
		}
		return code
	}
	w := wire{V: wireVersion, Spec: s, Plan: plan}
	if err := confine(&w, lock); err != nil {
		return fail(ExitSetup, "%v", err)
	}
	return execConfined(&w, argv, false, func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, HelperName+": "+format+"\n", a...)
		return code
	})
}

// ownUserNS checks that this process runs in a user namespace of its own
// that maps one user (what unshare --map-current-user makes), never in
// the machine's: its mounts then change only its own mount namespace,
// which unshare --mount made private.
func ownUserNS() error {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return fmt.Errorf("%s runs only in the user namespace unshare makes for it: %w", InsideArg, err)
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || f[2] != "1" {
		return fmt.Errorf("%s runs only in the user namespace unshare --user --map-current-user makes for it, not in the machine's (uid map %q)", InsideArg, strings.TrimSpace(string(b)))
	}
	return nil
}

// leaveTerminal gives up this process's controlling terminal, if it has
// one, so that the program cannot push input into the user's terminal
// (TIOCSTI) to be run after it exits. Unlike a session of its own (the
// confining child's), the process stays in its process group: the
// terminal's interrupt still reaches it, with nobody to forward it. A
// session leader cannot: the program would take the terminal back by
// opening it (bash opens its standard error's terminal), so it reports
// leader, and the caller confines a child in a session of its own.
func leaveTerminal() (leader bool, err error) {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil // no controlling terminal
	}
	defer unix.Close(fd)
	if sid, _ := unix.Getsid(0); sid == unix.Getpid() {
		return true, nil
	}
	if err := unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0); err != nil {
		return false, fmt.Errorf("give up the controlling terminal: %w", err)
	}
	return false, nil
}

// lookPath finds a program on the PATH of env.
func lookPath(name string, env []string) (string, error) {
	pathVar := "/usr/local/bin:/usr/bin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
