package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bashRunsInner confirms with real bash that a form runs its inner line:
// form holds INNER, replaced by a command that creates a marker file.
func bashRunsInner(t *testing.T, form string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	line := strings.ReplaceAll(form, "INNER", "touch marker")
	cmd := exec.Command(bash, "-c", line)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("")
	cmd.Run() // the marker says whether it ran, whatever the exit status
	if _, err := os.Stat(filepath.Join(dir, "marker")); err != nil {
		t.Errorf("bash -c %q did not run the inner line: the test's premise is wrong", line)
	}
}

// Class 2 of issue 31, shell options that take a value: bash -o pipefail
// -c LINE read "pipefail" as a script file, so LINE was never analysed
// (and a shell fed on standard input after -o NAME was taken for one
// running a script). A shell's words are now read as the shell reads them
// (shell/shellopts.go: clusters, -o/+o NAME, -O/+O NAME, long options,
// --rcfile F, -c anywhere among the options); a shell whose options warden
// cannot read is a computed command.
func TestShellOptionsWithValues(t *testing.T) {
	t.Parallel()
	forms := []string{
		"bash -o pipefail -c 'INNER'",
		"bash -euo pipefail -c 'INNER'",
		"bash -O extglob -c 'INNER'",
		"bash +O extglob -c 'INNER'",
		"bash +o pipefail -c 'INNER'",
		"bash --rcfile /dev/null -c 'INNER'",
		"bash --init-file /dev/null -c 'INNER'",
		"bash -co pipefail 'INNER'",
		"bash -oc pipefail 'INNER'",
		"bash -c -e 'INNER'",
		"sh -o errexit -c 'INNER'",
		"dash -e -u -c 'INNER'",
		"echo 'INNER' | bash -o pipefail",
		"bash -o pipefail <<< 'INNER'",
		"bash -s -- a b <<< 'INNER'",
	}
	var cases []soundCase
	for _, f := range forms {
		bashRunsInner(t, f)
		cases = append(cases, soundCase{f, sh(strings.ReplaceAll(f, "INNER", "rm -rf src")), "deny"})
	}
	cases = append(cases,
		soundCase{"zsh -o", sh("zsh -o pipefail -c 'rm -rf src'"), "deny"},
		soundCase{"ksh -o", sh("ksh -o pipefail -c 'rm -rf src'"), "deny"},
		soundCase{"fish --command", sh("fish --command 'rm -rf src'"), "deny"},
		soundCase{"fish -C", sh("fish -C 'rm -rf src'"), "deny"},
		// Options warden cannot read: a computed command.
		soundCase{"an unknown letter", sh("bash -Z -c 'ls'"), "notAllow"},
		soundCase{"allexport", sh("bash -o allexport -c 'ls'"), "notAllow"},
		soundCase{"-a", sh("bash -a -c 'ls'"), "notAllow"},
		soundCase{"-k", sh("bash -k -c 'ls'"), "notAllow"},
		soundCase{"an unknown long option", sh("bash --frob -c 'ls'"), "notAllow"},
		soundCase{"computed options", sh("bash $OPTS -c 'ls'"), "notAllow"},
		// Controls.
		soundCase{"bash -euo pipefail", sh("bash -euo pipefail -c 'ls src'"), "allow"},
		soundCase{"bash -lc", sh("bash -lc 'ls'"), "allow"},
		soundCase{"zsh -lc", sh("zsh -lc 'ls'"), "allow"},
		soundCase{"bash -c with $0", sh("bash -c 'ls' arg0"), "allow"},
		soundCase{"bash -s on a here-string", sh("bash -s <<< 'ls'"), "allow"},
		soundCase{"bash --norc", sh("bash --norc --noprofile -c 'ls'"), "allow"},
		soundCase{"bash -x", sh("bash -x -c 'ls'"), "allow"},
		soundCase{"a script", sh("bash build.sh"), "allow"},
	)
	checkAllowDefault(t, cases)
}
