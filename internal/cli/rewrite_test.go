package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/policy"
)

// The policies of TestPolicyRewriteNeverAllowsMore. Both ask about python
// and deny rm; many prefixes of either allow both (the allow-all rule comes
// first, and a prefix cut after "effect: allow" has no matcher).
const (
	rewriteOld = `version: 1
default: ask
rules:
  - id: allow-shell
    effect: allow
    tool: shell
    command: "*"
  - id: ask-python
    effect: ask
    tool: shell
    command: ["python *", "python3 *"]
    message: Running Python needs the user's approval.
    suggestion: Ask the user.
  - id: no-rm
    effect: deny
    tool: shell
    command: "rm *"
    message: Deleting files is blocked.
    suggestion: Move the file to the attic instead.
`
	rewriteNew = `version: 1
default: ask
rules:
  - id: allow-shell-2
    effect: allow
    tool: shell
    command: "*"
  - id: ask-python
    effect: ask
    tool: shell
    command: ["python *"]
    message: Python scripts need the user's approval first.
    suggestion: Ask the user to run it.
  - id: no-rm
    effect: deny
    tool: shell
    command: "rm *"
    message: Deleting files is not allowed here.
    suggestion: Move the file to the attic.
`
)

// TestPolicyRewriteNeverAllowsMore rewrites a policy in place, byte by
// byte and line by line, while hook calls run through hookd and through
// `warden hook`: no call is allowed that neither the old nor the new
// policy allows.
func TestPolicyRewriteNeverAllowsMore(t *testing.T) {
	sock := startHookd(t)
	cwd := project(t, rewriteOld)
	file := filepath.Join(filepath.Dir(filepath.Dir(cwd)), "warden.yaml")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(file, old, old) // settled

	// Both policies say ask to python and deny to rm.
	calls := []string{"python evil.py", "rm -rf build"}
	decide := func(viaHookd bool, cmd string) (string, string) {
		var out, errb bytes.Buffer
		stdin := claudePre(cwd, cmd)
		if viaHookd {
			c := &hookd.Client{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Socket: sock,
				Bin: filepath.Join(t.TempDir(), "no-warden-here")}
			c.Run([]string{"claude"})
		} else {
			Run(context.Background(), []string{"hook", "claude"}, strings.NewReader(stdin), &out, &errb)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			return "no JSON: " + out.String(), errb.String()
		}
		return permission(m)
	}
	for _, cmd := range calls {
		for _, via := range []bool{true, false} {
			if d, r := decide(via, cmd); d == "allow" || d == "" {
				t.Fatalf("%s before the rewrite: %q %s", cmd, d, r)
			}
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var decided, allowed atomic.Int64
	var mu sync.Mutex
	var bad []string
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				cmd := calls[i%len(calls)]
				d, r := decide(w%2 == 0, cmd)
				decided.Add(1)
				if d == "allow" || d == "" {
					allowed.Add(1)
					mu.Lock()
					bad = append(bad, cmd+": "+d+" "+r)
					mu.Unlock()
				}
			}
		}()
	}

	// rewrite writes text into the file in place, in pieces, pausing
	// between them as an editor or a script would.
	rewrite := func(text string, piece func(string) []string, pause time.Duration) {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for _, p := range piece(text) {
			if _, err := f.WriteString(p); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(pause)
		}
	}
	bytewise := func(s string) []string { return strings.Split(s, "") }
	linewise := func(s string) []string { return strings.SplitAfter(s, "\n") }
	for range 2 {
		rewrite(rewriteNew, bytewise, 200*time.Microsecond)
		rewrite(rewriteOld, linewise, 20*time.Millisecond)
		rewrite(rewriteNew, linewise, 5*time.Millisecond)
		rewrite(rewriteOld, bytewise, 0)
	}
	time.Sleep(2 * policy.Settle)
	close(stop)
	wg.Wait()
	if n := allowed.Load(); n > 0 {
		t.Errorf("%d of %d calls were allowed while the policy was rewritten; neither policy allows them:\n%s",
			n, decided.Load(), strings.Join(bad[:min(len(bad), 5)], "\n"))
	}
	if decided.Load() < 4 {
		t.Errorf("only %d calls were decided during the rewrites", decided.Load())
	}
	// Once the file has settled, calls are decided by it again.
	for _, via := range []bool{true, false} {
		if d, r := decide(via, "python evil.py"); d != "ask" {
			t.Errorf("python after the rewrites (hookd %v): %q %s, want ask", via, d, r)
		}
	}
	t.Logf("%d calls decided during the rewrites", decided.Load())
}
