package exectest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
)

// ownMountsEnv names, in the child process InOwnMounts starts, the test it
// runs.
const ownMountsEnv = "WARDEN_TEST_OWN_MOUNTS"

// InOwnMounts runs the calling top-level test again in a child process
// with a mount namespace of its own (its mounts private), so that what the
// test mounts is seen by no other process: the tests of other packages,
// run at the same time, watch the mount table, and a mount would set
// aside what they remember. In the child it returns true (the caller goes
// on with the test). In the parent it runs the child, fails with its
// output when it fails, skips when it skipped or cannot be started (no
// privilege for a mount namespace), and returns false (the caller
// returns).
func InOwnMounts(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownMountsEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), ownMountsEnv+"="+t.Name())
	// Go makes the new namespace's mounts private (MS_REC|MS_PRIVATE on
	// "/") before it runs the child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit):
		t.Skipf("no mount namespace of its own for the test: %v", err)
	case err != nil:
		t.Fatalf("in a mount namespace of its own: %v\n%s", err, out)
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skipf("skipped in a mount namespace of its own:\n%s", out)
	case !bytes.Contains(out, []byte("--- PASS: "+t.Name())):
		t.Fatalf("in a mount namespace of its own, the test did not run:\n%s", out)
	}
	return false
}
