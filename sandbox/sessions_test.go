//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestTmuxServerOutside: a tmux server that runs outside the sandbox (the
// agent's own terminal, say) runs whatever a client asks, so a confined
// `tmux new-session -d CMD` would run CMD unconfined. The server's socket
// folder is hidden: the confined client cannot reach it, and CMD's write
// outside the workspace never happens. A control shows the premise: the
// same request from outside the sandbox runs.
func TestTmuxServerOutside(t *testing.T) {
	needKernel(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	t.Parallel()
	f := newFixture(t, 0)
	base := filepath.Join(f.outside, "tmuxdir")
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	env := "TMUX_TMPDIR=" + base
	tmux := func(args ...string) {
		t.Helper()
		cmd := f.command(append([]string{"tmux"}, args...)...)
		cmd.Env = append(cmd.Env, env)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
	}
	tmux("new-session", "-d", "-s", "outside", "sleep 600")
	t.Cleanup(func() {
		cmd := f.command("tmux", "kill-server")
		cmd.Env = append(cmd.Env, env)
		cmd.Run()
	})
	// Polls for as long as a loaded machine may need; the file's
	// appearance ends it.
	waitFile := func(p string) bool {
		for range 2400 {
			if _, err := os.Stat(p); err == nil {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		return false
	}
	control := filepath.Join(f.outside, "control")
	tmux("new-session", "-d", "touch "+control)
	if !waitFile(control) {
		t.Fatal("premise: tmux new-session -d from outside did not run its command")
	}

	escaped := filepath.Join(f.outside, "escaped")
	out, code := f.run(t, `tmux new-session -d "touch $OUT/escaped"; echo "tmux exit $?"`, env)
	t.Logf("confined tmux (exit %d): %s", code, out)
	// The server runs requests in order: once a later request from
	// outside has run, an earlier one would have too.
	after := filepath.Join(f.outside, "after")
	tmux("new-session", "-d", "touch "+after)
	if !waitFile(after) {
		t.Fatal("tmux new-session -d from outside did not run its command")
	}
	if _, err := os.Stat(escaped); err == nil {
		t.Fatal("a confined tmux client had the outside server run a command: it wrote outside the workspace")
	}
	// With $TMUX set, as inside a tmux pane, the same holds.
	out, _ = f.run(t, `tmux new-session -d "touch $OUT/escaped"; tmux run-shell "touch $OUT/escaped"; echo "tmux exit $?"`, env, "TMUX="+filepath.Join(base, "tmux-0", "default")+",1,0")
	tmux("new-session", "-d", "touch "+after+"2")
	if !waitFile(after + "2") {
		t.Fatal("tmux new-session -d from outside did not run its command")
	}
	if _, err := os.Stat(escaped); err == nil {
		t.Fatalf("a confined tmux client with $TMUX set had the outside server run a command\n%s", out)
	}
}
