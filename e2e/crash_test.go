package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sqlite"
)

// TestHookdKilledMidBurst kills hookd (kill -9) while a burst of
// `warden-hook claude` calls runs through it. Every call still gets one
// answer and exactly one audit record (a call hookd took before it died is
// answered from its record by the `warden hook` the client falls back to,
// not decided again), and a grant with one use is spent exactly once.
func TestHookdKilledMidBurst(t *testing.T) {
	dir := settledProject(t)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := st.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "git push origin main", UsesLeft: 1})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "whk-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "hookd.sock")
	defer func() {
		exec.Command(wardenBin, "hookd", "stop", "--socket", sock).Run()
		os.RemoveAll(sockDir)
	}()
	env := append(os.Environ(), "WARDEN_HOOKD_SOCKET="+sock)
	var seq atomic.Int64
	call := func(worker int, command string) (string, error) {
		n := seq.Add(1)
		in, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("crash-%d", worker), "cwd": dir,
			"hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": fmt.Sprintf("toolu_%d", n)})
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, wardenHookBin, "claude")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(in)
		out, err := cmd.Output()
		return string(out), err
	}
	// Start hookd, and learn its pid.
	if _, err := call(-1, "git diff HEAD"); err != nil {
		t.Fatal(err)
	}
	waitHookd(t, sock)
	status, _ := exec.Command(wardenBin, "hookd", "status", "--socket", sock).Output()
	m := regexp.MustCompile(`pid (\d+)`).FindSubmatch(status)
	if m == nil {
		t.Fatalf("hookd status: %s", status)
	}
	pid, _ := strconv.Atoi(string(m[1]))

	const workers, perWorker = 16, 20
	var wg sync.WaitGroup
	var answered, allowed, noJSON atomic.Int64
	var killed atomic.Bool
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWorker {
				out, _ := call(w, "git push origin main")
				var a map[string]any
				if json.Unmarshal([]byte(out), &a) != nil {
					noJSON.Add(1)
					continue
				}
				answered.Add(1)
				if strings.Contains(out, `"permissionDecision":"allow"`) {
					allowed.Add(1)
				}
				// Kill hookd a quarter of the way in, with calls in flight.
				if answered.Load() == workers*perWorker/4 && killed.CompareAndSwap(false, true) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}()
	}
	wg.Wait()
	if !killed.Load() {
		t.Fatal("hookd was not killed")
	}
	st, err = sqlite.Open(ctx, filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	calls := workers*perWorker + 1
	granted := 0
	for _, r := range recs {
		for _, id := range r.Grants {
			if id == g.ID {
				granted++
			}
		}
	}
	grants, _ := st.Grants(ctx, warden.GrantFilter{All: true})
	if len(recs) != calls || noJSON.Load() != 0 {
		t.Errorf("%d audit records for %d calls (%d answers were not JSON)", len(recs), calls, noJSON.Load())
	}
	if granted != 1 || allowed.Load() != 1 || len(grants) != 1 || grants[0].UsesLeft != 0 {
		t.Errorf("the one-use grant: %d records used it, %d calls were allowed, grants %+v; want 1, 1 and no use left",
			granted, allowed.Load(), grants)
	}
	t.Logf("%d calls, %d records; hookd (pid %d) killed mid-burst", calls, len(recs), pid)
}
