package engine_test

import (
	"strings"
	"testing"
)

// Red-team tests of awk and sed programs: the commands they run and the files they write.

// sed's script however its option is spelled: clustered with other short
// options, abbreviated, or read from a file.
func TestRedteam3SedScript(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"sed -ne e command", sh("sed -ne '1e touch x' pkg/app/x"), "notAllow"},
		{"sed -se e command", sh("sed -se '1e touch x' pkg/app/x"), "notAllow"},
		{"sed -Ee e command", sh("sed -Ee '1e touch x' pkg/app/x"), "notAllow"},
		{"sed --expr VALUE", sh("sed --expr 'e id' pkg/app/x"), "notAllow"},
		{"sed --expr=", sh("sed --expr='e id' pkg/app/x"), "notAllow"},
		{"sed --e=", sh("sed --e='e id' pkg/app/x"), "notAllow"},
		{"sed -ne w .git/config", sh("sed -ne 'w .git/config' pkg/app/x"), "notAllow"},
		{"sed -nf script file", sh("sed -nf s.sed pkg/app/x"), "notAllow"},
		{"sed --fi= script file", sh("sed --fi=s.sed pkg/app/x"), "notAllow"},
		// Handled.
		{"handled: sed -e e command", sh("sed -e '1e touch x' pkg/app/x"), "notAllow"},
		{"handled: sed -f script file", sh("sed -f s.sed pkg/app/x"), "notAllow"},
		// Allowed.
		{"sed -n p", sh("sed -n p pkg/app/x"), "allow"},
		{"sed -ne p", sh("sed -ne 1p pkg/app/x"), "allow"},
		{"sed --expression=p", sh("sed --expression=1p pkg/app/x"), "allow"},
	})
}

// sed -i's backup, named by a suffix given in a cluster or an abbreviated
// option: the original is renamed to it.
func TestRedteam3SedBackup(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"sed -ni backup into .git/hooks", sh("sed -ni'.git/hooks/*' p pre-commit"), "deny"},
		{"sed -Ei backup into .git/hooks", sh("sed -Ei'.git/hooks/*' p pre-commit"), "deny"},
		{"sed --in= backup", sh("sed --in='.git/hooks/*' p pre-commit"), "deny"},
		{"sed --in-pl= backup", sh("sed --in-pl='.git/hooks/*' p pre-commit"), "deny"},
		{"sed -ni backup outside", sh("sed -ni'../*' p src/a.go"), "notAllow"},
		{"sed -ni backup in /tmp", sh("sed -ni'/tmp/*' p src/a.go"), "notAllow"},
		// Handled.
		{"handled: sed -i backup into .git/hooks", sh("sed -i'.git/hooks/*' p pre-commit"), "deny"},
		{"handled: sed --in-place= backup", sh("sed --in-place='.git/hooks/*' p pre-commit"), "deny"},
		// Allowed.
		{"sed -i.bak", sh("sed -i.bak s/a/b/ src/a.go"), "allow"},
		{"sed -ni.bak", sh("sed -ni.bak 1p src/a.go"), "allow"},
		{"sed -i", sh("sed -i 1d src/a.go"), "allow"},
	})
}

// awk's program however its option is spelled, and what a program can do
// that the text shows only indirectly.
func TestRedteam3Awk(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"awk --sou=", sh(`awk --sou='BEGIN{system("id")}'`), "notAllow"},
		{"awk -be", sh(`awk -be 'BEGIN{system("id")}'`), "notAllow"},
		{"awk -Pe", sh(`awk -Pe 'BEGIN{system("id")}'`), "notAllow"},
		{"awk -bf program file", sh("awk -bf prog.awk pkg/app/x"), "notAllow"},
		{"awk @load", sh(`awk '@load "./evil"; BEGIN{}'`), "notAllow"},
		{"awk @include", sh(`awk '@include "x"; BEGIN{}'`), "notAllow"},
		{"awk indirect call", sh(`awk 'BEGIN{f="sys" "tem"; @f("id")}'`), "notAllow"},
		{"awk ARGV reads .env", sh(`awk 'BEGIN{ARGV[1]=".e" "nv"; ARGC=2} {print}'`), "notAllow"},
		{"awk SYMTAB", sh(`awk 'BEGIN{SYMTAB["ARGC"]=2} {print}' pkg/app/x`), "notAllow"},
		// Handled.
		{"handled: awk system", sh(`awk 'BEGIN{system("id")}'`), "notAllow"},
		{"handled: awk -f", sh("awk -f prog.awk pkg/app/x"), "notAllow"},
		// Allowed.
		{"awk print", sh("awk '{print $1}' src/a.go"), "allow"},
		{"awk -F -e", sh("awk -F: -e '{print $1}' src/a.go"), "allow"},
		{"awk --source=", sh("awk --source='{print $1}' src/a.go"), "allow"},
	})
}

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
