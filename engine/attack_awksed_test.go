package engine_test

import (
	"strings"
	"testing"
)

// Class 4 of issue 31, awk and sed programs: a program that may run a
// command or write a file only stopped an allow, so under default: allow
// awk 'BEGIN{system("rm -rf x")}' ran past a deny rule for rm -rf, and
// sed 'w .git/config' wrote a protected path. The literal commands
// (system("..."), print | "...", "..." | getline, sed's e) are now command
// lines and the literal targets (print > "F", sed w F, s///w F) writes,
// sed r F a read (shell/progs/awksed.go); a computed target is a computed
// write or command, and the program itself stays a computed command.
func TestAwkSedPrograms(t *testing.T) {
	t.Parallel()
	forms := []string{
		`awk 'BEGIN{system("INNER")}'`,
		`echo a | awk '{print | "INNER"}'`,
		`awk 'BEGIN{"INNER" | getline x}'`,
		`echo a | sed 'e INNER'`,
	}
	var cases []soundCase
	for _, f := range forms {
		bashRunsInner(t, f)
		cases = append(cases, soundCase{f, sh(strings.ReplaceAll(f, "INNER", "rm -rf src")), "deny"})
	}
	cases = append(cases,
		soundCase{"print > a protected file", sh(`awk '{print > ".git/config"}' src/a.go`), "deny"},
		soundCase{"printf >> a protected file", sh(`awk '{printf "%s", $0 >> ".git/config"}' src/a.go`), "deny"},
		soundCase{"sed w", sh("sed -n 'w .git/config' src/a.go"), "deny"},
		soundCase{"sed s///w", sh("sed 's/a/b/w .git/config' src/a.go"), "deny"},
		soundCase{"sed r of a private file", sh("sed '1r .env' src/a.go"), "deny"},
		soundCase{"a computed target", sh(`awk '{print > $1}' src/a.go`), "notAllow"},
		soundCase{"a computed command", sh(`awk 'BEGIN{system(x)}'`), "notAllow"},
		soundCase{"s///e", sh("sed 's/a/b/e' src/a.go"), "notAllow"},
		// Controls: comparisons and plain programs.
		soundCase{"a comparison", sh(`awk '$1 > 3' src/a.go`), "allow"},
		soundCase{"a logical or", sh(`awk '$1 == "a" || $2 == "b"' src/a.go`), "allow"},
		soundCase{"print to standard error", sh(`awk '{print $1 > "/dev/stderr"}' src/a.go`), "allow"},
		soundCase{"a plain sed", sh("sed -n 's/a/b/p' src/a.go"), "allow"},
	)
	checkAllowDefault(t, cases)
}
