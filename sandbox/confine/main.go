package confine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// HelperName is the small binary (cmd/warden-sandbox) that runs a Spec
// written ahead, and that warden uses as its confining child when it lies
// next to warden: it starts in a fraction of warden's time.
const HelperName = "warden-sandbox"

// Helper returns the path of HelperName next to the running executable,
// or "" when there is none (then warden is its own confining child).
func Helper() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), HelperName)
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// Encode returns the bytes a spec file holds and their SHA-256 (hex):
// what `warden-sandbox --spec-sha256` compares before it runs anything.
func (s Spec) Encode() ([]byte, string, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:]), nil
}

// WriteFile writes s to dir (created if missing) under a name derived
// from its content, and returns the file's path: a hook writes the Spec
// of the policy that allowed a call into the store folder (read-only to
// confined commands) and rewrites the call to run under
// `warden-sandbox --spec FILE --spec-sha256 DIGEST`.
func (s Spec) WriteFile(dir string) (string, error) {
	path, _, err := s.WriteFileDigest(dir)
	return path, err
}

// WriteFileDigest is WriteFile that also returns the SHA-256 (hex) of the
// file's bytes. A file of that name whose bytes differ (changed by
// someone else) is written again.
func (s Spec) WriteFileDigest(dir string) (string, string, error) {
	data, sum, err := s.Encode()
	if err != nil {
		return "", "", err
	}
	path := filepath.Join(dir, sum[:32]+".json")
	if _, err := readSpecFile(path, sum); err == nil {
		return path, sum, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	tmp, err := os.CreateTemp(dir, ".spec-*")
	if err != nil {
		return "", "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", "", err
	}
	if err := tmp.Close(); err != nil {
		return "", "", err
	}
	return path, sum, os.Rename(tmp.Name(), path)
}

// ReadFile reads a Spec WriteFile wrote. The file must be a regular file
// of this user (or root) that nobody else may write: a Spec decides what
// a command may do.
func ReadFile(path string) (Spec, error) { return ReadFileDigest(path, "") }

// ErrSpecChanged is the error of a spec file whose bytes are not the
// ones the hook wrote (errors.Is).
var ErrSpecChanged = errors.New("sandbox spec changed")

// ReadFileDigest is ReadFile for a file whose bytes must have the
// SHA-256 sum (hex; "" checks nothing): the bytes are read once, hashed
// and parsed, so what is checked is what runs.
func ReadFileDigest(path, sum string) (Spec, error) {
	var s Spec
	data, err := readSpecFile(path, sum)
	if err != nil {
		return s, err
	}
	if err := decodeSpec(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	if s.Root == "" || len(s.Writable) == 0 {
		return s, fmt.Errorf("%s: not a sandbox spec (no root or writable folders)", path)
	}
	return s, nil
}

// maxSpec bounds a spec file's size.
const maxSpec = 64 << 20

// readSpecFile returns the bytes of a spec file after the checks of
// ReadFileDigest.
func readSpecFile(path, sum string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Mode()&0o022 != 0 {
		return nil, fmt.Errorf("%s is not a regular file writable only by its owner", path)
	}
	if uid, ok := fileOwner(st); ok && uid != os.Geteuid() && uid != 0 {
		return nil, fmt.Errorf("%s belongs to another user", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSpec+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSpec {
		return nil, fmt.Errorf("%s is too large for a sandbox spec", path)
	}
	if sum != "" {
		got := sha256.Sum256(data)
		if !strings.EqualFold(hex.EncodeToString(got[:]), sum) {
			return nil, fmt.Errorf("%w: %s does not hold the bytes warden wrote for this command (its SHA-256 differs from --spec-sha256): it was changed after the command was allowed", ErrSpecChanged, path)
		}
	}
	return data, nil
}

// Main is the command line of the small helper binary:
//
//	warden-sandbox --spec FILE [--spec-sha256 HEX] [--inside] [--required] [--cwd DIR] -- PROGRAM ARGS...
//
// runs PROGRAM confined by the Spec in FILE (see WriteFile), and is the
// confining child warden starts. It returns the exit code.
func Main(args []string, stderr io.Writer) int { return runnerMain(args, stderr, true) }

// MainInit is Main for a package init function of the main package, run
// on the main thread, locked to it (see ChildMainInit).
func MainInit(args []string, stderr io.Writer) int { return runnerMain(args, stderr, false) }

// IsInside reports whether args (without the program name) are a run
// under unshare (InsideArg before "--").
func IsInside(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == InsideArg {
			return true
		}
	}
	return false
}

func runnerMain(args []string, stderr io.Writer, lock bool) int {
	// warden starts its confining child as `EXE sandbox CHILDARG -- ...`.
	if len(args) > 1 && args[0] == "sandbox" && IsChild(args[1:]) {
		return ChildMain(args[1:])
	}
	fs := flag.NewFlagSet(HelperName, flag.ContinueOnError)
	fs.SetOutput(stderr)
	specPath := fs.String("spec", "", "the sandbox spec to run under (written by warden)")
	specSum := fs.String("spec-sha256", "", "the SHA-256 (hex) of the spec file's bytes: a file with other bytes is refused (a hook's rewrite passes it)")
	required := fs.Bool("required", false, "never run unconfined, whatever the spec says")
	inside := fs.Bool(strings.TrimPrefix(InsideArg, "--"), false, "run in the user and mount namespace unshare made for this process (how warden's rewrite starts it): confine this process and execute PROGRAM")
	cwd := fs.String("cwd", "", "folder to run the program in (default: the current folder)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s --spec FILE [--spec-sha256 HEX] [--inside] [--required] [--cwd DIR] -- PROGRAM ARGS...\n\nRuns PROGRAM confined by a sandbox spec warden wrote. Use `warden sandbox` to run under a policy.\n", HelperName)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return ExitSetup
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, HelperName+": "+format+"; nothing was run\n", a...)
		return ExitSetup
	}
	if *specPath == "" || fs.NArg() == 0 {
		fs.Usage()
		return ExitSetup
	}
	s, err := ReadFileDigest(*specPath, *specSum)
	if errors.Is(err, os.ErrNotExist) {
		return fail("the sandbox spec %s is gone (removed after the command was allowed, or warden's store folder was cleaned): run the command again so that warden decides it anew", *specPath)
	}
	if errors.Is(err, ErrSpecChanged) {
		return fail("%v: run the command again so that warden decides it anew", err)
	}
	if err != nil {
		return fail("%v", err)
	}
	// The tests' variable that takes mechanisms away (DisableEnv) is
	// never read from a run on a spec, only the spec's TestDisable: an
	// agent that exported it in a shell that persists between calls
	// cannot weaken its later commands.
	os.Unsetenv(DisableEnv)
	if s.TestDisable != "" {
		os.Setenv(DisableEnv, s.TestDisable)
	}
	s.Required = s.Required || *required
	if *cwd != "" {
		if err := os.Chdir(*cwd); err != nil {
			return fail("%v", err)
		}
	}
	if *inside {
		return runInside(s, fs.Args(), stderr, lock)
	}
	code, plan, err := s.Run(context.Background(), "", fs.Args())
	for _, w := range plan.Warnings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", HelperName, w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", HelperName, err)
	}
	return code
}
