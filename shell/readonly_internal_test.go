package shell

import (
	"strings"
	"testing"

	"github.com/warden-run/warden/shell/progs"
)

// The attack on kind safe: every option of a read-only program whose
// table says it writes, removes, runs a program, changes the folder or
// has any effect but a read must keep the command out of kind safe, in
// each spelling, with a value attached or as the next word.
func TestReadOnlyKeepsOutEveryOptionWithAnEffect(t *testing.T) {
	t.Parallel()
	tried := 0
	keys := make([]string, 0, len(readOnly))
	for k := range readOnly {
		keys = append(keys, k)
	}
	for prog, subs := range readOnlySubs {
		for sub := range subs {
			keys = append(keys, prog+" "+sub)
		}
	}
	for _, key := range keys {
		f := strings.Fields(key)
		spec := progs.Lookup(f[0])
		if spec == nil {
			t.Errorf("%s: no table", key)
			continue
		}
		if len(f) > 1 {
			if spec = spec.Sub(f[1]); spec == nil {
				t.Errorf("%s: no subcommand table", key)
				continue
			}
		}
		for _, group := range strings.Fields(spec.Opts) {
			for _, spelling := range strings.Split(group, "|") {
				name, arg, flag := optNotation(spelling)
				if !effectful(arg, flag) {
					continue
				}
				var lines []string
				if strings.HasSuffix(arg, "?") {
					// An optional value: bare, the default is used (git
					// grep -O opens the pager).
					lines = []string{key + " " + name + " src/a.go", key + " " + name + "=x src/a.go"}
				} else if arg != "" {
					lines = []string{key + " " + name + " x src/a.go", key + " " + name + "=x src/a.go"}
					if !strings.HasPrefix(name, "--") {
						lines = append(lines, key+" "+name+"x src/a.go")
					}
				} else {
					lines = []string{key + " " + name + " src/a.go"}
				}
				for _, l := range lines {
					tried++
					a := Analyze(l)
					for _, c := range a.Commands {
						if c.Reads && c.Risk == "" && (c.Prog == f[0]) {
							t.Errorf("%s: kind safe, though %s has an effect (%s%s)", l, name, arg, flag)
						}
					}
				}
			}
		}
	}
	if tried < 20 {
		t.Errorf("only %d effectful options tried", tried)
	}
	// Options with no effect in the tables that page, assign or run.
	for _, l := range []string{"git -p log", "git --paginate log", "git -c core.pager=less log", "git log --ext-diff -p",
		"git diff --textconv", "git log --show-signature", "printf -v x '%s' y", "rg -z pat src", "rg --search-zip pat",
		"git -C .. log", "sed -n 1w/tmp/x src/a.go", "sed -i s/a/b/ src/a.go", "sort -o out src/a.go", "tree -o out src",
		"sort --compress-program=gzip src/a.go", "uniq src/a.go out", "git diff --output=x", "less src/a.go", "awk '{print}' src/a.go",
		"date -s 2020-01-01", "kill 1", "git branch -D main", "git log $X"} {
		a := Analyze(l)
		for _, c := range a.Commands {
			if c.Reads && c.Risk == "" {
				t.Errorf("%s: %s is kind safe", l, c.Prog)
			}
		}
	}
	// Controls: the everyday read-only commands are kind safe.
	for _, l := range []string{"printf '%s\\n' a b", "sed -n 1,3p src/a.go", "nl src/a.go", "tac src/a.go", "base64 src/a.go",
		"sort -u src/a.go", "uniq -c src/a.go", "cut -d: -f1 src/a.go", "jq .name package.json", "git log --oneline -5",
		"git show --stat HEAD", "git diff HEAD~1", "go --version", "cargo --help", "git --version", "wc -l src/a.go",
		"grep -rn TODO src", "rg -n TODO src", "ls -la", "head -5 src/a.go", "git --no-pager log -3"} {
		a := Analyze(l)
		if a.Err != nil || len(a.Commands) != 1 || !a.Commands[0].Reads || a.Commands[0].Risk != "" {
			t.Errorf("%s: not kind safe (%+v)", l, a.Commands)
		}
	}
}

// optNotation splits one spelling of the table notation: "-o=W" is -o
// with a value that is written, "-i[=]:I" -i with an optional value and
// the flag I.
func optNotation(s string) (name, arg, flag string) {
	if i := strings.IndexByte(s, ':'); i > 0 {
		s, flag = s[:i], s[i+1:]
	}
	if i := strings.IndexByte(s, '['); i > 0 {
		return s[:i], strings.TrimSuffix(strings.TrimPrefix(s[i:], "[="), "]") + "?", flag
	}
	if i := strings.IndexByte(s, '='); i > 0 {
		return s[:i], s[i+1:] + "=", flag
	}
	return s, "", flag
}

func effectful(arg, flag string) bool {
	if flag != "" {
		return true
	}
	a := strings.TrimRight(arg, "=?")
	if arg == "" || a == "" {
		return false
	}
	switch a[0] {
	case 'R', 'L', 'P', 'Q', '2', 'V', '@':
		return false
	}
	return true
}
