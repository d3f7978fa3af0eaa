package cli

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/internal/hookd/server"
)

// TestHookdHeavyLineDelaysNoOtherSession: while one session's call (a 20
// KB line of nested braces) is being decided, another session's ls is
// answered; then the heavy one is answered too, denied as too complex.
// The heavy call is held inside its decision (the handler's Stall seam)
// until the light one has its answer: events, no clock.
func TestHookdHeavyLineDelaysNoOtherSession(t *testing.T) {
	dir, err := os.MkdirTemp("", "hookd-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s", "hookd.sock")
	heavy := "ls " + strings.Repeat("{a,", 7000)
	inside, release := make(chan struct{}), make(chan struct{})
	srv := server.New(sock, time.Minute, log.New(io.Discard, "", 0), func(ctx context.Context, rt *handler.Runtime, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		data, _ := io.ReadAll(stdin)
		if strings.Contains(string(data), `"heavy"`) {
			rt.Stall = func() {
				close(inside)
				<-release
			}
		}
		return runHookWith(ctx, &Env{Args: args, Stdin: strings.NewReader(string(data)), Stdout: stdout, Stderr: stderr}, rt, false)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hookd: %v", err)
		}
	}()
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if _, err := hookd.Ask(sock, &hookd.Request{Op: hookd.OpPing}, time.Second); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("hookd did not come up")
		}
	}
	cwd := project(t, hookTestPolicy)
	event := func(session, cmd string) string {
		js, _ := json.Marshal(map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "PreToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "tool_use_id": "t-" + session})
		return string(js)
	}
	type answer struct {
		decision, reason string
	}
	heavyDone := make(chan answer, 1)
	go func() {
		// Not viaClient: it may fail the test, which only the test's own
		// goroutine may do.
		var out, errb strings.Builder
		c := &hookd.Client{Stdin: strings.NewReader(event("heavy", heavy)), Stdout: &out, Stderr: &errb, Socket: sock,
			Bin: filepath.Join(dir, "no-warden-here")}
		c.Run([]string{"claude"})
		var m map[string]any
		json.Unmarshal([]byte(out.String()), &m)
		d, r := permission(m)
		heavyDone <- answer{d, r + errb.String()}
	}()
	select {
	case <-inside:
	case a := <-heavyDone:
		t.Fatalf("the heavy call was answered (%s %q) before it reached its decision", a.decision, a.reason)
	}
	// The heavy call is in its decision; another session's call is
	// answered meanwhile.
	_, m, _ := viaClient(t, sock, event("light", "ls -la"), "claude")
	if d, r := permission(m); d != "allow" {
		t.Errorf("the light session's ls while a heavy call is decided: %s %q, want allow", d, r)
	}
	select {
	case a := <-heavyDone:
		t.Fatalf("the heavy call was answered (%s) before it was let go", a.decision)
	default:
	}
	close(release)
	if a := <-heavyDone; a.decision != "deny" || !strings.Contains(a.reason, "too complex") {
		t.Errorf("the heavy line: %s %q, want deny as too complex", a.decision, a.reason)
	}
}
