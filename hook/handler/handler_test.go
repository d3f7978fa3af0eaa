package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/internal/hooktest"
	"github.com/warden-run/warden/sqlite"
)

// The helpers every test of the hook layer shares.
var (
	project    = hooktest.Project
	claudePre  = hooktest.ClaudePre
	permission = hooktest.Permission
	storeOf    = hooktest.StoreOf
)

const hookTestPolicy = `version: 1
default: deny
rules:
  - id: allow-ls
    effect: allow
    tool: shell
    command: ["ls *"]
`

// runHook answers a hook input as `warden hook HOST FLAGS...` does, with
// stall (the Runtime's test seam) run before the decision. It returns the
// exit code, the answer decoded as JSON (the test fails if it is not) and
// the log.
func runHook(t *testing.T, stall func(), stdin string, args ...string) (int, map[string]any, string) {
	t.Helper()
	h, ok := host.Lookup(args[0])
	if !ok {
		t.Fatalf("no host %q", args[0])
	}
	var f hook.Flags
	if err := f.FlagSet(&bytes.Buffer{}).Parse(args[1:]); err != nil {
		t.Fatal(err)
	}
	rt := handler.Local()
	rt.Stall = stall
	r := handler.Run(context.Background(), rt, h, []byte(stdin), f)
	var m map[string]any
	if err := json.Unmarshal(r.Stdout, &m); err != nil {
		t.Fatalf("hook %v answered no JSON (exit %d): %v\nstdout: %s\nstderr: %s", args, r.Code, err, r.Stdout, r.Stderr)
	}
	return r.Code, m, r.Stderr
}

func TestHookPanicAndTimeoutDeny(t *testing.T) {
	cwd := project(t, hookTestPolicy)

	_, m, _ := runHook(t, func() { panic("boom") }, claudePre(cwd, "ls"), "claude")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "panic: boom") {
		t.Errorf("panic: %s %q", d, r)
	}

	start := time.Now()
	_, m, _ = runHook(t, func() { time.Sleep(2 * time.Second) }, claudePre(cwd, "ls"), "claude", "--timeout", "100ms")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "no decision within 100ms") {
		t.Errorf("timeout: %s %q", d, r)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("timeout answer took %s", el)
	}
}

// TestHookFailuresAreRecorded: a call that times out or crashes gets one
// audit record, with the code of what the host was told.
func TestHookFailuresAreRecorded(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	stalled := make(chan struct{})
	_, m, _ := runHook(t, func() { time.Sleep(400 * time.Millisecond); close(stalled) }, claudePre(cwd, "ls"), "claude", "--timeout", "100ms")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "DECISION_TIMEOUT") {
		t.Errorf("timeout: %s %q, want a DECISION_TIMEOUT deny", d, r)
	}
	<-stalled
	time.Sleep(200 * time.Millisecond) // the late decision has had its chance
	runHook(t, func() { panic("boom") }, claudePre(cwd, "ls"), "claude")
	recs, err := storeOf(t, cwd).Audit(context.Background(), warden.AuditFilter{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Code != warden.CodeTimeout || recs[0].Decision != warden.Deny ||
		recs[1].Decision != warden.Deny || !strings.Contains(recs[1].Reason, "panic") || recs[0].CallID == "" {
		t.Errorf("records of a timeout and a crash: %+v", recs)
	}
}

// TestStoreWaitsLessThanHook: a SQLite store busy with another process's
// write gives up before the hook deadline, so that the hook can still
// record the failure (or spool it) and answer in time.
func TestStoreWaitsLessThanHook(t *testing.T) {
	if sqlite.BusyTimeout >= hook.Deadline {
		t.Errorf("sqlite.BusyTimeout %s is not below hook.Deadline %s", sqlite.BusyTimeout, hook.Deadline)
	}
}

// TestHookOutcomeLoop: Claude Code's PostToolUseFailure marks the call it
// names (tool_use_id) failed in the audit trail, and a repeat.failures
// rule stops the fourth run of a command that failed three times in a row.
func TestHookOutcomeLoop(t *testing.T) {
	cwd := project(t, hookTestPolicy+`  - id: failing-loop
    effect: deny
    tool: shell
    repeat: {failures: 3}
    message: This command failed three times in a row.
    suggestion: Read the error and change something first.
`)
	event := func(name, id string) string {
		js, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": cwd, "hook_event_name": name,
			"tool_name": "Bash", "tool_input": map[string]any{"command": "ls nope"}, "tool_use_id": id, "error": "Exit code 2"})
		return string(js)
	}
	for i, id := range []string{"t1", "t2", "t3"} {
		if _, m, _ := runHook(t, nil, event("PreToolUse", id), "claude"); func() string { d, _ := permission(m); return d }() == "deny" {
			t.Fatalf("run %d denied: %v", i+1, m)
		}
		runHook(t, nil, event("PostToolUseFailure", id), "claude")
	}
	_, m, _ := runHook(t, nil, event("PreToolUse", "t4"), "claude")
	if d, r := permission(m); d != "deny" || !strings.Contains(r, "failed three times in a row") {
		t.Errorf("fourth run: %s %q, want the loop's deny", d, r)
	}
	recs, err := storeOf(t, cwd).Audit(context.Background(), warden.AuditFilter{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	for i, r := range recs[:3] {
		if r.Outcome != warden.OutcomeFail || r.ToolUse != fmt.Sprintf("t%d", i+1) {
			t.Errorf("record %d: outcome %q tool_use %q", i, r.Outcome, r.ToolUse)
		}
	}
	if recs[3].Rule != "failing-loop" || recs[3].Outcome != "" {
		t.Errorf("fourth record: %+v", recs[3])
	}
}
