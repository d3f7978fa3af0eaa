package shell_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/warden-run/warden/shell"
)

// Adversarial shapes of command line, each built to about n bytes. The
// analysis must take time linear in the input whatever the shape
// (BenchmarkAdversarial at 10 KB, 100 KB and 1 MB shows it).
var adversarial = []struct {
	name string
	make func(n int) string
	// tooDeep: the line nests shells beyond what warden analyses, so the
	// analysis fails (and the call is denied).
	tooDeep bool
}{
	{"nested-subst", func(n int) string {
		// echo $(echo $(echo ... x ...))
		k := n / 9
		return strings.Repeat("echo $(", k) + "x" + strings.Repeat(")", k)
	}, true},
	{"nested-quoted-subst", func(n int) string {
		// echo "$(echo "$(echo ... )")": quotes send it to the full parser.
		k := n / 11
		return strings.Repeat(`echo "$(`, k) + "x" + strings.Repeat(`)"`, k)
	}, true},
	{"nested-subshells", func(n int) string {
		// ( ( ( ls ) ) ): subshells nested to the size.
		return strings.Repeat("( ", n/4) + "ls" + strings.Repeat(" )", n/4)
	}, true},
	{"and-list", func(n int) string {
		// true && true && ... && rm -rf x
		return strings.Repeat("true && ", n/8) + "rm -rf x"
	}, false},
	{"deep-bash-c", func(n int) string {
		// bash -c 'bash -c '\''...'\''': nesting up to the size, then a
		// long argument.
		s := "rm -rf x"
		for len(s)*4+12 < n {
			s = "bash -c " + quote(s)
		}
		return s + " " + strings.Repeat("y", max(0, n-len(s)-1))
	}, false},
	{"long-heredoc", func(n int) string {
		// bash <<'EOF' with many lines of commands.
		return "bash <<'EOF'\n" + strings.Repeat("echo line && ls -la\n", n/20) + "EOF\n"
	}, false},
	{"many-pipes", func(n int) string {
		return strings.Repeat("cat | ", n/6) + "wc -l"
	}, false},
	{"long-word", func(n int) string {
		return "echo " + strings.Repeat("a", n)
	}, false},
	{"many-quotes", func(n int) string {
		return "echo " + strings.Repeat(`"a" 'b' `, n/8)
	}, false},
}

// quote quotes s for a POSIX shell in single quotes.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestAdversarialShapes: every shape is analysed to the right end (a
// command line nested too deep is an error, never an allow).
func TestAdversarialShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range adversarial {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := shell.Analyze(tc.make(10_000))
			if tc.tooDeep {
				if a.Err == nil {
					t.Errorf("analysed without error: %d commands", len(a.Commands))
				}
				return
			}
			if a.Err != nil || len(a.Commands) == 0 {
				t.Errorf("error %v, %d commands", a.Err, len(a.Commands))
			}
		})
	}
	// The rm at the end of the && list and inside the nested bash -c is seen.
	for _, name := range []string{"and-list", "deep-bash-c"} {
		for _, tc := range adversarial {
			if tc.name != name {
				continue
			}
			found := false
			for _, c := range shell.Analyze(tc.make(10_000)).Commands {
				found = found || c.Prog == "rm"
			}
			if !found {
				t.Errorf("%s: the rm was not found", name)
			}
		}
	}
}

