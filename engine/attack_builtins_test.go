package engine_test

import (
	"strings"
	"testing"
)

// Class 6 of issue 31, builtins that rebind or evaluate: after hash -p P
// NAME, NAME runs P; mapfile -C runs its callback; bash evaluates the
// subscript of an array element a builtin names (test -v, [ -v, read,
// let, printf -v, declare, local), which runs the command substitutions
// in it. They only stopped an allow; now the command NAME runs is judged
// as P with NAME's words, the callback as a line, and the command
// substitutions of the evaluated words as lines (the builtin stays a
// computed command).
func TestBuiltinsThatRebindOrEvaluate(t *testing.T) {
	t.Parallel()
	forms := []string{
		"hash -p /bin/sh ls; ls -c 'INNER'",
		"mapfile -C 'INNER #' -c 1 arr <<< x",
		"test -v 'a[$(INNER)]'",
		"[ -v 'a[$(INNER)]' ]",
		"read 'a[$(INNER)]' <<< x",
		"let 'a[$(INNER)]=1'",
		"printf -v 'a[$(INNER)]' x",
		"declare 'a[$(INNER)]=1'",
		"f() { local 'a[$(INNER)]=1'; }; f",
	}
	var cases []soundCase
	for _, f := range forms {
		bashRunsInner(t, f)
		cases = append(cases, soundCase{f, sh(strings.ReplaceAll(f, "INNER", "rm -rf src")), "deny"})
	}
	cases = append(cases,
		soundCase{"hash -p to a program", sh("hash -p /bin/rm ls; ls -rf src"), "deny"},
		soundCase{"enable -f loads a builtin", sh("enable -f ./x.so ls"), "notAllow"},
		soundCase{"an evaluated variable", sh(`x='a[$(ls)]'; echo $((x))`), "notAllow"},
		// Controls.
		soundCase{"mapfile", sh("mapfile -t arr < src/a.go"), "allow"},
		soundCase{"read", sh("read -r line <<< x"), "allow"},
		soundCase{"test -v of a name", sh("test -v HOME"), "allow"},
	)
	checkAllowDefault(t, cases)
}
