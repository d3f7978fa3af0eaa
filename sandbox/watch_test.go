//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/sandbox"
)

// TestSpecsWatch: a Specs that watches its workspaces (hookd's) checks
// no folder's stamp when nothing happened in the workspace, and still
// sees every change a confinement depends on: a private file made in a
// deep folder, a new folder holding one, a folder renamed and one
// removed. Each Spec it derives is FromPolicy's for the workspace then.
func TestSpecsWatch(t *testing.T) {
	ws := specsWorkspace(t, "version: 1\nsandbox: {shell: on}\n")
	for i := range 40 {
		write(t, filepath.Join(ws, "src", fmt.Sprintf("m%02d", i), "p", "f.go"), "package p\n", 0o644)
	}
	time.Sleep(250 * time.Millisecond) // past the clock step: stamps trusted
	p, digest := loadDigest(t, filepath.Join(ws, "warden.yaml"))
	c := sandbox.NewSpecs()
	c.Watch()
	prepare := func(what string) (sandbox.Spec, int64) {
		t.Helper()
		before := sandbox.DirStats()
		got, err := c.Prepare(p, digest)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		stats := sandbox.DirStats() - before
		want, err := sandbox.FromPolicy(p, "")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Spec.Hidden, want.Hidden) || !slices.Equal(got.Spec.ReadOnly, want.ReadOnly) {
			t.Errorf("%s: the watching Specs hides %q and binds %q read-only; FromPolicy %q and %q", what, got.Spec.Hidden, got.Spec.ReadOnly, want.Hidden, want.ReadOnly)
		}
		return got.Spec, stats
	}
	prepare("first")
	if _, stats := prepare("nothing changed"); stats != 0 {
		t.Errorf("nothing changed in the workspace, yet %d folders' stamps were checked", stats)
	}
	hidden := func(s sandbox.Spec, p string) bool { return slices.Contains(s.Hidden, p) }

	deep := filepath.Join(ws, "src", "m07", "p", ".env")
	write(t, deep, "SECRET=1\n", 0o600)
	s, stats := prepare("a .env in a deep folder")
	if !hidden(s, deep) {
		t.Errorf("the new %s is not hidden", deep)
	}
	if stats == 0 || stats > 5 {
		t.Errorf("%d folders checked for one change in one folder", stats)
	}

	nested := filepath.Join(ws, "new", "a", "b", ".env")
	write(t, nested, "SECRET=2\n", 0o600)
	if s, _ := prepare("a new folder holding a .env"); !hidden(s, nested) {
		t.Errorf("the new %s is not hidden", nested)
	}

	moved := filepath.Join(ws, "moved")
	if err := os.Rename(filepath.Join(ws, "new"), moved); err != nil {
		t.Fatal(err)
	}
	s, _ = prepare("the folder renamed")
	if want := filepath.Join(moved, "a", "b", ".env"); !hidden(s, want) || hidden(s, nested) {
		t.Errorf("after the rename, hidden %q; want %s and not %s", s.Hidden, want, nested)
	}
	// A change inside the renamed folder, under its new name.
	again := filepath.Join(moved, "a", ".env")
	write(t, again, "SECRET=3\n", 0o600)
	if s, _ := prepare("a .env in the renamed folder"); !hidden(s, again) {
		t.Errorf("the new %s is not hidden", again)
	}

	if err := os.RemoveAll(filepath.Join(ws, "src", "m07")); err != nil {
		t.Fatal(err)
	}
	if s, _ := prepare("the folder removed"); hidden(s, deep) {
		t.Errorf("%s is hidden after its folder was removed", deep)
	}
	time.Sleep(250 * time.Millisecond)
	prepare("settled")
	if _, stats := prepare("nothing changed again"); stats != 0 {
		t.Errorf("nothing changed in the workspace, yet %d folders' stamps were checked", stats)
	}
}

// TestSpecsWatchSeesAMount: a file system mounted on a walked folder,
// which no inotify event tells, makes the watching Specs check every
// folder again, so a private file in the mount is hidden (where the test
// may mount). It runs in a process of its own with mounts of its own: the
// tests of other packages watch the mount table.
func TestSpecsWatchSeesAMount(t *testing.T) {
	if !exectest.InOwnMounts(t) {
		return
	}
	needKernel(t)
	ws := specsWorkspace(t, "version: 1\nsandbox: {shell: on}\n")
	m := filepath.Join(ws, "m")
	write(t, filepath.Join(m, "f.go"), "package m\n", 0o644)
	time.Sleep(250 * time.Millisecond) // past the clock step: stamps trusted
	p, digest := loadDigest(t, filepath.Join(ws, "warden.yaml"))
	c := sandbox.NewSpecs()
	c.Watch()
	for _, what := range []string{"first", "nothing changed"} {
		if _, err := c.Prepare(p, digest); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if err := syscall.Mount("tmpfs", m, "tmpfs", 0, ""); err != nil {
		t.Skipf("cannot mount here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(m, syscall.MNT_DETACH) })
	secret := filepath.Join(m, ".env")
	write(t, secret, "SECRET=1\n", 0o600)
	got, err := c.Prepare(p, digest)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Spec.Hidden, secret) {
		t.Errorf("the %s in a folder mounted over is not hidden: %q", secret, got.Spec.Hidden)
	}
	// The effect, with the real runner and the spec file it was given: a
	// confined cat reads the mount's other file and not the secret.
	write(t, filepath.Join(m, "notes.txt"), "plain\n", 0o644)
	helper := filepath.Join(t.TempDir(), "warden-sandbox")
	write(t, helper, string(helperBinary(t)), 0o755)
	cmd := exec.Command(helper, "--spec", got.File, "--spec-sha256", got.Sum, "--", "bash", "-c",
		"cat "+filepath.Join(m, "notes.txt")+"; cat "+secret)
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "plain") {
		t.Fatalf("the confined command did not run as expected:\n%s", out)
	}
	if strings.Contains(string(out), "SECRET=1") {
		t.Errorf("the confined command read the secret in the folder mounted over:\n%s", out)
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != "SECRET=1\n" {
		t.Errorf("the secret file is %q, %v after the run", data, err)
	}
}
