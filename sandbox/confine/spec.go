// Package confine runs a program confined by a Spec: the mechanisms of
// package sandbox (which derives the Spec from a policy) without the
// policy packages, so that a small binary can run a Spec written ahead
// (see Main). docs/sandbox.md describes the design.
//
// Stability: this package is internal to warden in spirit. Its API serves
// `warden sandbox` and warden-sandbox and changes with them in any release.
package confine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Exit codes of a confined run that come from the sandbox, not the
// program (as env(1) and timeout(1) use them).
const (
	// ExitSetup: the sandbox could not be set up; the program did not run.
	ExitSetup = 125
	// ExitCannotRun: the program was found but could not be executed.
	ExitCannotRun = 126
	// ExitNotFound: the program was not found.
	ExitNotFound = 127
)

// ChildArg is the hidden argument (after "sandbox") with which warden
// re-executes itself as the confining child. It is not for users.
const ChildArg = "--confined-child-do-not-use"

// InsideArg is the runner's option (warden-sandbox --spec FILE --inside)
// for a run that unshare(1) started in a user and mount namespace of its
// own (sandbox.RewriteInside): the runner confines itself and executes
// the program, one process. It refuses to run in the machine's user
// namespace.
const InsideArg = "--inside"

// specEnv carries the Spec from the parent to the child; the child removes
// it before the program starts.
const specEnv = "WARDEN_SANDBOX_SPEC"

// ConfinedEnv is set (to "1") in the environment of a confined program.
const ConfinedEnv = "WARDEN_SANDBOX"

// Spec is the confinement of one run: absolute, symlink-resolved paths.
// It is a value: build it with FromPolicy (it reads the disk once), run
// as many commands with it as needed while the workspace's layout stays.
type Spec struct {
	// Root is the workspace root.
	Root string `json:"root"`
	// Writable are the folders (and files) a confined command may write:
	// the root, /tmp, $TMPDIR, the policy's sandbox.writable, and the
	// few device files programs need. Everything else is read-only.
	Writable []string `json:"writable"`
	// ReadOnly are existing paths under a writable folder that are bound
	// read-only over themselves: the protected paths.
	ReadOnly []string `json:"read_only"`
	// Hidden are existing paths made unreadable (an empty folder or an
	// empty file in their place): the private paths.
	Hidden []string `json:"hidden"`
	// Placeholders are protected folders that did not exist: each is
	// created empty before the run (so that it can be bound read-only and
	// a confined command cannot create it).
	Placeholders []string `json:"placeholders,omitempty"`
	// NetworkDeny refuses outbound TCP connections except to Ports.
	NetworkDeny bool  `json:"network_deny"`
	Ports       []int `json:"ports,omitempty"`
	// Required: never run unconfined, and fail when a mechanism the
	// policy asks for is missing. Otherwise the run uses what the kernel
	// offers and Warnings say what is not enforced.
	Required bool `json:"required"`
	// UnsetEnv are environment variables removed before the program runs
	// (SSH_AUTH_SOCK: the agent would sign with the hidden keys).
	UnsetEnv []string `json:"unset_env,omitempty"`
	// TestDisable, for tests, takes mechanisms away from a run on this
	// spec file as DisableEnv does for `warden sandbox` (the runner never
	// reads DisableEnv: an agent could export it). warden never writes
	// it.
	TestDisable string `json:"test_disable,omitempty"`
	// PolicyFile is the policy the Spec was derived from, and
	// PolicyDigest the SHA-256 of its bytes then (hex). A run checks that
	// the file still has them: a policy changed between the decision and
	// the run makes the run refuse (the decision may no longer hold).
	PolicyFile   string `json:"policy_file,omitempty"`
	PolicyDigest string `json:"policy_sha256,omitempty"`
	// Warnings found while resolving the policy (a glob that could not be
	// resolved); Command adds the kernel's.
	Warnings []string `json:"-"`
}

// UnderWritable reports whether p lies in a writable folder.
func (s *Spec) UnderWritable(p string) bool {
	for _, w := range s.Writable {
		if within(p, w) {
			return true
		}
	}
	return false
}

func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// FileDigest returns the SHA-256 of a file's bytes, in hex.
func FileDigest(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ErrStale is the error of a run whose policy changed, or whose
// workspace went, after the Spec was made (errors.Is).
var ErrStale = errors.New("stale sandbox spec")

type staleError struct{ msg string }

func (e staleError) Error() string        { return e.msg }
func (e staleError) Is(target error) bool { return target == ErrStale }

func stale(format string, a ...any) error {
	return staleError{fmt.Sprintf(format, a...) + "; nothing was run"}
}

// Check reports whether a run of s can start as it was decided: the
// workspace root is still a folder, and the policy file (when the Spec
// names one) still has the bytes it had. Its error says what changed and
// what to do; a run does not start after one.
func (s Spec) Check() error {
	if s.Root != "" {
		st, err := os.Stat(s.Root)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return stale("the workspace %s does not exist (any more): run the command in a workspace that exists, so that warden decides it there", s.Root)
		case err != nil:
			return fmt.Errorf("the workspace %s: %w", s.Root, err)
		case !st.IsDir():
			return stale("the workspace %s is not a folder (any more)", s.Root)
		}
	}
	if s.PolicyDigest == "" {
		return nil
	}
	d, err := FileDigest(s.PolicyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return stale("the policy %s was removed after this command was allowed: run the command again so that warden decides it under the policy in force", s.PolicyFile)
	}
	if err != nil {
		return fmt.Errorf("the policy %s: %w", s.PolicyFile, err)
	}
	if d != s.PolicyDigest {
		return stale("the policy %s changed after this command was allowed (the decision was made under another version of it): run the command again so that warden decides it under the policy in force", s.PolicyFile)
	}
	return nil
}
