package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/warden-run/warden/sandbox/confine"
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
	words := []word{{exe, false}, {"sandbox", true}, {"--policy", true}, {policyFile, false}}
	if digest != "" {
		words = append(words, word{"--policy-sha256", true}, word{digest, false})
	}
	return rewriteLine(envPrefix(), words, required, line)
}

// RewriteSpec returns the shell line that runs line confined by a spec
// file written ahead (Specs.Prepare), under the lean runner:
//
//	'/abs/warden-sandbox' --spec 'FILE' --spec-sha256 'HEX' [--required] -- '/usr/bin/bash' -c 'LINE'
//
// runner is warden-sandbox's absolute path (Runner), file the spec file
// and sum the SHA-256 of its bytes: the runner refuses a file whose bytes
// differ. Quoting and errors are Rewrite's. The runner never reads the
// tests' variable (DisableEnv) on a spec, so no env step is needed.
func RewriteSpec(runner, file, sum string, required bool, line string) (string, error) {
	return rewriteRunner("", runner, file, sum, required, line)
}

// RewriteInside is RewriteSpec under unshare(1), which starts the runner
// in a user and mount namespace of its own: the runner confines itself
// and executes bash, one process where RewriteSpec's runner starts a
// confining child (docs/sandbox.md, "Speed"):
//
//	'/usr/bin/unshare' --user --mount --map-current-user --keep-caps -- '/abs/warden-sandbox' --spec 'FILE' --spec-sha256 'HEX' --inside [--required] -- '/usr/bin/bash' -c 'LINE'
//
// unshare is unshare's absolute path (Unshare).
func RewriteInside(unshare, runner, file, sum string, required bool, line string) (string, error) {
	if !filepath.IsAbs(unshare) {
		return "", fmt.Errorf("unshare's path %q is not absolute", unshare)
	}
	return rewriteRunner(unsharePrefix(unshare), runner, file, sum, required, line)
}

func rewriteRunner(prefix, runner, file, sum string, required bool, line string) (string, error) {
	if !filepath.IsAbs(runner) {
		return "", fmt.Errorf("warden-sandbox's path %q is not absolute", runner)
	}
	if !filepath.IsAbs(file) {
		return "", fmt.Errorf("the sandbox spec's path %q is not absolute", file)
	}
	words := []word{{runner, false}, {"--spec", true}, {file, false}, {"--spec-sha256", true}, {sum, false}}
	if prefix != "" {
		words = append(words, word{confine.InsideArg, true})
	}
	return rewriteLine(prefix, words, required, line)
}

// unshareOptions are unshare's options in RewriteInside: a user namespace
// that maps the user to itself, whose capabilities the runner keeps
// across its start (util-linux 2.38 or later), and a mount namespace
// whose mounts unshare makes private.
const unshareOptions = " --user --mount --map-current-user --keep-caps -- "

func unsharePrefix(unshare string) string { return Quote(unshare) + unshareOptions }

// unsharePaths are where RewriteInside's unshare is looked for (never on
// PATH, which the agent's shell may change).
var unsharePaths = []string{"/usr/bin/unshare", "/bin/unshare"}

// Unshare returns the absolute path of util-linux's unshare when it
// offers what RewriteInside needs (--map-current-user and --keep-caps,
// util-linux 2.38 or later), else "". It reads the program once per
// process.
var Unshare = sync.OnceValue(func() string {
	for _, p := range unsharePaths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte("--keep-caps")) && bytes.Contains(b, []byte("--map-current-user")) {
			return p
		}
		return ""
	}
	return ""
})

// word is a word of a rewrite's command: raw for a fixed word (a
// subcommand or an option name, written bare: IsRewritten and Unwrap read
// it so), else a value, single-quoted.
type word struct {
	s   string
	raw bool
}

