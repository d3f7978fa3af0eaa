package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var (
	bashOnce sync.Once
	bashPath string
)

// A host runs a shell tool's command line with its shell. To run an
// allowed line confined, a hook rewrites the line into one that runs the
// original line, byte for byte, under `warden sandbox` by warden's
// absolute path:
//
//	'/usr/local/bin/warden' sandbox --policy '/work/p/warden.yaml' -- '/usr/bin/bash' -c 'LINE'
//
// Every word is single-quoted (a ' inside becomes '\''), which bash, sh,
// dash and zsh read back as exactly the bytes quoted, whatever they are;
// the inner bash gets the line as its -c argument, as the host's shell
// would have read it.

// Rewrite returns the shell line that runs line confined: exe is warden's
// binary (absolute), policyFile the policy that decided the call
// (absolute), digest its SHA-256 in hex ("" for none: with it, the run
// refuses under a policy changed since the decision), required adds
// --required (never run unconfined). A line
// that holds a NUL byte cannot be passed to a program and is an error; so
// are a relative exe or policy file.
func Rewrite(exe, policyFile, digest string, required bool, line string) (string, error) {
	if !filepath.IsAbs(exe) {
		return "", fmt.Errorf("warden's path %q is not absolute", exe)
	}
	if !filepath.IsAbs(policyFile) {
		return "", fmt.Errorf("the policy's path %q is not absolute", policyFile)
	}
	if strings.IndexByte(line, 0) >= 0 || strings.IndexByte(exe, 0) >= 0 || strings.IndexByte(policyFile, 0) >= 0 {
		return "", errors.New("the command holds a NUL byte, which no program can be given as an argument")
	}
	var b strings.Builder
	b.Grow(len(line) + len(exe) + len(policyFile) + 96)
	b.WriteString(envPrefix())
	b.WriteString(Quote(exe))
	b.WriteString(" sandbox --policy ")
	b.WriteString(Quote(policyFile))
	if digest != "" {
		b.WriteString(" --policy-sha256 ")
		b.WriteString(Quote(digest))
	}
	if required {
		b.WriteString(" --required")
	}
	b.WriteString(" -- ")
	b.WriteString(Quote(Bash()))
	b.WriteString(" -c ")
	b.WriteString(Quote(line))
	return b.String(), nil
}

// IsRewritten reports whether line is already a rewritten line of the
// warden binary exe (a call sent again with the rewritten input).
func IsRewritten(exe, line string) bool {
	return strings.HasPrefix(strings.TrimPrefix(line, envPrefix()), Quote(exe)+" sandbox --policy ")
}

// envPrefix runs warden sandbox through env with DisableEnv unset, so that
// a variable the agent exported in a shell that persists between calls
// (the API's bash tool keeps one) cannot take a mechanism away from the
// confinement of its later commands; "" where there is no env program.
var envPrefix = sync.OnceValue(func() string {
	for _, p := range []string{"/usr/bin/env", "/bin/env"} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return Quote(p) + " -u " + DisableEnv + " "
		}
	}
	return ""
})

// Quote single-quotes s for a POSIX shell: the shell reads it back as
// exactly s (s must not hold a NUL byte).
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Bash is the bash that runs the original line inside the sandbox: the
// absolute path found on PATH, or "bash".
func Bash() string {
	bashOnce.Do(func() {
		bashPath = "bash"
		if p, err := exec.LookPath("bash"); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				bashPath = abs
			}
		}
	})
	return bashPath
}

// Executable is warden's own binary, absolute and with symbolic links
// resolved: what a rewritten line runs.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find warden's own binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}
