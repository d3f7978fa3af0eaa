package engine_test

import (
	"strings"
	"testing"
)

// Class 5 of issue 31, eval, source, trap and stdin shells with partly
// computed text: eval "rm -rf $X" was not read at all (only a wholly
// literal eval was), so under default: allow it ran, past a deny rule for
// rm -rf. The literal words are now analysed as a line, with each
// expansion a computed word (shell/partial.go), and what the values hold,
// which the shell reads as code, is a computed command.
func TestPartlyComputedText(t *testing.T) {
	t.Parallel()
	// X is empty, so each form runs the literal text alone: bash confirms
	// that the literal words are what runs.
	forms := []string{
		`eval "INNER $X"`,
		`bash -c "INNER $X"`,
		`sh -c "INNER; $X"`,
		`trap "INNER $X" EXIT`,
		`echo "INNER $X" | bash`,
		`bash <<< "INNER $X"`,
		`source /dev/stdin <<< "INNER $X"`,
		"bash <<EOF\nINNER $X\nEOF",
	}
	var cases []soundCase
	for _, f := range forms {
		bashRunsInner(t, f)
		cases = append(cases, soundCase{f, sh(strings.ReplaceAll(f, "INNER", "rm -rf src")), "deny"})
	}
	cases = append(cases,
		// The computed rest is a computed command.
		soundCase{"eval of a variable", sh(`eval "$CMD"`), "notAllow"},
		soundCase{"eval of literal text and a value", sh(`eval "ls $X"`), "notAllow"},
		soundCase{"a here-document with an expansion", sh("bash <<EOF\nls $X\nEOF"), "notAllow"},
		soundCase{"source of a process substitution", sh(`source <(echo 'rm -rf src')`), "notAllow"},
		soundCase{"source of a computed file", sh(`. "$F"`), "notAllow"},
		soundCase{"a protected path in the literal words", sh(`eval "echo x > .git/config $X"`), "deny"},
		// Controls: wholly literal text is judged as before.
		soundCase{"a literal eval", sh(`eval 'ls src'`), "allow"},
		soundCase{"a literal here-string", sh(`bash <<< 'ls src'`), "allow"},
		soundCase{"a literal trap", sh(`trap 'echo done' EXIT`), "allow"},
		soundCase{"a script in the workspace", sh(`source ./env.sh`), "allow"},
	)
	checkAllowDefault(t, cases)
}
