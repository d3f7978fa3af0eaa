package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

func codingEngine(tb testing.TB) *engine.Engine {
	tb.Helper()
	// go test runs a package's tests in its folder.
	p, err := policy.Load(filepath.Join("..", "examples", "coding", "warden.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	e, err := engine.Compile(p, workspace.New())
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func benchDecide(b *testing.B, call warden.ToolCall, want warden.Effect) {
	e := codingEngine(b)
	if d := e.Decide(call, nil).Decision; d.Decision != want {
		b.Fatalf("decision %s, want %s: %+v", d.Decision, want, d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.Decide(call, nil)
	}
}

// BenchmarkDecideSimple is a simple allowed command (target: <= 1us, 0 allocs).
func BenchmarkDecideSimple(b *testing.B) {
	benchDecide(b, warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "git status"}}, warden.Allow)
}

// BenchmarkDecideSimpleDeny is a simple denied command.
func BenchmarkDecideSimpleDeny(b *testing.B) {
	benchDecide(b, warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "rm -rf build"}}, warden.Deny)
}

// BenchmarkDecideCompound is a compound line (target: <= 5us).
func BenchmarkDecideCompound(b *testing.B) {
	benchDecide(b, warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "ls && git status | grep x; $(pwd)"}}, warden.Ask)
}

// BenchmarkDecideEdit is a file edit inside the workspace (path resolution).
func BenchmarkDecideEdit(b *testing.B) {
	benchDecide(b, warden.ToolCall{Tool: "Edit", Args: map[string]any{"file_path": "src/app.go"}}, warden.Allow)
}

// BenchmarkDecideParallel measures throughput on all cores.
func BenchmarkDecideParallel(b *testing.B) {
	e := codingEngine(b)
	call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "git status"}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.Decide(call, nil)
		}
	})
}

// The decision paths side by side on the simple and the compound command:
// Decide (what the session layer uses: the decision, the grants it used
// and the session rule it broke) against Explain (the full trace,
// for explain only).
func BenchmarkDecidePaths(b *testing.B) {
	e := codingEngine(b)
	for _, c := range []struct{ name, cmd string }{{"simple", "git status"}, {"compound", "ls && git status | grep x; $(pwd)"}} {
		call := warden.ToolCall{Tool: "Bash", Session: "s", Args: map[string]any{"command": c.cmd}}
		s := &engine.Session{}
		b.Run("decide/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e.Decide(call, s)
			}
		})
		b.Run("explain/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e.Explain(call, s)
			}
		})
	}
}
