package handler_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/hook/handler"
	"github.com/warden-run/warden/host"
)

// TestConfineLateDecision: a confined allow that was recorded, but whose
// answer the hook could not give in time (its deadline ran out: a slow
// store, an approval answered at the end of --wait), is answered from
// its record (the failure path): it keeps the input rewrite, so that the
// host does not run the call unconfined. Before the fix the record's
// "ran confined" made the failure path skip the rewrite: the host got a
// bare allow, and the model was told the command ran confined while it
// ran unconfined.
func TestConfineLateDecision(t *testing.T) {
	canConfine(t)
	cwd := project(t, confinePolicy)
	h, _ := host.Lookup("claude")
	in := claudePre(cwd, "./build.sh")
	run := func(stall func(), timeout time.Duration) map[string]any {
		t.Helper()
		rt := handler.Local()
		rt.CallID, rt.Stall = "c-late", stall
		r := handler.Run(context.Background(), rt, h, []byte(in), hook.Flags{Timeout: timeout})
		m := map[string]any{}
		if err := json.Unmarshal(r.Stdout, &m); err != nil {
			t.Fatalf("no JSON answer: %v\n%s\n%s", err, r.Stdout, r.Stderr)
		}
		return m
	}
	// The decision is made and recorded (the call's id is c-late)...
	m := run(nil, 10*time.Second)
	if got, _ := rewritten(t, "claude", m); !strings.HasSuffix(got, " -c './build.sh'") {
		t.Fatalf("the allowed call was not rewritten: %v", m)
	}
	// ...and the same call's answer comes only after the deadline: the
	// hook answers from the record.
	stalled := make(chan struct{})
	m = run(func() { time.Sleep(time.Second); close(stalled) }, 500*time.Millisecond)
	defer func() { <-stalled; time.Sleep(100 * time.Millisecond) }()
	d, _ := permission(m)
	got, _ := rewritten(t, "claude", m)
	if d == "allow" && !strings.HasSuffix(got, " -c './build.sh'") {
		t.Fatalf("the late answer allows the call without the rewrite: it would run unconfined: %v", m)
	}
	if hs, _ := m["hookSpecificOutput"].(map[string]any); d == "allow" {
		if ctx, _ := hs["additionalContext"].(string); strings.Count(ctx, "runs confined by warden's sandbox") != 1 {
			t.Errorf("the late answer tells the model %d times that the command runs confined, want once: %q", strings.Count(ctx, "runs confined by warden's sandbox"), ctx)
		}
	}
	if d != "allow" && d != "deny" {
		t.Fatalf("the late answer is %q: %v", d, m)
	}
	recs, err := storeOf(t, cwd).Audit(context.Background(), warden.AuditFilter{CallID: "c-late"})
	if err != nil || len(recs) != 1 || recs[0].Sandbox == nil || !recs[0].Sandbox.Ran {
		t.Fatalf("records of c-late: %+v %v; want the one confined allow", recs, err)
	}
}
