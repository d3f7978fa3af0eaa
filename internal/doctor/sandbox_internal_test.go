//go:build linux

package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/sandbox"
)

// confineHelper builds cmd/warden-sandbox (the confining program the
// doctor's live proof runs through) and makes it the doctor's.
func confineHelper(t *testing.T) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "warden-sandbox")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/warden-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	old := Exe
	Exe = func() string { return bin }
	t.Cleanup(func() { Exe = old })
}

func doctorSandboxIn(t *testing.T, yaml string) map[string]Check {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "warden.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]Check{}
	for _, c := range Sandbox(context.Background(), root) {
		got[c.Name] = c
	}
	return got
}

// TestDoctorSandbox: warden doctor's sandbox checks name the kernel's
// mechanisms, what a confined command gets under the policy, and give a
// live proof (a confined write to a protected path and a confined read
// of a private path, both refused); a kernel that lacks a mechanism fails
// the checks under required, with what is missing.
func TestDoctorSandbox(t *testing.T) {
	k := sandbox.Probe()
	if k.LandlockABI < 4 || !k.UserNS {
		t.Skipf("needs Landlock ABI 4 and user namespaces (%s)", k)
	}
	confineHelper(t)
	t.Run("required", func(t *testing.T) {
		got := doctorSandboxIn(t, "version: 1\nprotected: [\"config/**\"]\nsandbox: {shell: required, ports: [5432]}\n")
		want := map[string]string{
			"kernel":  "Landlock ABI",
			"sandbox": "sandbox.shell: required; a confined command gets: Landlock ABI",
			"confine": "both refused",
		}
		for name, w := range want {
			if c, ok := got[name]; !ok || !c.OK || !strings.Contains(c.Text, w) {
				t.Errorf("%s: %+v, want ok and %q", name, c, w)
			}
		}
		if !strings.Contains(got["sandbox"].Text, "TCP only to loopback ports [5432]") {
			t.Errorf("sandbox: %q", got["sandbox"].Text)
		}
	})
	t.Run("off", func(t *testing.T) {
		got := doctorSandboxIn(t, "version: 1\n")
		if c := got["sandbox"]; !c.OK || !strings.Contains(c.Text, "sandbox.shell is off: allowed shell commands run unconfined") {
			t.Errorf("sandbox: %+v", c)
		}
		if c := got["confine"]; !c.OK {
			t.Errorf("confine: %+v", c)
		}
	})
	t.Run("no user namespaces", func(t *testing.T) {
		t.Setenv(sandbox.DisableEnv, "userns")
		got := doctorSandboxIn(t, "version: 1\nsandbox: {shell: required}\n")
		if c := got["kernel"]; !strings.Contains(c.Text, "no user namespaces") {
			t.Errorf("kernel: %+v", c)
		}
		if c := got["sandbox"]; c.OK || !strings.Contains(c.Text, "user namespaces are not available") {
			t.Errorf("sandbox: %+v, want a failure naming user namespaces", c)
		}
		if c := got["confine"]; c.OK || !strings.Contains(c.Text, "no live proof") {
			t.Errorf("confine: %+v, want no live proof", c)
		}
	})
	// Where nothing relies on the sandbox (off), or commands run with
	// what the kernel offers (on), a proof that cannot be given is said,
	// not failed: doctor passes on a kernel without user namespaces.
	for _, mode := range []string{"off", "on"} {
		t.Run(mode+" without user namespaces", func(t *testing.T) {
			t.Setenv(sandbox.DisableEnv, "userns")
			got := doctorSandboxIn(t, "version: 1\nsandbox: {shell: "+mode+"}\n")
			if c := got["sandbox"]; !c.OK {
				t.Errorf("sandbox: %+v", c)
			}
			if c := got["confine"]; !c.OK || !strings.Contains(c.Text, "no live proof") {
				t.Errorf("confine: %+v, want ok and no live proof", c)
			}
		})
	}
	// The proof checks effects: a confining program that confines nothing
	// (it runs the program as it is) fails it.
	t.Run("proof is live", func(t *testing.T) {
		fake := filepath.Join(t.TempDir(), "fake-confine")
		// Called as: sandbox CHILDARG -- PROGRAM ARGS...
		if err := exectest.WriteFile(fake, []byte("#!/bin/sh\nshift 3\nexec \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		old := Exe
		Exe = func() string { return fake }
		defer func() { Exe = old }()
		got := doctorSandboxIn(t, "version: 1\nsandbox: {shell: on}\n")
		if c := got["confine"]; c.OK || !strings.Contains(c.Text, "wrote to the protected policy file") {
			t.Errorf("confine: %+v, want the failed refusal named", c)
		}
	})
}