// rewriteLine is the rewrite of line under the command words (the program
// first, its options after), then [--required] -- BASH -c LINE, behind
// prefix.
func rewriteLine(prefix string, words []word, required bool, line string) (string, error) {
	n := len(line) + 96
	for _, w := range words {
		if strings.IndexByte(w.s, 0) >= 0 {
			return "", errors.New("the command holds a NUL byte, which no program can be given as an argument")
		}
		n += len(w.s) + 3
	}
	if strings.IndexByte(line, 0) >= 0 {
		return "", errors.New("the command holds a NUL byte, which no program can be given as an argument")
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(prefix)
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.raw {
			b.WriteString(w.s)
		} else {
			b.WriteString(Quote(w.s))
		}
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

// Runner returns the lean runner (warden-sandbox) next to the warden
// binary exe, or "" when there is none (a warden built with `go install
// ./cmd/warden` alone): then a rewrite runs `warden sandbox` (Rewrite).
func Runner(exe string) string {
	p := filepath.Join(filepath.Dir(exe), confine.HelperName)
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// IsRewritten reports whether line is already a rewritten line of the
// warden binary exe, in any form (a call sent again with the rewritten
// input). It looks at the start of the line only: Unwrap says whether the
// whole line is one.
func IsRewritten(exe, line string) bool {
	rest, _ := cutLead(line)
	return strings.HasPrefix(rest, Quote(exe)+" sandbox --policy ") ||
		strings.HasPrefix(rest, Quote(filepath.Join(filepath.Dir(exe), confine.HelperName))+" --spec ")
}

// IsInsideRewrite reports whether line starts as RewriteInside's lines
// do (unshare first).
func IsInsideRewrite(line string) bool {
	_, inside := cutLead(line)
	return inside
}

// cutLead cuts what a rewritten line may start with: the env step
// (Rewrite's, and RewriteSpec's before it needed none) or unshare
// (RewriteInside); inside reports unshare.
func cutLead(line string) (rest string, inside bool) {
	if p := envPrefix(); p != "" {
		if r, ok := strings.CutPrefix(line, p); ok {
			return r, false
		}
	}
	for _, u := range unsharePaths {
		if r, ok := strings.CutPrefix(line, unsharePrefix(u)); ok {
			return r, true
		}
	}
	return line, false
}

// Unwrap returns the original line of a line that is exactly a rewrite
// of the warden binary exe or of the runner (warden-sandbox; "": the one
// next to exe), in any form, and nothing more: what a
// call sent again with the rewritten input runs. A line with anything
// after the rewrite, or not built as Rewrite, RewriteSpec and
// RewriteInside build it, is not one.
func Unwrap(exe, runner, line string) (string, bool) {
	if runner == "" {
		runner = filepath.Join(filepath.Dir(exe), confine.HelperName)
	}
	rest, inside := cutLead(line)
	env := !inside && rest != line
	word := func(lit string) bool {
		if r, ok := strings.CutPrefix(rest, lit); ok {
			rest = r
			return true
		}
		return false
	}
	quoted := func() bool {
		w, r, ok := cutQuoted(rest)
		if ok {
			rest = r
		}
		return ok && w != ""
	}
	switch {
	case (env || envPrefix() == "") && word(Quote(exe)+" sandbox --policy "):
		if !quoted() {
			return "", false
		}
		if word(" --policy-sha256 ") && !quoted() {
			return "", false
		}
	case word(Quote(runner) + " --spec "):
		if !quoted() || !word(" --spec-sha256 ") || !quoted() {
			return "", false
		}
		if inside && !word(" "+confine.InsideArg) {
			return "", false
		}
	default:
		return "", false
	}
	word(" --required")
	if !word(" -- " + Quote(Bash()) + " -c ") {
		return "", false
	}
	inner, r, ok := cutQuoted(rest)
	if !ok || r != "" {
		return "", false
	}
	return inner, true
}

// cutQuoted reads one word as Quote writes it from the start of s: its
// bytes and the rest of s.
func cutQuoted(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "'") {
		return "", s, false
	}
	var b strings.Builder
	s = s[1:]
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			return "", s, false
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		if r, ok := strings.CutPrefix(s, `\''`); ok {
			b.WriteByte('\'')
			s = r
			continue
		}
		return b.String(), s, true
	}
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
