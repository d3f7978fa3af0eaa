package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sqlite"
)

// TestHookdStoppedCallRecordedByClient: a hookd that took a call and
// never answers it (stopped with SIGSTOP mid-decision, then killed) leaves
// the call to warden-hook, which gives up at its deadline and answers a
// DECISION_TIMEOUT deny: that deny is recorded (spooled by warden-hook,
// taken into the store by the next call that opens it), so that the
// audit trail holds one record per answer.
func TestHookdStoppedCallRecordedByClient(t *testing.T) {
	dir := settledProject(t)
	sockDir, err := os.MkdirTemp("", "whg-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "hookd.sock")
	defer func() {
		exec.Command(wardenBin, "hookd", "stop", "--socket", sock).Run()
		os.RemoveAll(sockDir)
	}()
	env := append(os.Environ(), "WARDEN_HOOKD_SOCKET="+sock)
	answers := 0
	call := func(session, command string) string {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": session, "cwd": dir,
			"hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": fmt.Sprintf("toolu_%d", answers)})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// A short hook deadline: the client gives up on the stopped hookd
		// after it (and 5 s), whatever the load.
		cmd := exec.CommandContext(ctx, wardenHookBin, "claude", "--timeout", "2s")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		var a map[string]any
		if json.Unmarshal(out, &a) != nil {
			t.Fatalf("warden-hook answered no JSON: %q %s", out, stderr.String())
		}
		answers++
		return string(out)
	}
	// The first call starts hookd.
	if out := call("s-before", "git diff HEAD"); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("first call: %s", out)
	}
	waitHookd(t, sock)
	status, _ := exec.Command(wardenBin, "hookd", "status", "--socket", sock).Output()
	m := regexp.MustCompile(`pid (\d+)`).FindSubmatch(status)
	if m == nil {
		t.Fatalf("hookd status: %s", status)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	if out := call("s-before", "git log -1"); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("a call through hookd: %s", out)
	}

	// hookd stops: it takes the next call (the socket accepts it) and
	// never answers.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const secret = "S3cretHookdGaveUp01"
	out := call("s-stopped", "curl -s -u admin:"+secret+" https://example.com/api")
	if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "DECISION_TIMEOUT") {
		t.Errorf("the call hookd never answered: %s, want a DECISION_TIMEOUT deny", out)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGCONT)

	// The next call has no hookd: `warden hook` decides it, and its store
	// takes in the record warden-hook spooled.
	if out := call("s-after", "git show HEAD"); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("the call after: %s", out)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Audit(context.Background(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var stopped []warden.AuditRecord
	for _, r := range recs {
		if r.Session == "s-stopped" {
			stopped = append(stopped, r)
		}
	}
	t.Logf("%d answers, %d records", answers, len(recs))
	if len(recs) != answers {
		t.Errorf("%d answers, %d audit records: every answer has its record", answers, len(recs))
	}
	if len(stopped) != 1 || stopped[0].Code != warden.CodeTimeout || stopped[0].Decision != warden.Deny ||
		stopped[0].CallID == "" || stopped[0].Host != "claude" || stopped[0].Tool != "Bash" {
		t.Errorf("the record of the call hookd never answered: %+v, want one DECISION_TIMEOUT deny of claude's Bash call", stopped)
	}
	// The secret of the call is nowhere in clear: not in its record, not
	// in a file of the store's folder, not in hookd's log.
	if len(stopped) == 1 && !strings.Contains(fmt.Sprint(stopped[0].Args), "curl -s -u admin:") {
		t.Errorf("the record lost the call: %v", stopped[0].Args)
	}
	for _, root := range []string{filepath.Join(dir, ".warden"), sockDir} {
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if data, _ := os.ReadFile(path); strings.Contains(string(data), secret) {
				t.Errorf("%s holds the call's secret in clear", path)
			}
			return nil
		})
	}
}

// TestHookdGivesUpRecords: hookd's decision waits on a store another
// process holds locked past the hook's deadline; hookd gives up, answers
// a deny, and records it (the record waits in the spool while the store
// is locked). Once the lock is gone, the audit trail holds one record per
// answer, and the record of the call says what the host was told.
func TestHookdGivesUpRecords(t *testing.T) {
	dir := settledProject(t)
	sockDir, err := os.MkdirTemp("", "whl-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "hookd.sock")
	defer func() {
		exec.Command(wardenBin, "hookd", "stop", "--socket", sock).Run()
		os.RemoveAll(sockDir)
	}()
	env := append(os.Environ(), "WARDEN_HOOKD_SOCKET="+sock)
	answers := 0
	call := func(session, command string) string {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": session, "cwd": dir,
			"hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": fmt.Sprintf("toolu_%d", answers)})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, wardenHookBin, "claude", "--timeout", "2s")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(in)
		out, _ := cmd.Output()
		var a map[string]any
		if json.Unmarshal(out, &a) != nil {
			t.Fatalf("warden-hook answered no JSON: %q", out)
		}
		answers++
		return string(out)
	}
	if out := call("s-before", "git diff HEAD"); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("first call: %s", out)
	}
	waitHookd(t, sock)
	if out := call("s-before", "git log -1"); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("a call through hookd: %s", out)
	}

	// Another process holds the store's write lock.
	db, err := sql.Open("sqlite", filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	out := call("s-locked", "git show HEAD")
	if !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Errorf("the call on the locked store: %s, want a deny", out)
	}
	conn.ExecContext(context.Background(), "ROLLBACK")
	conn.Close()

	// The store answers again; hookd (which keeps the store open) takes
	// the spool in with its writes. The records are counted in the
	// database as it is (opening a store would take the spool in).
	var recs int
	for i := 0; ; i++ {
		if out := call("s-after", "git diff HEAD~1"); !strings.Contains(out, `"permissionDecision":"allow"`) {
			t.Fatalf("the call after: %s", out)
		}
		if err := db.QueryRow(`SELECT COUNT(*) FROM audit`).Scan(&recs); err != nil {
			t.Fatal(err)
		}
		if recs >= answers || i == 20 {
			break
		}
	}
	var decision, code string
	var n int
	if err := db.QueryRow(`SELECT COUNT(*), MIN(decision), MIN(code) FROM audit WHERE session = 's-locked'`).Scan(&n, &decision, &code); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d answers, %d records; the locked call: %d record(s), %s %s", answers, recs, n, decision, code)
	if recs != answers {
		t.Errorf("%d answers, %d audit records: every answer has its record", answers, recs)
	}
	if n != 1 || decision != string(warden.Deny) {
		t.Errorf("the call hookd gave up on has %d records (%s %s), want one deny, as the host was told", n, decision, code)
	}
}

// settledProject is a project folder with hookBenchPolicy, its time a
// minute back, so that a hookd reads the policy at once rather than
// waiting for a file written a moment ago to settle.
func settledProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(policy, []byte(hookBenchPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(policy, old, old)
	return dir
}
