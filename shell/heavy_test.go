package shell_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/warden-run/warden/shell"
)

// heavySize is the size of the heavy lines: 20 KB, and every one of them
// is decided in well under 100 ms and 50 MB (BenchmarkHeavyLines).
const heavySize = 20_000

// rep repeats s to about n bytes.
func rep(s string, n int) string { return strings.Repeat(s, max(1, n/len(s))) }

// heavy are command lines of about n bytes, each built to make some part
// of the analysis work hard: brace expansion, wrappers, globs, folders,
// nesting, arithmetic. complex: the line is refused as too complex (or too
// deep) rather than analysed.
var heavy = []struct {
	name    string
	make    func(n int) string
	complex bool
}{
	{"braces-nested", func(n int) string { return "echo " + rep("{a,", n*3/4) + "x" + rep("}", n/4) }, true},
	{"braces-nested-prefix", func(n int) string { return "echo " + rep("a{b,", n*4/5) + "x" + rep("}", n/5) }, true},
	{"braces-deep", func(n int) string { return "echo " + rep("{", n/2) + "a,b" + rep("}", n/2) }, true},
	{"braces-unclosed", func(n int) string { return "echo " + rep("{a,", n) }, true},
	{"braces-long-list", func(n int) string { return "echo {" + rep("a,", n) + "b}" }, false},
	{"braces-ranges", func(n int) string { return "echo " + rep("{1..3}", n) }, true},
	{"braces-many-words", func(n int) string { return rep("echo {a,b}{c,d}{e,f} ; ", n) }, false},
	{"many-words", func(n int) string { return "echo " + rep("word ", n) }, false},
	{"many-globs", func(n int) string { return "ls " + rep("a* ", n) }, true},
	{"arithmetic", func(n int) string { return "echo $((" + rep("1+", n) + "1))" }, false},
	{"arithmetic-nested", func(n int) string { return "echo $((" + rep("(", n/2) + "1" + rep(")", n/2) + "))" }, true},
	{"subst-nested", func(n int) string { return rep("echo $(", n/2) + "x" + rep(")", n/2) }, true},
	{"subst-many", func(n int) string { return "echo " + rep("$(ls) ", n) }, false},
	{"backticks-many", func(n int) string { return "echo " + rep("`ls` ", n) }, false},
	{"param-nested", func(n int) string { return "echo " + rep("${a:-", n*3/4) + "x" + rep("}", n/4) }, false},
	{"redirections", func(n int) string { return "echo " + rep(">a ", n) }, false},
	{"assignments", func(n int) string { return rep("a=b ", n) + "ls" }, false},
	{"env-assignments", func(n int) string { return "env " + rep("A=b ", n) + "ls" }, false},
	{"sudo-chain", func(n int) string { return rep("sudo ", n) + "ls" }, true},
	{"xargs-chain", func(n int) string { return rep("xargs ", n) + "ls" }, true},
	{"nice-chain", func(n int) string { return rep("nice -n 1 ", n) + "ls" }, true},
	{"cd-chain", func(n int) string { return rep("cd a && ", n) + "git status" }, true},
	{"find-exec", func(n int) string { return "find . " + rep("-exec rm {} \\; ", n) }, false},
	{"bash-c-many", func(n int) string { return rep("bash -c 'ls' ; ", n) }, false},
	{"case-arms", func(n int) string { return "case x in " + rep("a) ls;; ", n) + "esac" }, false},
	{"for-words", func(n int) string { return "for i in " + rep("a ", n) + "; do rm $i; done" }, false},
	{"groups-nested", func(n int) string { return rep("{ ", n/2) + "ls;" + rep(" }", n/2) }, false},
	{"heredoc-substs", func(n int) string { return "cat <<EOF\n" + rep("$(ls)\n", n) + "EOF\n" }, false},
	{"paths-up", func(n int) string { return "cat " + rep("../a/ ", n) }, false},
	{"ansi-c", func(n int) string { return "echo $'" + rep(`\x41`, n) + "'" }, false},
}

// TestHeavyLines: every heavy line of 20 KB is analysed or refused (a
// line too complex or too deep is an error, so the call is denied, never
// allowed), and allocates less than 50 MB.
func TestHeavyLines(t *testing.T) {
	for _, tc := range heavy {
		t.Run(tc.name, func(t *testing.T) {
			line := tc.make(heavySize)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			a := shell.Analyze(line)
			runtime.ReadMemStats(&after)
			if used := after.TotalAlloc - before.TotalAlloc; used > 50<<20 {
				t.Errorf("%d bytes: the analysis allocated %d MB, over 50 MB", len(line), used>>20)
			}
			refused := errors.Is(a.Err, shell.ErrTooComplex) || errors.Is(a.Err, shell.ErrTooDeep)
			if tc.complex != refused {
				t.Errorf("%d bytes: error %v, want refused as too complex: %v", len(line), a.Err, tc.complex)
			}
		})
	}
}

// TestTooComplexBounds: the bounds refuse shapes no real command has, and
// leave the real ones alone.
func TestTooComplexBounds(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"mkdir -p src/{a,b,c}/{x,y,z} && cp file{,.bak}",
		"echo " + rep("{a,", 3*40) + "x" + strings.Repeat("}", 40),
		"sudo -u me env A=b B=c nice -n 5 timeout 10 nohup stdbuf -o0 ionice -c3 ls",
		rep("sudo ", 5*20) + "ls",
		"ls *.go *.md src/*/*.go && rm -f build/*.o",
		rep("cd a && ", 8*100) + "ls",
	} {
		if a := shell.Analyze(line); a.Err != nil {
			t.Errorf("%.60q...: %v", line, a.Err)
		}
	}
	for _, line := range []string{
		"echo " + rep("{a,", 3*129),
		rep("sudo ", 5*40) + "ls",
		rep("env ", 4*40) + "ls",
		"ls " + rep("a* ", 3*300),
		rep("cd a && ", 8*300) + "ls",
		// Inside a shell's -c string too.
		"bash -c " + fmt.Sprintf("%q", "echo "+rep("{a,", 3*200)),
	} {
		if a := shell.Analyze(line); !errors.Is(a.Err, shell.ErrTooComplex) {
			t.Errorf("%.60q...: %v, want ErrTooComplex", line, a.Err)
		}
	}
}

// BenchmarkHeavyLines analyses each heavy line at 20 KB (and at 80 KB:
// the time per op grows about fourfold, linearly).
func BenchmarkHeavyLines(b *testing.B) {
	for _, tc := range heavy {
		for _, n := range []int{heavySize, 4 * heavySize} {
			line := tc.make(n)
			b.Run(fmt.Sprintf("%s/%dKB", tc.name, n/1000), func(b *testing.B) {
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
