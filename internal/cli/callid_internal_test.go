package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/hookd"
)

// TestHookCallIDAnswersOnlyItsCall: `warden hook` given the id of another
// call (hookd's client passes it in the environment) does not answer that
// call's allow: it denies, says the id is taken, and records the refusal.
// The call itself, retried under its id, gets its recorded answer.
func TestHookCallIDAnswersOnlyItsCall(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	st := storeOf(t, cwd)
	ctx := context.Background()
	t.Setenv(hookd.CallIDEnv, "c-taken")
	if _, m, _ := runHookCmd(t, claudePre(cwd, "ls -la"), "claude"); func() string { d, _ := permission(m); return d }() != "allow" {
		t.Fatalf("ls: %v", m)
	}
	for _, cmd := range []string{"rm -rf /", "ls -la /root"} {
		_, m, _ := runHookCmd(t, claudePre(cwd, cmd), "claude")
		if d, r := permission(m); d != "deny" || !strings.Contains(r, `call id "c-taken" was given already for another call`) {
			t.Errorf("%s under a taken call id: %s %q", cmd, d, r)
		}
	}
	if _, m, _ := runHookCmd(t, claudePre(cwd, "ls -la"), "claude"); func() string { d, _ := permission(m); return d }() != "allow" {
		t.Fatalf("ls retried: %v", m)
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{Tool: "Bash"})
	if err != nil {
		t.Fatal(err)
	}
	var refused, taken int
	for _, r := range recs {
		if r.CallID == "c-taken" {
			taken++
		}
		if r.Decision == warden.Deny && r.Code == warden.CodeBadInput && r.CallID == "" {
			refused++
		}
	}
	if taken != 1 || refused != 2 || len(recs) != 3 {
		t.Errorf("records: %d under the id, %d refusals, %d in all; want 1, 2, 3: %+v", taken, refused, len(recs), recs)
	}
}
