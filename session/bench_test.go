package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

// BenchmarkTrackerDecide measures the path a hook runs for a call, the
// session tracker's decision, beside the engine's decision alone on the same
// call (examples/coding): the tracker adds the session read and update, the
// grants and history reads and the audit record, one SQLite transaction
// with synchronous=FULL. The store lives in a memory file system
// (/dev/shm) where there is one, so the figure is warden's work and
// SQLite's, not the disk's flush.
func BenchmarkTrackerDecide(b *testing.B) {
	// go test runs a package's tests in its folder.
	pol, err := policy.Load(filepath.Join("..", "examples", "coding", "warden.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	eng, err := engine.Compile(pol, workspace.New())
	if err != nil {
		b.Fatal(err)
	}
	base := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "warden-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	tr := session.New(eng, st)
	runs := 0
	for _, c := range []struct {
		name string
		cmd  string
		want warden.Effect
	}{
		{"simple", "git status", warden.Allow},
		{"compound", "ls && git status | grep x", warden.Allow},
		{"deny", "rm -rf build", warden.Deny},
	} {
		call := warden.ToolCall{Tool: "Bash", Session: "bench-" + c.name, Role: "", Args: map[string]any{"command": c.cmd}}
		b.Run("engine/"+c.name, func(b *testing.B) {
			if d := eng.Decide(call, nil).Decision; d.Decision != c.want {
				b.Fatalf("engine: %s, want %s", d.Decision, c.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				eng.Decide(call, nil)
			}
		})
		// The tracker in a new session, and in one whose history already
		// holds 500 calls (what the sequence rules read on every decision).
		for _, hist := range []int{0, 500} {
			name := "tracker/" + c.name
			if hist > 0 {
				name += fmt.Sprintf("/history-%d", hist)
			}
			b.Run(name, func(b *testing.B) {
				runs++
				call := call
				call.Session = fmt.Sprintf("bench-%s-%d", c.name, runs)
				for i := range hist {
					if _, err := st.AppendAudit(ctx, warden.AuditRecord{Session: call.Session, Tool: "Bash", Decision: warden.Allow,
						Args: map[string]any{"command": fmt.Sprintf("go test ./pkg%d/...", i)}, Mode: "enforce"}); err != nil {
						b.Fatal(err)
					}
				}
				if r, err := tr.Decide(ctx, call, session.Options{}); err != nil || r.Decision.Decision != c.want {
					b.Fatalf("tracker: %v %+v, want %s", err, r.Decision, c.want)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := tr.Decide(ctx, call, session.Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
