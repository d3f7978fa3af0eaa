package gate_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

func compiled(t *testing.T, text string) *engine.Engine {
	t.Helper()
	p, err := policy.LoadBytes(filepath.Join(t.TempDir(), "warden.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Compile(p, workspace.New())
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func store(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// records are the audit records of a call id.
func records(t *testing.T, st *sqlite.Store, callID string) []warden.AuditRecord {
	t.Helper()
	recs, err := st.Audit(context.Background(), warden.AuditFilter{CallID: callID})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestGateRecordsAPolicyThatDoesNotLoad: the deny says why, and is on
// record once.
func TestGateRecordsAPolicyThatDoesNotLoad(t *testing.T) {
	t.Parallel()
	st := store(t)
	broken := errors.New("policy warden.yaml: line 3: bad")
	g := &gate.Gate{Policy: gate.PolicyFunc(func() (session.Engine, error) { return nil, broken }), Store: st}
	res, err := g.Decide(t.Context(), echo, session.Options{CallID: "c-1"})
	if !errors.Is(err, broken) || res.Decision.Decision != warden.Deny || res.Decision.Code != warden.CodePolicyError {
		t.Fatalf("Decide = %s %s, %v; want a POLICY_ERROR deny with the error", res.Decision.Decision, res.Decision.Code, err)
	}
	if recs := records(t, st, "c-1"); len(recs) != 1 || recs[0].Decision != warden.Deny {
		t.Errorf("records of the call: %+v, want one deny", recs)
	}
	// The same call again: the decision on record, not a second record.
	if _, err := g.Decide(t.Context(), echo, session.Options{CallID: "c-1"}); err != nil && !errors.Is(err, broken) {
		t.Fatal(err)
	}
	if n := len(records(t, st, "c-1")); n != 1 {
		t.Errorf("%d records after the retry, want 1", n)
	}
}

// TestGateRecordsWhenTheCallerStops: a call that waits for a human when
// its caller's deadline ends is denied DECISION_TIMEOUT, and that deny is
// recorded under the gate's own context.
func TestGateRecordsWhenTheCallerStops(t *testing.T) {
	t.Parallel()
	st := store(t)
	eng := compiled(t, "version: 1\ndefault: deny\nrules:\n  - id: echo\n    effect: ask\n    tool: shell\n    command: [\"echo *\"]\n")
	g := &gate.Gate{Policy: gate.Fixed{Eng: eng}, Store: st}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	res, err := g.Decide(ctx, echo, session.Options{CallID: "c-wait", Wait: time.Minute})
	if err == nil || res.Decision.Decision != warden.Deny || res.Decision.Code != warden.CodeTimeout {
		t.Fatalf("Decide = %s %s, %v; want a DECISION_TIMEOUT deny", res.Decision.Decision, res.Decision.Code, err)
	}
	if recs := records(t, st, "c-wait"); len(recs) != 1 || recs[0].Code != warden.CodeTimeout {
		t.Errorf("records of the call: %+v, want one DECISION_TIMEOUT deny", recs)
	}
}

// TestGateReplaysByCallID: the same call under its id gets the decision
// on record; another call under it is refused, and the refusal recorded.
func TestGateReplaysByCallID(t *testing.T) {
	t.Parallel()
	st := store(t)
	g := &gate.Gate{Policy: gate.Fixed{Eng: compiled(t, testPolicy)}, Store: st}
	first, err := g.Decide(t.Context(), echo, session.Options{CallID: "c-r"})
	if err != nil || first.Decision.Decision != warden.Allow {
		t.Fatalf("first = %s, %v", first.Decision.Decision, err)
	}
	again, err := g.Decide(t.Context(), echo, session.Options{CallID: "c-r"})
	if err != nil || !again.Replayed || again.Decision.Decision != warden.Allow || again.Audit.ID != first.Audit.ID {
		t.Fatalf("again = %+v, %v; want the first decision replayed", again, err)
	}
	other := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "echo other"}}
	res, _ := g.Decide(t.Context(), other, session.Options{CallID: "c-r"})
	if res.Decision.Decision != warden.Deny || res.Decision.Code != warden.CodeBadInput {
		t.Errorf("another call under the id = %s %s, want a BAD_INPUT deny", res.Decision.Decision, res.Decision.Code)
	}
	if n := len(records(t, st, "c-r")); n != 1 {
		t.Errorf("%d records under the id, want 1", n)
	}
}

// TestGateGivesACallAnID: a call without an id gets one, so that its
// record is written once whatever records it.
func TestGateGivesACallAnID(t *testing.T) {
	t.Parallel()
	st := store(t)
	g := &gate.Gate{Policy: gate.Fixed{Eng: compiled(t, testPolicy)}, Store: st}
	res, err := g.Decide(t.Context(), echo, session.Options{})
	if err != nil || !strings.HasPrefix(res.Audit.CallID, "g-") {
		t.Fatalf("Decide = %+v, %v; want a record with a call id of the gate's", res.Audit, err)
	}
}

// TestGateSpoolsAFailureWithoutAStore: with no store, the failure's record
// goes to the spool; a spool that fails too is said in the error.
func TestGateSpoolsAFailureWithoutAStore(t *testing.T) {
	t.Parallel()
	var spooled []warden.AuditRecord
	cause := warden.Errorf(warden.CodeStoreUnavailable, "the store is down")
	g := &gate.Gate{Spool: func(r warden.AuditRecord) error { spooled = append(spooled, r); return nil }}
	res, err := g.Fail(t.Context(), echo, session.Options{CallID: "c-s"}, cause)
	if !errors.Is(err, cause) || errors.Is(err, gate.ErrUnrecorded) || res.Decision.Decision != warden.Deny {
		t.Fatalf("Fail = %s, %v", res.Decision.Decision, err)
	}
	if len(spooled) != 1 || spooled[0].CallID != "c-s" || spooled[0].Code != warden.CodeStoreUnavailable || spooled[0].Time.IsZero() {
		t.Errorf("spooled %+v, want one STORE_UNAVAILABLE record of c-s", spooled)
	}
	g.Spool = func(warden.AuditRecord) error { return errors.New("disk full") }
	if _, err := g.Fail(t.Context(), echo, session.Options{CallID: "c-s2"}, cause); !errors.Is(err, gate.ErrUnrecorded) || !errors.Is(err, cause) {
		t.Errorf("Fail with no spool = %v, want the cause and ErrUnrecorded", err)
	}
}