// TestNestingLimit: 16 levels of ( $( and backticks are analysed, on the
// fast path and the full parser's; 17 are too deep, whatever the quoting.
func TestNestingLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		open, shut string
	}{
		{"subst", "echo $(", ")"},
		{"quoted-subst", `echo "$(`, `)"`},
		{"subshell", "( ", " )"},
		{"mixed", `( echo "$( `, ` )" )`},
	} {
		for _, depth := range []int{16, 17} {
			line := strings.Repeat(tc.open, depth) + "rm -rf x" + strings.Repeat(tc.shut, depth)
			if tc.name == "mixed" {
				line = strings.Repeat(tc.open, depth/2) + "rm -rf x" + strings.Repeat(tc.shut, depth/2)
				if depth%2 == 1 {
					line = "( " + line + " )"
				}
			}
			a := shell.Analyze(line)
			if depth == 17 {
				if !errors.Is(a.Err, shell.ErrTooDeep) {
					t.Errorf("%s at depth %d: %v, want ErrTooDeep", tc.name, depth, a.Err)
				}
				continue
			}
			rm := false
			for _, c := range a.Commands {
				rm = rm || c.Prog == "rm"
			}
			if a.Err != nil || !rm {
				t.Errorf("%s at depth %d: error %v, rm found %v", tc.name, depth, a.Err, rm)
			}
		}
	}
	// A line over the limit is an error, at once.
	if a := shell.Analyze("echo " + strings.Repeat("a", shell.MaxLine)); !errors.Is(a.Err, shell.ErrTooLong) {
		t.Errorf("a line over MaxLine: %v, want ErrTooLong", a.Err)
	}
	if a := shell.Analyze("echo " + strings.Repeat("a", shell.MaxLine-5)); a.Err != nil {
		t.Errorf("a line of MaxLine bytes: %v", a.Err)
	}
	// Parentheses in quotes and comments are data.
	for _, line := range []string{
		"echo '" + strings.Repeat("(", 40) + "'",
		`echo "` + strings.Repeat("(", 40) + `"`,
		"ls # " + strings.Repeat("(", 40),
		"echo " + strings.Repeat(`\(`, 40),
	} {
		if a := shell.Analyze(line); a.Err != nil {
			t.Errorf("%q: %v", line, a.Err)
		}
	}
}

// BenchmarkAdversarial analyses each shape at 10 KB, 100 KB and 1 MB (the
// time per op should grow about tenfold from one size to the next), and at
// the input limit of 32 MiB, which is over MaxLine.
func BenchmarkAdversarial(b *testing.B) {
	for _, tc := range adversarial {
		for _, n := range []int{10_000, 100_000, 1_000_000, 32 << 20} {
			line := tc.make(n)
			name := fmt.Sprintf("%s/%dKB", tc.name, n/1000)
			if n == 32<<20 {
				name = tc.name + "/32MiB" // the input limit: over MaxLine
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				a := shell.Get()
				defer shell.Put(a)
				for b.Loop() {
					a.Analyze(line)
				}
			})
		}
	}
}

// TestAnalysisMemoryCeiling: no command up to the line limit makes the
// analysis allocate more than a fixed multiple of its size: every
// adversarial shape at 1 MB, and brace expansions that would multiply it
// (bounded per word, per word's parts and per line: past the bounds the
// word is computed). The bound is 256 bytes per input byte plus 4 MiB: a
// line of short commands (true && true && ...) yields a command, its words
// and the parser's nodes for every 8 bytes, about 200 bytes per input
// byte. A brace bomb of 33 bytes once allocated gigabytes, and a 1 MB word
// of {1..9} ran for minutes.
func TestAnalysisMemoryCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	lines := map[string]string{
		"brace-bomb":    "echo {1..1000}{1..1000}{1..100}",
		"brace-range":   "echo {1..1000000}",
		"brace-many":    strings.Repeat("echo {a,b,c,d}{e,f,g,h}{i,j,k,l} ; ", 2000),
		"brace-nested":  "echo " + strings.Repeat("{a,", 200) + "x" + strings.Repeat("}", 200),
		"brace-at-size": "echo " + strings.Repeat("{1..9}", (shell.MaxLine-10)/6),
	}
	for _, tc := range adversarial {
		lines[tc.name] = tc.make(1_000_000)
	}
	for name, line := range lines {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		shell.Analyze(line)
		runtime.ReadMemStats(&after)
		used := after.TotalAlloc - before.TotalAlloc
		if limit := uint64(256*len(line) + 4<<20); used > limit {
			t.Errorf("%s (%d bytes): the analysis allocated %d bytes, over %d", name, len(line), used, limit)
		}
	}
}
