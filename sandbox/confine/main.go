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

// WriteFile writes s to dir (created if missing) under a name derived
// from its content, and returns the file's path: a hook writes the Spec
// of the policy that allowed a call into the store folder (read-only to
// confined commands) and rewrites the call to run under
// `warden-sandbox --spec FILE`.
func (s Spec) WriteFile(dir string) (string, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	path := filepath.Join(dir, hex.EncodeToString(sum[:12])+".json")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".spec-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// ReadFile reads a Spec WriteFile wrote. The file must be a regular file
// of this user (or root) that nobody else may write: a Spec decides what
// a command may do.
func ReadFile(path string) (Spec, error) {
	var s Spec
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s, err
	}
	if !st.Mode().IsRegular() || st.Mode()&0o022 != 0 {
		return s, fmt.Errorf("%s is not a regular file writable only by its owner", path)
	}
	if uid, ok := fileOwner(st); ok && uid != os.Geteuid() && uid != 0 {
		return s, fmt.Errorf("%s belongs to another user", path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	if s.Root == "" || len(s.Writable) == 0 {
		return s, fmt.Errorf("%s: not a sandbox spec (no root or writable folders)", path)
	}
	return s, nil
}

// Main is the command line of the small helper binary:
//
//	warden-sandbox --spec FILE [--cwd DIR] -- PROGRAM ARGS...
//
// runs PROGRAM confined by the Spec in FILE (see WriteFile), and is the
// confining child warden starts. It returns the exit code.
func Main(args []string, stderr io.Writer) int {
	// warden starts its confining child as `EXE sandbox CHILDARG -- ...`.
	if len(args) > 1 && args[0] == "sandbox" && IsChild(args[1:]) {
		return ChildMain(args[1:])
	}
	fs := flag.NewFlagSet(HelperName, flag.ContinueOnError)
	fs.SetOutput(stderr)
	specPath := fs.String("spec", "", "the sandbox spec to run under (written by warden)")
	cwd := fs.String("cwd", "", "folder to run the program in (default: the current folder)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s --spec FILE [--cwd DIR] -- PROGRAM ARGS...\n\nRuns PROGRAM confined by a sandbox spec warden wrote. Use `warden sandbox` to run under a policy.\n", HelperName)
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
	s, err := ReadFile(*specPath)
	if errors.Is(err, os.ErrNotExist) {
		return fail("the sandbox spec %s is gone (removed after the command was allowed, or warden's store folder was cleaned): run the command again so that warden decides it anew", *specPath)
	}
	if err != nil {
		return fail("%v", err)
	}
	if *cwd != "" {
		if err := os.Chdir(*cwd); err != nil {
			return fail("%v", err)
		}
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
