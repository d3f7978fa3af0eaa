//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
)

// faultWS is a scratch workspace with a git repository and a policy; it
// returns the workspace and a folder outside it (not writable when
// confined).
func faultWS(t *testing.T, yaml string) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	// Outside every writable folder: not under /tmp nor $TMPDIR.
	outside, err := os.MkdirTemp("/var/tmp", "warden-fault-outside-")
	if err != nil {
		t.Skipf("no folder outside the temp folders: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	ws = filepath.Join(base, "ws")
	write(t, filepath.Join(ws, "warden.yaml"), yaml, 0o644)
	gitRun(t, ws, nil, "init", "-q")
	return ws, outside
}

// wardenCmd runs the test binary as warden with extra environment.
func wardenCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), cliEnv+"=1"), env...)
	cmd.Dir = dir
	return cmd
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestKernelWithoutMechanism runs `warden sandbox` as on a kernel that
// lacks Landlock, user namespaces or both (DisableEnv takes them away).
// Under required: the setup exit code, a message naming what is missing
// and what to do, and the program never runs. Under on: the program runs
// with what is left, a warning says what is not enforced, and what is
// left is live (Landlock alone still refuses a write outside the
// workspace).
func TestKernelWithoutMechanism(t *testing.T) {
	k := sandbox.Probe()
	if k.LandlockABI < 4 || !k.UserNS {
		t.Skipf("needs a kernel with both mechanisms to take them away (%s)", k)
	}
	cases := []struct{ disable, want string }{
		{"landlock", "the kernel has no Landlock"},
		{"userns", "user namespaces are not available (" + sandbox.DisableEnv + " disables them)"},
		{"landlock,userns", "the kernel has no Landlock"},
		{"landlock-net", "cannot restrict TCP"},
	}
	for _, c := range cases {
		t.Run("required "+c.disable, func(t *testing.T) {
			ws, _ := faultWS(t, "version: 1\nsandbox: {shell: required}\n")
			marker := filepath.Join(ws, "ran")
			cmd := wardenCmd(ws, []string{sandbox.DisableEnv + "=" + c.disable}, "sandbox", "--", "touch", marker)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != sandbox.ExitSetup {
				t.Errorf("exit %d, want %d\n%s", code, sandbox.ExitSetup, out)
			}
			for _, w := range []string{"sandbox.shell is required but", c.want, "Nothing was run", "warden doctor", sandbox.DisableEnv + " (meant for tests) is set"} {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if exists(marker) {
				t.Error("the program ran")
			}
		})
	}
	// The same refusal through the spec runner (a hook's rewritten line).
	t.Run("required spec runner", func(t *testing.T) {
		ws, _ := faultWS(t, "version: 1\nsandbox: {shell: required}\n")
		helper := filepath.Join(t.TempDir(), "warden-sandbox")
		write(t, helper, string(helperBinary(t)), 0o755)
		specFile := writeSpecDisable(t, ws, "userns")
		marker := filepath.Join(ws, "ran")
		cmd := exec.Command(helper, "--spec", specFile, "--", "touch", marker)
		cmd.Dir = ws
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != sandbox.ExitSetup || !strings.Contains(string(out), "user namespaces are not available") {
			t.Errorf("exit %d\n%s", code, out)
		}
		if exists(marker) {
			t.Error("the program ran")
		}
	})
	t.Run("on without user namespaces", func(t *testing.T) {
		ws, outside := faultWS(t, "version: 1\nsandbox: {shell: on}\n")
		inside, out2 := filepath.Join(ws, "made"), filepath.Join(outside, "escaped")
		cmd := wardenCmd(ws, []string{sandbox.DisableEnv + "=userns"}, "sandbox", "--", "sh", "-c", `touch "$1"; touch "$2"; true`, "sh", inside, out2)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(string(out), "warning: user namespaces are not available") || !strings.Contains(string(out), "protected paths inside the workspace are writable") {
			t.Errorf("no warning naming what is not enforced:\n%s", out)
		}
		if !exists(inside) {
			t.Error("a write in the workspace was refused")
		}
		if exists(out2) {
			t.Error("a write outside the workspace went through: Landlock was not applied")
		}
	})
	t.Run("on without anything", func(t *testing.T) {
		ws, _ := faultWS(t, "version: 1\nsandbox: {shell: on}\n")
		marker := filepath.Join(ws, "ran")
		cmd := wardenCmd(ws, []string{sandbox.DisableEnv + "=landlock,userns"}, "sandbox", "--", "touch", marker)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(string(out), "warning: the kernel has no Landlock") {
			t.Errorf("an unconfined run without a warning:\n%s", out)
		}
		if !exists(marker) {
			t.Error("under on, the program should run (unconfined, with the warning)")
		}
	})
}

// writeSpec derives the Spec of ws's policy and writes it where a hook
// would.
func writeSpec(t *testing.T, ws string) string {
	t.Helper()
	return writeSpecDisable(t, ws, "")
}

// writeSpecDisable is writeSpec whose spec takes the mechanisms disable
// names away (TestDisable: the runner never reads DisableEnv).
func writeSpecDisable(t *testing.T, ws, disable string) string {
	t.Helper()
	p, err := policy.Load(filepath.Join(ws, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.FromPolicy(p, "")
	if err != nil {
		t.Fatal(err)
	}
	s.TestDisable = disable
	f, err := s.WriteFile(filepath.Join(t.TempDir(), "specs"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStaleDecision: what changed between the decision (the Spec written,
// or the policy's digest handed to `warden sandbox`) and the run makes
// the run refuse with a message that says what changed and what to do,
// whatever sandbox.shell says: the workspace gone, the policy changed or
// removed, the spec file gone. Nothing runs.
func TestStaleDecision(t *testing.T) {
	k := sandbox.Probe()
	if k.LandlockABI == 0 && !k.UserNS {
		t.Skip("nothing to confine with here")
	}
	helper := filepath.Join(t.TempDir(), "warden-sandbox")
	write(t, helper, string(helperBinary(t)), 0o755)
	run := func(t *testing.T, dir string, argv ...string) (string, int) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	for _, shell := range []string{"on", "required"} {
		yaml := "version: 1\nsandbox: {shell: " + shell + "}\n"
		t.Run(shell+" workspace gone", func(t *testing.T) {
			ws, _ := faultWS(t, yaml)
			spec := writeSpec(t, ws)
			marker := filepath.Join(filepath.Dir(ws), "ran")
			if err := os.Rename(ws, ws+".moved"); err != nil {
				t.Fatal(err)
			}
			out, code := run(t, filepath.Dir(ws), helper, "--spec", spec, "--", "touch", marker)
			if code != sandbox.ExitSetup || !strings.Contains(out, "the workspace "+ws+" does not exist") || !strings.Contains(out, "nothing was run") {
				t.Errorf("exit %d\n%s", code, out)
			}
			if exists(marker) {
				t.Error("the program ran")
			}
		})
		t.Run(shell+" policy changed", func(t *testing.T) {
			ws, _ := faultWS(t, yaml)
			spec := writeSpec(t, ws)
			marker := filepath.Join(ws, "ran")
			write(t, filepath.Join(ws, "warden.yaml"), yaml+"private: [\"notes/**\"]\n", 0o644)
			out, code := run(t, ws, helper, "--spec", spec, "--", "touch", marker)
			if code != sandbox.ExitSetup || !strings.Contains(out, "changed after this command was allowed") || !strings.Contains(out, "run the command again") {
				t.Errorf("exit %d\n%s", code, out)
			}
			if exists(marker) {
				t.Error("the program ran")
			}
			os.Remove(filepath.Join(ws, "warden.yaml"))
			out, code = run(t, ws, helper, "--spec", spec, "--", "touch", marker)
			if code != sandbox.ExitSetup || !strings.Contains(out, "was removed after this command was allowed") {
				t.Errorf("policy removed: exit %d\n%s", code, out)
			}
			if exists(marker) {
				t.Error("the program ran with the policy removed")
			}
		})
		t.Run(shell+" policy digest", func(t *testing.T) {
			ws, _ := faultWS(t, yaml)
			old, err := sandbox.FileDigest(filepath.Join(ws, "warden.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(ws, "ran")
			cmd := wardenCmd(ws, nil, "sandbox", "--policy-sha256", old, "--", "touch", marker)
			if out, err := cmd.CombinedOutput(); err != nil || !exists(marker) {
				t.Fatalf("the digest of the policy in force: %v\n%s", err, out)
			}
			os.Remove(marker)
			write(t, filepath.Join(ws, "warden.yaml"), yaml+"# edited\n", 0o644)
			cmd = wardenCmd(ws, nil, "sandbox", "--policy-sha256", old, "--", "touch", marker)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != sandbox.ExitSetup || !strings.Contains(string(out), "changed after this command was allowed") {
				t.Errorf("exit %d\n%s", code, out)
			}
			if exists(marker) {
				t.Error("the program ran under a changed policy")
			}
		})
	}
	t.Run("spec file gone", func(t *testing.T) {
		ws, _ := faultWS(t, "version: 1\nsandbox: {shell: on}\n")
		spec := writeSpec(t, ws)
		os.Remove(spec)
		marker := filepath.Join(ws, "ran")
		out, code := run(t, ws, helper, "--spec", spec, "--", "touch", marker)
		if code != sandbox.ExitSetup || !strings.Contains(out, "is gone") || !strings.Contains(out, "run the command again") {
			t.Errorf("exit %d\n%s", code, out)
		}
		if exists(marker) {
			t.Error("the program ran")
		}
	})
}

// TestWardenGoneLine: the binary a rewritten line names is gone when the
// line runs (warden uninstalled after the decision): the shell cannot
// start it, so the program does not run, unconfined or otherwise; and a
// confining program gone between the check and the start says so.
func TestWardenGoneLine(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	for _, line := range []string{
		"'" + filepath.Join(dir, "gone", "warden") + "' sandbox --policy '" + filepath.Join(dir, "warden.yaml") + "' -- bash -c 'touch " + marker + "'",
		"'" + filepath.Join(dir, "gone", "warden-sandbox") + "' --spec '" + filepath.Join(dir, "s.json") + "' -- bash -c 'touch " + marker + "'",
	} {
		cmd := exec.Command("bash", "-c", line)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 127 || !strings.Contains(string(out), "No such file or directory") {
			t.Errorf("%s: exit %d\n%s", line, code, out)
		}
		if exists(marker) {
			t.Fatalf("%s: the program ran", line)
		}
	}
	k := sandbox.Probe()
	if k.LandlockABI == 0 && !k.UserNS {
		return
	}
	s := sandbox.Spec{Root: dir, Writable: []string{dir}}
	code, _, err := s.Run(t.Context(), filepath.Join(dir, "gone", "warden-sandbox"), []string{"touch", marker})
	if code != sandbox.ExitSetup || err == nil || !strings.Contains(err.Error(), "is gone") || !strings.Contains(err.Error(), "nothing was run") {
		t.Errorf("code %d, err %v", code, err)
	}
	if exists(marker) {
		t.Error("the program ran")
	}
}

// TestChildEnvironment: the confining child runs with GOMAXPROCS=1 (fewer
// runtime threads), and the program gets the caller's GOMAXPROCS back
// exactly: unset stays unset, a value stays that value.
func TestChildEnvironment(t *testing.T) {
	k := sandbox.Probe()
	if k.LandlockABI == 0 && !k.UserNS {
		t.Skip("nothing to confine with here")
	}
	ws, _ := faultWS(t, "version: 1\nsandbox: {shell: on}\n")
	for _, c := range []struct{ env, want string }{{"", "unset"}, {"GOMAXPROCS=7", "7"}} {
		env := []string{}
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "GOMAXPROCS=") {
				env = append(env, e)
			}
		}
		if c.env != "" {
			env = append(env, c.env)
		}
		cmd := exec.Command(os.Args[0], "sandbox", "--", "sh", "-c", `printf '%s' "${GOMAXPROCS-unset}"`)
		cmd.Env = append(env, cliEnv+"=1")
		cmd.Dir = ws
		out, err := cmd.Output()
		if err != nil || string(out) != c.want {
			t.Errorf("with %q: GOMAXPROCS in the program %q (%v), want %q", c.env, out, err, c.want)
		}
	}
}

// TestFromPolicyGitFile: in a git worktree or a submodule, .git is a
// file; the private and protected paths after it at the workspace root
// (app/.env, config/) are still found.
func TestFromPolicyGitFile(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".git"), "gitdir: /elsewhere/.git/worktrees/x\n", 0o644)
	write(t, filepath.Join(ws, "app", ".env"), "TOKEN=x\n", 0o600)
	write(t, filepath.Join(ws, "config", "app.yaml"), "a: 1\n", 0o644)
	write(t, filepath.Join(ws, "warden.yaml"), "version: 1\nprotected: [\"config/**\"]\n", 0o644)
	p, err := policy.Load(filepath.Join(ws, "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.FromPolicy(p, "")
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(ws)
	if !slices.Contains(s.Hidden, filepath.Join(real, "app", ".env")) {
		t.Errorf("app/.env is not hidden: %q", s.Hidden)
	}
	if !slices.Contains(s.ReadOnly, filepath.Join(real, "config")) {
		t.Errorf("config is not read-only: %q", s.ReadOnly)
	}
}
