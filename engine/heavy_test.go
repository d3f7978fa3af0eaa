package engine_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

// rep repeats s to about n bytes.
func rep(s string, n int) string { return strings.Repeat(s, max(1, n/len(s))) }

// heavyLines are 20 KB command lines of the shapes that once took seconds
// and gigabytes to decide (nested braces, chains of wrappers, many globs
// or changes of folder), and others that stress the analysis.
var heavyLines = []struct {
	name string
	line string
}{
	{"braces-nested", "echo " + rep("{a,", 15_000) + "x" + rep("}", 5_000)},
	{"braces-deep", "echo " + rep("{", 10_000) + "a,b" + rep("}", 10_000)},
	{"braces-unclosed", "echo " + rep("{a,", 20_000)},
	{"braces-long-list", "echo {" + rep("a,", 20_000) + "b}"},
	{"braces-many-words", rep("echo {a,b}{c,d}{e,f} ; ", 20_000)},
	{"many-words", "echo " + rep("word ", 20_000)},
	{"many-globs", "ls " + rep("a* ", 20_000)},
	{"arithmetic", "echo $((" + rep("1+", 20_000) + "1))"},
	{"subst-nested", rep("echo $(", 10_000) + "x" + rep(")", 10_000)},
	{"subst-many", "echo " + rep("$(ls) ", 20_000)},
	{"redirections", "echo " + rep(">a ", 20_000)},
	{"env-assignments", "env " + rep("A=b ", 20_000) + "ls"},
	{"sudo-chain", rep("sudo ", 20_000) + "ls"},
	{"xargs-chain", rep("xargs ", 20_000) + "ls"},
	{"cd-chain", rep("cd a && ", 20_000) + "git status"},
	{"paths-up", "cat " + rep("../a/ ", 20_000)},
	{"groups-nested", rep("{ ", 10_000) + "ls;" + rep(" }", 10_000)},
}

// TestHeavyLineRefused: a line beyond the analysis's bounds is denied as
// UNPARSABLE_COMMAND, with a reason that says it is too complex and a
// suggestion, even when every word of it would be allowed (echo is).
func TestHeavyLineRefused(t *testing.T) {
	t.Parallel()
	e := codingEngine(t)
	for _, line := range []string{
		"echo " + rep("{a,", 20_000),
		rep("sudo ", 20_000) + "echo hi",
		"echo " + rep("a* ", 20_000),
	} {
		d := e.Decide(warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": line}}, nil).Decision
		if d.Decision != warden.Deny || d.Code != warden.CodeUnparsable || !strings.Contains(d.Reason, "too complex") || d.Suggestion == "" {
			t.Errorf("%.40q...: %s %s %q %q; want deny UNPARSABLE_COMMAND, too complex, with a suggestion", line, d.Decision, d.Code, d.Reason, d.Suggestion)
		}
	}
}

// TestHeavyLinesMemory: no heavy line makes a decision allocate 50 MB.
func TestHeavyLinesMemory(t *testing.T) {
	e := codingEngine(t)
	for _, tc := range heavyLines {
		call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": tc.line}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := e.Decide(call, nil).Decision
		runtime.ReadMemStats(&after)
		if used := after.TotalAlloc - before.TotalAlloc; used > 50<<20 {
			t.Errorf("%s: deciding allocated %d MB, over 50 MB (%s)", tc.name, used>>20, d.Decision)
		}
	}
}

// BenchmarkDecideHeavy decides each heavy line of 20 KB with the coding
// example (target: well under 100 ms and 50 MB each).
func BenchmarkDecideHeavy(b *testing.B) {
	e := codingEngine(b)
	for _, tc := range heavyLines {
		call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": tc.line}}
		b.Run(fmt.Sprintf("%s/%dKB", tc.name, len(tc.line)/1000), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Decide(call, nil)
			}
		})
	}
}
