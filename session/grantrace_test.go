package session_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/session"
)

// TestOneUseGrantRace: a grant with one use left lets exactly one of many
// concurrent calls through, whichever way the call's grant is counted (in
// its session's transaction, or by UseGrant for a call outside a session);
// every other call is decided again without the grant, and each call has
// one audit record that names the grants it used.
func TestOneUseGrantRace(t *testing.T) {
	e := setup(t, testPolicy)
	g, err := e.store.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "make test", UsesLeft: 1})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	res := make([]session.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := ""
			if i%2 == 0 {
				sid = fmt.Sprintf("race-%d", i)
			}
			res[i], errs[i] = e.tr.Decide(ctx, bash(sid, "", "make test"), session.Options{HostPrompts: true, CallID: fmt.Sprintf("c-%d", i)})
		}()
	}
	wg.Wait()
	allowed := 0
	for i, r := range res {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		switch r.Decision.Decision {
		case warden.Allow:
			allowed++
			if r.Decision.Rule != "grant:"+g.ID || fmt.Sprint(r.Grants) != fmt.Sprint([]string{g.ID}) || fmt.Sprint(r.Audit.Grants) != fmt.Sprint([]string{g.ID}) {
				t.Errorf("call %d: allowed by %q, grants %v, audit grants %v; want the grant %s", i, r.Decision.Rule, r.Grants, r.Audit.Grants, g.ID)
			}
		case warden.Ask:
			if len(r.Grants) != 0 || len(r.Audit.Grants) != 0 {
				t.Errorf("call %d: an ask that used grants %v (audit %v)", i, r.Grants, r.Audit.Grants)
			}
		default:
			t.Errorf("call %d: %s %s", i, r.Decision.Decision, r.Decision.Code)
		}
		if r.Audit.ID == 0 || r.Audit.CallID != fmt.Sprintf("c-%d", i) {
			t.Errorf("call %d: audit record %+v", i, r.Audit)
		}
	}
	if allowed != 1 {
		t.Errorf("%d calls allowed by a grant with one use, want 1", allowed)
	}
	gs, err := e.store.Grants(ctx, warden.GrantFilter{All: true})
	if err != nil || len(gs) != 1 || gs[0].UsesLeft != 0 {
		t.Errorf("grant after the race: %+v %v, want no use left", gs, err)
	}
	recs, err := e.store.Audit(ctx, warden.AuditFilter{})
	if err != nil || len(recs) != n {
		t.Errorf("%d audit records (%v), want %d", len(recs), err, n)
	}
}
