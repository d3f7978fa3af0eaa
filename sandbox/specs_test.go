//go:build linux

package sandbox_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
)

// specsWorkspace makes a workspace with a policy, a few folders and a
// .env, and waits until the folders' times are older than the clock step
// within which a change could leave them as they are (a fresher folder
// is read again on every call, by design).
func specsWorkspace(t *testing.T, pol string) string {
	t.Helper()
	ws := t.TempDir()
	write(t, filepath.Join(ws, "warden.yaml"), pol, 0o644)
	write(t, filepath.Join(ws, ".env"), "TOKEN=x\n", 0o600)
	for _, d := range []string{"src/a", "src/b", "docs"} {
		write(t, filepath.Join(ws, d, "f.txt"), "x\n", 0o644)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".warden"), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond)
	return ws
}

func loadDigest(t *testing.T, file string) (*policy.Policy, string) {
	t.Helper()
	p, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return p, hex.EncodeToString(p.Digest[:])
}

// TestSpecsCache: Specs writes the Spec FromPolicy derives to a file
// named by its content; a second call reads no folder again and gives
// the same file, and so does a new Specs (another process) from the walk
// file the first kept; a new private file in a folder makes it read that
// folder (only) and hide the file; a changed policy (a new protected
// glob) gives a Spec with the new digest and the new protected path; a
// spec file changed behind its back is written again.
func TestSpecsCache(t *testing.T) {
	ws := specsWorkspace(t, "version: 1\nsandbox: {shell: on}\n")
	p, digest := loadDigest(t, filepath.Join(ws, "warden.yaml"))
	c := sandbox.NewSpecs()
	first, err := c.Prepare(p, digest)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(first.File) != filepath.Join(p.Dir, ".warden", "sandbox") {
		t.Errorf("the spec was written to %s, want the store folder's sandbox folder", first.File)
	}
	data, err := os.ReadFile(first.File)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != first.Sum {
		t.Errorf("the spec file's SHA-256 is not the one returned")
	}
	want, err := sandbox.FromPolicy(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.Spec.ReadOnly, want.ReadOnly) || !slices.Equal(first.Spec.Hidden, want.Hidden) || first.Spec.PolicyDigest != digest {
		t.Errorf("Specs derived %+v; FromPolicy %+v", first.Spec, want)
	}
	if !slices.Contains(first.Spec.Hidden, filepath.Join(p.Dir, ".env")) {
		t.Errorf(".env is not hidden: %v", first.Spec.Hidden)
	}

	// Reused: no folder read again, the same file (the store folder,
	// where the spec was written, is not walked).
	before := sandbox.DirReads()
	again, err := c.Prepare(p, digest)
	if err != nil {
		t.Fatal(err)
	}
	if n := sandbox.DirReads() - before; n != 0 {
		t.Errorf("the second call read %d folders again; want none (nothing changed)", n)
	}
	if again.File != first.File || again.Sum != first.Sum {
		t.Errorf("the second call wrote %s (%s); want the first's %s", again.File, again.Sum, first.File)
	}
	// Another process (a one-shot warden hook) starts from the walk the
	// first one kept in the store folder.
	if walks, _ := filepath.Glob(filepath.Join(filepath.Dir(first.File), "walk-*.gob")); len(walks) != 1 {
		t.Errorf("walk files %v; want one", walks)
	}
	before = sandbox.DirReads()
	other, err := sandbox.NewSpecs().Prepare(p, digest)
	if err != nil {
		t.Fatal(err)
	}
	if n := sandbox.DirReads() - before; n != 0 || other.File != first.File {
		t.Errorf("a new Specs read %d folders and wrote %s; want none read and %s", n, other.File, first.File)
	}
	// A walk file others may write is not used.
	walks, _ := filepath.Glob(filepath.Join(filepath.Dir(first.File), "walk-*.gob"))
	if len(walks) == 1 {
		os.Chmod(walks[0], 0o666)
		before = sandbox.DirReads()
		if _, err := sandbox.NewSpecs().Prepare(p, digest); err != nil {
			t.Fatal(err)
		}
		if n := sandbox.DirReads() - before; n == 0 {
			t.Errorf("a walk file others may write was used")
		}
		os.Chmod(walks[0], 0o600)
	}

	// A new private file: its folder is read again, the file hidden.
	secret := filepath.Join(p.Dir, "src", "b", ".env")
	write(t, secret, "TOKEN=y\n", 0o600)
	before = sandbox.DirReads()
	third, err := c.Prepare(p, digest)
	if err != nil {
		t.Fatal(err)
	}
	if n := sandbox.DirReads() - before; n != 1 {
		t.Errorf("after a new file in src/b, %d folders were read; want 1 (src/b)", n)
	}
	if !slices.Contains(third.Spec.Hidden, secret) || third.File == first.File {
		t.Errorf("the new .env is not hidden by a new spec: %v (%s)", third.Spec.Hidden, third.File)
	}
	// A folder removed, with the private file in it: no longer named.
	if err := os.RemoveAll(filepath.Join(p.Dir, "src", "b")); err != nil {
		t.Fatal(err)
	}
	fourth, err := c.Prepare(p, digest)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(fourth.Spec.Hidden, secret) {
		t.Errorf("a removed .env is still in the spec: %v", fourth.Spec.Hidden)
	}

	// The policy changed: a new protected glob.
	write(t, filepath.Join(ws, "config", "app.yaml"), "a: 1\n", 0o644)
	write(t, filepath.Join(ws, "warden.yaml"), "version: 1\nprotected: [\"config/**\"]\nsandbox: {shell: on}\n", 0o644)
	p2, digest2 := loadDigest(t, filepath.Join(ws, "warden.yaml"))
	// A spec file of long ago is removed when a new one is written.
	old := filepath.Join(filepath.Dir(first.File), "0000old.json")
	write(t, old, "{}", 0o644)
	long := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(old, long, long)
	fifth, err := c.Prepare(p2, digest2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Errorf("a spec file of 30 days ago was kept")
	}
	if _, err := os.Stat(fourth.File); err != nil {
		t.Errorf("a recent spec file was removed: %v", err)
	}
	if fifth.Spec.PolicyDigest != digest2 || !slices.Contains(fifth.Spec.ReadOnly, filepath.Join(p.Dir, "config")) {
		t.Errorf("after the policy changed: digest %s (want %s), read-only %v (want config)", fifth.Spec.PolicyDigest, digest2, fifth.Spec.ReadOnly)
	}

	// A spec file changed behind Specs' back is written again.
	if err := os.WriteFile(fifth.File, []byte(`{"root":"/","writable":["/"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sixth, err := c.Prepare(p2, digest2)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(sixth.File); sixth.File != fifth.File || bytes.Contains(got, []byte(`"writable":["/"]`)) {
		t.Errorf("the changed spec file was not written again: %s", got)
	}
}

// TestSpecRunnerTampered: the lean runner refuses a spec file whose bytes
// are not the ones its --spec-sha256 names (changed after the decision,
// even to a valid spec), and one that is gone, under on as under
// --required: nothing runs, the message says why and what to do.
func TestSpecRunnerTampered(t *testing.T) {
	needKernel(t)
	ws := specsWorkspace(t, "version: 1\nsandbox: {shell: on}\n")
	p, digest := loadDigest(t, filepath.Join(ws, "warden.yaml"))
	prep, err := sandbox.NewSpecs().Prepare(p, digest)
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(t.TempDir(), "warden-sandbox")
	write(t, helper, string(helperBinary(t)), 0o755)
	marker := filepath.Join(ws, "ran")
	run := func(extra ...string) (int, string) {
		args := append([]string{"--spec", prep.File, "--spec-sha256", prep.Sum}, extra...)
		cmd := exec.Command(helper, append(args, "--", "bash", "-c", "touch "+marker)...)
		cmd.Dir = ws
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := run(); code != 0 {
		t.Fatalf("the spec as written: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
	os.Remove(marker)
	// Changed: a spec that confines less (no hidden paths).
	s := prep.Spec
	s.Hidden = nil
	weaker, _, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prep.File, weaker, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--required"}} {
		code, out := run(extra...)
		if code != sandbox.ExitSetup || !strings.Contains(out, "changed after the command was allowed") || !strings.Contains(out, "nothing was run") {
			t.Errorf("a changed spec %v: exit %d, %q; want 125 and the reason", extra, code, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the command ran under a changed spec %v", extra)
		}
	}
	// Gone.
	os.Remove(prep.File)
	if code, out := run(); code != sandbox.ExitSetup || !strings.Contains(out, "is gone") {
		t.Errorf("a spec file gone: exit %d, %q", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without its spec file")
	}
}

// TestRunnerMissing: Runner finds warden-sandbox next to warden, and
// nothing where it is not (then the hook rewrites to `warden sandbox`).
func TestRunnerMissing(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "warden")
	write(t, exe, "#!/bin/sh\n", 0o755)
	if r := sandbox.Runner(exe); r != "" {
		t.Errorf("Runner found %s where there is none", r)
	}
	write(t, filepath.Join(dir, "warden-sandbox"), "#!/bin/sh\n", 0o644)
	if r := sandbox.Runner(exe); r != "" {
		t.Errorf("Runner found %s, which cannot be executed", r)
	}
	os.Chmod(filepath.Join(dir, "warden-sandbox"), 0o755)
	if r := sandbox.Runner(exe); r != filepath.Join(dir, "warden-sandbox") {
		t.Errorf("Runner = %q; want the one next to warden", r)
	}
}
