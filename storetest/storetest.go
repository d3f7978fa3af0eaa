// Package storetest is the contract suite every warden.Store passes: one
// test body, run against the SQLite store always and the PostgreSQL store
// in CI (litestream's replica-client contract, testing/slogtest).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// Run runs the contract suite. newStore must return a new, empty store for
// each call (a subtest calls it once); Run closes it.
func Run(t *testing.T, newStore func(t *testing.T) warden.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s warden.Store)
	}{
		{"SessionCreateAndUpdate", testSessionCreateAndUpdate},
		{"SessionUpdateErrorStoresNothing", testSessionUpdateError},
		{"SessionConcurrentUpdates", testSessionConcurrent},
		{"SessionListAndArchive", testSessionListArchive},
		{"GrantLifecycle", testGrantLifecycle},
		{"GrantConcurrentUse", testGrantConcurrentUse},
		{"GrantValidation", testGrantValidation},
		{"ApprovalLifecycle", testApprovalLifecycle},
		{"ApprovalRejectAndConflict", testApprovalReject},
		{"ApprovalConsumeOnce", testApprovalConsume},
		{"ApprovalOnePendingPerCall", testApprovalOnePending},
		{"ApprovalPurge", testApprovalPurge},
		{"AuditAppendAndFilter", testAudit},
		{"AuditConcurrentAppend", testAuditConcurrent},
		{"State", testState},
		{"History", testHistory},
		{"WriteDecision", testWriteDecision},
		{"Halts", testHalts},
		{"HaltAndGrantsInOneRead", testHaltAndGrants},
		{"Reports", testReports},
		{"ReportCache", testReportCache},
		{"OneRecordPerCall", testOneRecordPerCall},
		{"WriteDecisionCountsGrants", testWriteDecisionGrants},
		{"WriteDecisionConcurrentMix", testWriteDecisionMix},
		{"Outcomes", testOutcomes},
		{"Recent", testRecent},
		{"SessionAgent", testSessionAgent},
		{"AgentHalts", testAgentHalts},
		{"AuditCallSum", testAuditCallSum},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func isErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

func testSessionCreateAndUpdate(t *testing.T, s warden.Store) {
	_, err := s.Session(ctx, "s1")
	isErr(t, err, warden.ErrNotFound)
	start := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	got := must(s.UpdateSession(ctx, "s1", func(x *warden.Session, created bool) error {
		if !created {
			t.Error("first update: created = false")
		}
		if x.ID != "s1" || x.Calls != 0 || x.Role != "" || !x.StartedAt.IsZero() {
			t.Errorf("new session not zero: %+v", x)
		}
		x.Role, x.Host, x.Parent, x.Depth = "builder", "claude", "p1", 2
		x.FirstTool, x.Calls, x.Violations, x.GovernanceInjected = "Read", 1, 1, true
		x.Compactions, x.Resumes, x.IntentID, x.Intent = 3, 4, "INT-1", "fix the build"
		x.Status, x.StartedAt, x.LastSeen = warden.SessionActive, start, start.Add(time.Minute)
		return nil
	}))(t)
	if got.Role != "builder" || !got.StartedAt.Equal(start) {
		t.Errorf("returned session: %+v", got)
	}
	read := must(s.Session(ctx, "s1"))(t)
	want := warden.Session{ID: "s1", Role: "builder", Host: "claude", Parent: "p1", Depth: 2, FirstTool: "Read",
		Calls: 1, Violations: 1, GovernanceInjected: true, Compactions: 3, Resumes: 4, IntentID: "INT-1",
		Intent: "fix the build", Status: warden.SessionActive, StartedAt: start, LastSeen: start.Add(time.Minute)}
	if fmt.Sprint(read) != fmt.Sprint(want) {
		t.Errorf("stored session:\n got %+v\nwant %+v", read, want)
	}
	if !read.FirstToolUsed() {
		t.Error("FirstToolUsed = false")
	}
	must(s.UpdateSession(ctx, "s1", func(x *warden.Session, created bool) error {
		if created {
			t.Error("second update: created = true")
		}
		if x.Calls != 1 || x.Role != "builder" {
			t.Errorf("second update sees %+v", x)
		}
		x.Calls++
		x.GovernanceInjected = false
		x.EndedAt = start.Add(time.Hour)
		return nil
	}))(t)
	read = must(s.Session(ctx, "s1"))(t)
	if read.Calls != 2 || read.GovernanceInjected || !read.EndedAt.Equal(start.Add(time.Hour)) {
		t.Errorf("after second update: %+v", read)
	}
	if _, err := s.UpdateSession(ctx, "", func(*warden.Session, bool) error { return nil }); err == nil {
		t.Error("empty id: no error")
	}
}

func testSessionUpdateError(t *testing.T, s warden.Store) {
	boom := errors.New("boom")
	_, err := s.UpdateSession(ctx, "s2", func(x *warden.Session, _ bool) error {
		x.Role = "x"
		return boom
	})
	isErr(t, err, boom)
	_, err = s.Session(ctx, "s2")
	isErr(t, err, warden.ErrNotFound)
	must(s.UpdateSession(ctx, "s2", func(x *warden.Session, _ bool) error { x.Calls = 5; return nil }))(t)
	_, err = s.UpdateSession(ctx, "s2", func(x *warden.Session, _ bool) error { x.Calls = 99; return boom })
	isErr(t, err, boom)
	if got := must(s.Session(ctx, "s2"))(t); got.Calls != 5 {
		t.Errorf("failed update was stored: calls = %d", got.Calls)
	}
}

func testSessionConcurrent(t *testing.T, s warden.Store) {
	const n = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.UpdateSession(ctx, "busy", func(x *warden.Session, c bool) error {
				if c {
					mu.Lock()
					created++
					mu.Unlock()
				}
				x.Calls++
				return nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		check(t, err)
	}
	if got := must(s.Session(ctx, "busy"))(t); got.Calls != n {
		t.Errorf("calls = %d after %d concurrent increments (lost updates)", got.Calls, n)
	}
	if created != 1 {
		t.Errorf("created reported %d times, want 1", created)
	}
}

func testSessionListArchive(t *testing.T, s warden.Store) {
	now := time.Now().UTC()
	for i, id := range []string{"old", "mid", "new"} {
		seen := now.Add(time.Duration(i-2) * 100 * time.Hour) // -200h, -100h, 0
		must(s.UpdateSession(ctx, id, func(x *warden.Session, _ bool) error {
			x.LastSeen, x.Status = seen, warden.SessionActive
			if id == "mid" {
				x.Status = warden.SessionEnded
			}
			return nil
		}))(t)
	}
	ids := func(f warden.SessionFilter) string {
		var out []string
		for _, x := range must(s.Sessions(ctx, f))(t) {
			out = append(out, x.ID)
		}
		return fmt.Sprint(out)
	}
	if got := ids(warden.SessionFilter{}); got != "[new mid old]" {
		t.Errorf("sessions = %s, want most recent first", got)
	}
	if got := ids(warden.SessionFilter{Status: warden.SessionEnded}); got != "[mid]" {
		t.Errorf("ended sessions = %s", got)
	}
	if got := ids(warden.SessionFilter{Limit: 1}); got != "[new]" {
		t.Errorf("limit 1 = %s", got)
	}
	n := must(s.ArchiveSessions(ctx, now.Add(-168*time.Hour)))(t)
	if n != 1 {
		t.Errorf("archived %d, want 1", n)
	}
	if got := ids(warden.SessionFilter{}); got != "[new mid]" {
		t.Errorf("after archive = %s", got)
	}
	if got := ids(warden.SessionFilter{Archived: true}); got != "[new mid old]" {
		t.Errorf("with archived = %s", got)
	}
	if x := must(s.Session(ctx, "old"))(t); !x.Archived {
		t.Error("old session not marked archived")
	}
	if n := must(s.ArchiveSessions(ctx, now.Add(-168*time.Hour)))(t); n != 0 {
		t.Errorf("second archive: %d, want 0", n)
	}
}

func grantIDs(t *testing.T, s warden.Store, f warden.GrantFilter) string {
	t.Helper()
	var out []string
	for _, g := range must(s.Grants(ctx, f))(t) {
		out = append(out, g.ID)
	}
	return fmt.Sprint(out)
}

func testGrantLifecycle(t *testing.T, s warden.Store) {
	now := time.Now().UTC()
	g1 := must(s.AddGrant(ctx, warden.Grant{Tool: "Bash", Role: "builder", Subject: warden.SubjectCommand,
		Value: "git push origin main", CreatedBy: "me"}))(t)
	if g1.ID == "" || g1.CreatedAt.IsZero() || g1.UsesLeft != -1 {
		t.Fatalf("AddGrant did not fill ID/CreatedAt/UsesLeft: %+v", g1)
	}
	if _, err := s.AddGrant(ctx, warden.Grant{ID: g1.ID, Tool: "Bash", Subject: "command", Value: "x"}); err == nil {
		t.Error("duplicate grant id: no error")
	}
	must(s.AddGrant(ctx, warden.Grant{ID: "g-sess", Tool: "Write", Session: "s1", Subject: warden.SubjectPath,
		Value: "src/a.go", CreatedAt: now.Add(time.Second)}))(t)
	must(s.AddGrant(ctx, warden.Grant{ID: "g-other", Tool: "Write", Session: "s2", Subject: warden.SubjectPath,
		Value: "src/a.go", CreatedAt: now.Add(2 * time.Second)}))(t)
	must(s.AddGrant(ctx, warden.Grant{ID: "g-expired", Tool: "Bash", Subject: warden.SubjectCommand,
		Pattern: "npm *", Expires: now.Add(-time.Minute), CreatedAt: now.Add(3 * time.Second)}))(t)
	must(s.AddGrant(ctx, warden.Grant{ID: "g-uses", Tool: "Bash", Subject: warden.SubjectCommand,
		Value: "make", UsesLeft: 2, Expires: now.Add(time.Hour), CreatedAt: now.Add(4 * time.Second)}))(t)

	all := grantIDs(t, s, warden.GrantFilter{})
	if all != fmt.Sprint([]string{g1.ID, "g-sess", "g-other", "g-uses"}) {
		t.Errorf("active grants = %s (expired one must not be listed)", all)
	}
	if got := grantIDs(t, s, warden.GrantFilter{Session: "s1"}); got != fmt.Sprint([]string{g1.ID, "g-sess", "g-uses"}) {
		t.Errorf("grants for s1 = %s", got)
	}
	if got := grantIDs(t, s, warden.GrantFilter{All: true}); got != fmt.Sprint([]string{g1.ID, "g-sess", "g-other", "g-expired", "g-uses"}) {
		t.Errorf("all grants = %s", got)
	}
	gs := must(s.Grants(ctx, warden.GrantFilter{Session: "s1"}))(t)
	last := gs[len(gs)-1]
	if last.UsesLeft != 2 || last.Value != "make" || !last.Expires.Equal(now.Add(time.Hour).Truncate(time.Microsecond)) {
		t.Errorf("grant round trip: %+v", last)
	}

	for i, want := range []bool{true, true, false} {
		if got := must(s.UseGrant(ctx, "g-uses"))(t); got != want {
			t.Errorf("use %d of a 2-use grant = %v, want %v", i+1, got, want)
		}
	}
	if strings := grantIDs(t, s, warden.GrantFilter{}); strings == fmt.Sprint([]string{g1.ID, "g-sess", "g-other", "g-uses"}) {
		t.Error("used-up grant still listed")
	}
	for range 2 {
		if !must(s.UseGrant(ctx, g1.ID))(t) {
			t.Error("unlimited grant refused a use")
		}
	}
	if must(s.UseGrant(ctx, "g-expired"))(t) {
		t.Error("expired grant accepted a use")
	}
	_, err := s.UseGrant(ctx, "g-nope")
	isErr(t, err, warden.ErrNotFound)

	check(t, s.RevokeGrant(ctx, g1.ID))
	if must(s.UseGrant(ctx, g1.ID))(t) {
		t.Error("revoked grant accepted a use")
	}
	if got := grantIDs(t, s, warden.GrantFilter{}); got != fmt.Sprint([]string{"g-sess", "g-other"}) {
		t.Errorf("after revoke and use-up: %s", got)
	}
	isErr(t, s.RevokeGrant(ctx, "g-nope"), warden.ErrNotFound)
}

func testGrantConcurrentUse(t *testing.T, s warden.Store) {
	g := must(s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: "command", Value: "make", UsesLeft: 5}))(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			used, err := s.UseGrant(ctx, g.ID)
			if err != nil {
				t.Error(err)
			}
			if used {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok != 5 {
		t.Errorf("%d concurrent uses succeeded on a 5-use grant", ok)
	}
}

func testGrantValidation(t *testing.T, s warden.Store) {
	for _, g := range []warden.Grant{
		{Subject: "command", Value: "x"},
		{Tool: "Bash", Value: "x"},
		{Tool: "Bash", Subject: "command"},
	} {
		if _, err := s.AddGrant(ctx, g); err == nil {
			t.Errorf("AddGrant(%+v): no error", g)
		}
	}
}

func newApproval(s warden.Store, t *testing.T, session, fp string) warden.Approval {
	t.Helper()
	return must(s.CreateApproval(ctx, warden.Approval{
		Session: session, Role: "builder", Host: "claude", Agent: "ci-bot", Tool: "Bash",
		Args: map[string]any{"command": "git push origin main"}, Summary: "Bash: git push origin main",
		Code: warden.CodeRuleAsk, Rule: "ask-push", Reason: "Pushing needs a human.",
		Parts:       []warden.GrantPart{{Subject: "command", Value: "git push origin main"}},
		Fingerprint: fp, Status: "approved", Consumed: true, // ignored: a new approval is pending
	}))(t)
}

func testApprovalLifecycle(t *testing.T, s warden.Store) {
	a := newApproval(s, t, "s1", "fp1")
	if a.ID == "" || a.Status != warden.ApprovalPending || a.CreatedAt.IsZero() || a.Consumed {
		t.Fatalf("created approval: %+v", a)
	}
	if _, err := s.CreateApproval(ctx, warden.Approval{}); err == nil {
		t.Error("approval without tool: no error")
	}
	b := newApproval(s, t, "s2", "fp2")
	got := must(s.Approval(ctx, a.ID))(t)
	if got.Tool != "Bash" || got.Args["command"] != "git push origin main" || len(got.Parts) != 1 ||
		got.Parts[0].Value != "git push origin main" || got.Rule != "ask-push" || got.Code != warden.CodeRuleAsk ||
		got.Fingerprint != "fp1" || got.Summary == "" || got.Reason == "" || got.Host != "claude" || got.Agent != "ci-bot" {
		t.Errorf("approval round trip: %+v", got)
	}
	_, err := s.Approval(ctx, "a-nope")
	isErr(t, err, warden.ErrNotFound)

	list := must(s.Approvals(ctx, warden.ApprovalFilter{Status: warden.ApprovalPending}))(t)
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Errorf("pending = %+v", list)
	}
	if l := must(s.Approvals(ctx, warden.ApprovalFilter{Fingerprint: "fp2"}))(t); len(l) != 1 || l[0].ID != b.ID {
		t.Errorf("by fingerprint = %+v", l)
	}
	if l := must(s.Approvals(ctx, warden.ApprovalFilter{Session: "s1"}))(t); len(l) != 1 || l[0].ID != a.ID {
		t.Errorf("by session = %+v", l)
	}

	_, err = s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: warden.ApprovalApproved, Scope: "forever"}, nil)
	if err == nil {
		t.Error("bad scope: no error")
	}
	_, err = s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: "maybe"}, nil)
	if err == nil {
		t.Error("bad status: no error")
	}
	// A bad grant aborts the whole resolution.
	_, err = s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: warden.ApprovalApproved, Scope: warden.ScopeAlways},
		[]warden.Grant{{Tool: "Bash", Subject: "command", Value: "ok"}, {Tool: "Bash"}})
	if err == nil {
		t.Error("bad grant: no error")
	}
	if got := must(s.Approval(ctx, a.ID))(t); got.Status != warden.ApprovalPending {
		t.Errorf("failed resolution changed status to %s", got.Status)
	}
	if n := len(must(s.Grants(ctx, warden.GrantFilter{All: true}))(t)); n != 0 {
		t.Errorf("failed resolution left %d grants", n)
	}

	res := must(s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: warden.ApprovalApproved,
		Scope: warden.ScopeAlways, DecidedBy: "alice", Message: "fine"},
		[]warden.Grant{{Tool: "Bash", Role: "builder", Subject: "command", Value: "git push origin main", UsesLeft: 3}}))(t)
	if res.Status != warden.ApprovalApproved || res.Scope != warden.ScopeAlways || res.DecidedBy != "alice" ||
		res.DecidedAt.IsZero() || len(res.Grants) != 1 || res.Message != "fine" {
		t.Fatalf("resolved: %+v", res)
	}
	gs := must(s.Grants(ctx, warden.GrantFilter{}))(t)
	if len(gs) != 1 || gs[0].ID != res.Grants[0] || gs[0].Approval != a.ID || gs[0].UsesLeft != 3 {
		t.Errorf("grant from approval: %+v", gs)
	}
	_, err = s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: warden.ApprovalRejected}, nil)
	isErr(t, err, warden.ErrConflict)
	_, err = s.ResolveApproval(ctx, "a-nope", warden.Resolution{Status: warden.ApprovalRejected}, nil)
	isErr(t, err, warden.ErrNotFound)
}

func testApprovalReject(t *testing.T, s warden.Store) {
	a := newApproval(s, t, "s1", "fp")
	if _, err := s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: warden.ApprovalRejected},
		[]warden.Grant{{Tool: "Bash", Subject: "command", Value: "x"}}); err == nil {
		t.Error("rejection with grants: no error")
	}
	r := must(s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: warden.ApprovalRejected,
		Message: "Do not push to main; open a pull request."}, nil))(t)
	if r.Status != warden.ApprovalRejected || r.Message != "Do not push to main; open a pull request." || r.Scope != "" {
		t.Errorf("rejected: %+v", r)
	}
	// A rejection is delivered to one call.
	if !must(s.ConsumeApproval(ctx, a.ID))(t) {
		t.Error("a rejected approval was not consumed (delivered)")
	}
	if must(s.ConsumeApproval(ctx, a.ID))(t) {
		t.Error("a rejection was delivered twice")
	}
	// Concurrent answers: exactly one wins.
	b := newApproval(s, t, "s1", "fp")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.ResolveApproval(ctx, b.ID, warden.Resolution{Status: warden.ApprovalApproved, Scope: warden.ScopeSession},
				[]warden.Grant{{Tool: "Bash", Session: "s1", Subject: "command", Value: "git push origin main"}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, warden.ErrConflict):
				conflicts++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Errorf("concurrent answers: %d won, %d conflicted; want 1 and 7", wins, conflicts)
	}
	if n := len(must(s.Grants(ctx, warden.GrantFilter{}))(t)); n != 1 {
		t.Errorf("concurrent answers made %d grants, want 1", n)
	}
}

func testApprovalPurge(t *testing.T, s warden.Store) {
	pending := newApproval(s, t, "s1", "fp1")
	answered := newApproval(s, t, "s1", "fp2")
	must(s.ResolveApproval(ctx, answered.ID, warden.Resolution{Status: warden.ApprovalRejected, Message: "no"}, nil))(t)
	now := time.Now()
	if n := must(s.PurgeApprovals(ctx, now.Add(-time.Hour), now.Add(-time.Hour)))(t); n != 0 {
		t.Errorf("purged %d approvals within their lifetime", n)
	}
	if n := must(s.PurgeApprovals(ctx, now.Add(time.Hour), now.Add(-time.Hour)))(t); n != 1 {
		t.Errorf("purged %d approvals, want the expired pending one", n)
	}
	if _, err := s.Approval(ctx, pending.ID); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("expired pending approval still there: %v", err)
	}
	if _, err := s.Approval(ctx, answered.ID); err != nil {
		t.Errorf("answered approval within its lifetime: %v", err)
	}
	if n := must(s.PurgeApprovals(ctx, now.Add(-time.Hour), now.Add(time.Hour)))(t); n != 1 {
		t.Errorf("purged %d approvals, want the expired answered one", n)
	}
	if l := must(s.Approvals(ctx, warden.ApprovalFilter{}))(t); len(l) != 0 {
		t.Errorf("approvals left: %+v", l)
	}
}

func testApprovalConsume(t *testing.T, s warden.Store) {
	a := newApproval(s, t, "s1", "fp")
	if must(s.ConsumeApproval(ctx, a.ID))(t) {
		t.Error("a pending approval was consumed")
	}
	must(s.ResolveApproval(ctx, a.ID, warden.Resolution{Status: warden.ApprovalApproved, Scope: warden.ScopeOnce}, nil))(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.ConsumeApproval(ctx, a.ID)
			if err != nil {
				t.Error(err)
			}
			if c {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok != 1 {
		t.Errorf("a once approval was consumed %d times", ok)
	}
	if got := must(s.Approval(ctx, a.ID))(t); !got.Consumed {
		t.Error("Consumed not stored")
	}
	if must(s.ConsumeApproval(ctx, "a-nope"))(t) {
		t.Error("unknown approval consumed")
	}
}

func testAudit(t *testing.T, s warden.Store) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	recs := []warden.AuditRecord{
		{Time: base, Session: "s1", Role: "builder", Host: "claude", Tool: "Read", Args: map[string]any{"file_path": "a.go"},
			Decision: warden.Allow, Code: warden.CodeAllowed, Mode: "enforce", Latency: 1500 * time.Microsecond,
			Warnings: []string{"first tool"}},
		{Time: base.Add(time.Minute), Session: "s1", Tool: "Bash", Args: map[string]any{"command": "rm -rf /"},
			Decision: warden.Deny, Code: warden.CodeRuleDeny, Rule: "no-rm-rf", Reason: "blocked",
			Matched: []string{"no-rm-rf"}, Mode: "enforce", Source: "Never delete folders recursively."},
		{Time: base.Add(2 * time.Minute), Session: "s2", Tool: "Bash", Args: map[string]any{"command": "git push"},
			Decision: warden.Allow, Code: warden.CodeAllowed, Rule: "grant:g-1", Grants: []string{"g-1"}, Approval: "a-1",
			Mode: "audit", Enforced: warden.Ask, Depth: 1, Agent: "ci-bot"},
	}
	var last int64
	for i := range recs {
		r := must(s.AppendAudit(ctx, recs[i]))(t)
		if r.ID <= last {
			t.Errorf("audit ids not increasing: %d after %d", r.ID, last)
		}
		last = r.ID
		recs[i].ID = r.ID
	}
	auto := must(s.AppendAudit(ctx, warden.AuditRecord{Tool: "LS", Decision: warden.Allow}))(t)
	if auto.Time.IsZero() {
		t.Error("AppendAudit did not stamp the time")
	}
	all := must(s.Audit(ctx, warden.AuditFilter{Until: base.Add(time.Hour)}))(t)
	if len(all) != 3 {
		t.Fatalf("audit returned %d records, want 3", len(all))
	}
	for i := range recs {
		if fmt.Sprintf("%+v", all[i]) != fmt.Sprintf("%+v", normAudit(recs[i])) {
			t.Errorf("record %d round trip:\n got %+v\nwant %+v", i, all[i], normAudit(recs[i]))
		}
	}
	count := func(f warden.AuditFilter) int { return len(must(s.Audit(ctx, f))(t)) }
	cases := []struct {
		name string
		f    warden.AuditFilter
		want int
	}{
		{"session", warden.AuditFilter{Session: "s1"}, 2},
		{"decision", warden.AuditFilter{Decision: warden.Deny}, 1},
		{"tool", warden.AuditFilter{Tool: "Bash"}, 2},
		{"rule", warden.AuditFilter{Rule: "no-rm-rf"}, 1},
		{"since", warden.AuditFilter{Since: base.Add(time.Minute), Until: base.Add(time.Hour)}, 2},
		{"until", warden.AuditFilter{Until: base.Add(time.Minute)}, 1},
		{"combined", warden.AuditFilter{Session: "s1", Tool: "Bash", Decision: warden.Deny}, 1},
		{"none", warden.AuditFilter{Session: "s1", Decision: warden.Ask}, 0},
		{"agent", warden.AuditFilter{Agent: "ci-bot"}, 1},
		// What enforce mode decides: the decision, or in audit mode what
		// would have been decided.
		{"enforced ask (audit mode)", warden.AuditFilter{Enforced: warden.Ask, Until: base.Add(time.Hour)}, 1},
		{"enforced deny (enforce mode)", warden.AuditFilter{Enforced: warden.Deny}, 1},
		{"enforced allow", warden.AuditFilter{Enforced: warden.Allow, Until: base.Add(time.Hour)}, 1},
	}
	for _, c := range cases {
		if got := count(c.f); got != c.want {
			t.Errorf("filter %s: %d records, want %d", c.name, got, c.want)
		}
	}
	lim := must(s.Audit(ctx, warden.AuditFilter{Limit: 2}))(t)
	if len(lim) != 2 || lim[1].ID != auto.ID || lim[0].ID != recs[2].ID {
		t.Errorf("limit keeps the newest, oldest first: %+v", lim)
	}
	n := must(s.PurgeAudit(ctx, base.Add(90*time.Second)))(t)
	if n != 2 {
		t.Errorf("purged %d, want 2", n)
	}
	if got := count(warden.AuditFilter{}); got != 2 {
		t.Errorf("after purge: %d records, want 2", got)
	}
}

// testRecent: Recent returns what Audit returns for the session's newest
// records, whatever the store keeps between calls: after outcomes are set,
// records appended, and records purged.
func testRecent(t *testing.T, s warden.Store) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	big := strings.Repeat("x", 64<<10)
	add := func(i int, session string, args map[string]any) warden.AuditRecord {
		return must(s.AppendAudit(ctx, warden.AuditRecord{Time: base.Add(time.Duration(i) * time.Second), Session: session,
			Tool: "Bash", Args: args, Decision: warden.Allow, Code: warden.CodeAllowed, Mode: "enforce",
			ToolUse: fmt.Sprintf("tu-%d", i)}))(t)
	}
	same := func(step string, limit int) {
		t.Helper()
		got := must(s.Recent(ctx, "r", limit))(t)
		want := must(s.Audit(ctx, warden.AuditFilter{Session: "r", Limit: limit}))(t)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Fatalf("%s: Recent(r, %d) differs from Audit:\n got %+v\nwant %+v", step, limit, got, want)
		}
	}
	for i := range 6 {
		args := map[string]any{"command": fmt.Sprintf("echo %d", i)}
		switch i {
		case 2:
			args["content"] = big // too large to keep: read again each time
		case 3:
			args["command"] = []any{"bash", "-lc", "echo 3", map[string]any{"nested": []any{1.0, true}}}
		}
		add(i, "r", args)
		add(100+i, "other", map[string]any{"command": "ls"})
	}
	same("first read", 4)
	same("again, from what the store kept", 4)
	same("a wider window", 10)
	check(t, s.SetOutcome(ctx, warden.Outcome{Session: "r", Tool: "Bash", ToolUse: "tu-4", OK: false}))
	check(t, s.SetOutcome(ctx, warden.Outcome{Session: "r", Tool: "Bash", ToolUse: "tu-5", OK: true}))
	same("outcomes set after the records were kept", 4)
	if got := must(s.Recent(ctx, "r", 2))(t); len(got) != 2 || got[0].Outcome != warden.OutcomeFail || got[1].Outcome != warden.OutcomeOK {
		t.Fatalf("outcomes: %+v", got)
	}
	add(6, "r", map[string]any{"command": "echo 6"})
	same("a record appended", 4)
	if n := must(s.PurgeAudit(ctx, base.Add(3500*time.Millisecond)))(t); n != 4 {
		t.Fatalf("purged %d, want 4", n)
	}
	same("after a purge", 10)
	if got := must(s.Recent(ctx, "r", 10))(t); len(got) != 3 {
		t.Fatalf("after a purge: %d records, want 3", len(got))
	}
	if got := must(s.Recent(ctx, "nobody", 10))(t); len(got) != 0 {
		t.Fatalf("a session with no records: %+v", got)
	}
}

func normAudit(r warden.AuditRecord) warden.AuditRecord {
	if r.Matched == nil {
		r.Matched = []string{}
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	if r.Grants == nil {
		r.Grants = []string{}
	}
	return r
}

func testAuditConcurrent(t *testing.T, s warden.Store) {
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := s.AppendAudit(ctx, warden.AuditRecord{Session: "c", Tool: fmt.Sprint("T", i), Decision: warden.Allow}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	recs := must(s.Audit(ctx, warden.AuditFilter{Session: "c"}))(t)
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Tool] = true
	}
	if len(recs) != n || len(seen) != n {
		t.Errorf("%d concurrent appends left %d records (%d distinct)", n, len(recs), len(seen))
	}
}

func testState(t *testing.T, s warden.Store) {
	st := must(s.State(ctx))(t)
	if st.Phase != "" || len(st.Anchors) != 0 || len(st.History) != 0 {
		t.Errorf("empty store state: %+v", st)
	}
	check(t, s.SetPhase(ctx, "design"))
	check(t, s.SetPhase(ctx, "build"))
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	add := func(p warden.Priority, content string, age int) warden.Anchor {
		return must(s.AddAnchor(ctx, warden.Anchor{Priority: p, Content: content, CreatedAt: base.Add(time.Duration(age) * time.Hour)}))(t)
	}
	low := add(warden.Low, "low one", 0)
	n2 := add(warden.Normal, "normal two", 2)
	n1 := add(warden.Normal, "normal one", 1)
	hi := add(warden.High, "high", 5)
	cr := add(warden.Critical, "critical", 9)
	def := must(s.AddAnchor(ctx, warden.Anchor{Content: "default priority"}))(t)
	if def.Priority != warden.Normal || def.ID == "" || def.CreatedAt.IsZero() {
		t.Errorf("default anchor: %+v", def)
	}
	if _, err := s.AddAnchor(ctx, warden.Anchor{Priority: "urgent", Content: "x"}); err == nil {
		t.Error("bad priority: no error")
	}
	if _, err := s.AddAnchor(ctx, warden.Anchor{Priority: warden.High, Content: "  "}); err == nil {
		t.Error("empty content: no error")
	}
	st = must(s.State(ctx))(t)
	if st.Phase != "build" || st.UpdatedAt.IsZero() {
		t.Errorf("phase = %q, updated %v", st.Phase, st.UpdatedAt)
	}
	var order []string
	for _, a := range st.Anchors {
		order = append(order, a.ID)
	}
	want := fmt.Sprint([]string{cr.ID, hi.ID, n1.ID, n2.ID, def.ID, low.ID})
	if fmt.Sprint(order) != want {
		t.Errorf("anchor order = %v, want %v (priority, then oldest)", order, want)
	}
	if a := st.Anchors[0]; a.Content != "critical" || !a.CreatedAt.Equal(base.Add(9*time.Hour)) {
		t.Errorf("anchor round trip: %+v", a)
	}
	check(t, s.DemoteAnchor(ctx, hi.ID))
	isErr(t, s.DemoteAnchor(ctx, hi.ID), warden.ErrNotFound) // no longer high
	check(t, s.RemoveAnchor(ctx, low.ID))
	isErr(t, s.RemoveAnchor(ctx, low.ID), warden.ErrNotFound)
	st = must(s.State(ctx))(t)
	if len(st.Anchors) != 5 {
		t.Fatalf("anchors after remove: %d", len(st.Anchors))
	}
	for _, a := range st.Anchors {
		if a.ID == hi.ID && (a.Priority != warden.Normal || a.DemotedAt.IsZero()) {
			t.Errorf("demoted anchor: %+v", a)
		}
	}
}

func testHistory(t *testing.T, s warden.Store) {
	if err := s.AddHistory(ctx, warden.HistoryEntry{}); err == nil {
		t.Error("history without action: no error")
	}
	for i := 0; i < 7; i++ {
		check(t, s.AddHistory(ctx, warden.HistoryEntry{Session: "s", Agent: "builder", Action: fmt.Sprint("a", i), Result: "pass"}))
	}
	st := must(s.State(ctx))(t)
	if len(st.History) != 7 || st.History[0].Action != "a0" || st.History[6].Action != "a6" || st.History[0].Time.IsZero() {
		t.Fatalf("history = %+v", st.History)
	}
	if n := must(s.ArchiveHistory(ctx, 3))(t); n != 4 {
		t.Errorf("archived %d, want 4", n)
	}
	st = must(s.State(ctx))(t)
	if len(st.History) != 3 || st.History[0].Action != "a4" || st.History[2].Action != "a6" {
		t.Errorf("history after archive = %+v", st.History)
	}
	if n := must(s.ArchiveHistory(ctx, 3))(t); n != 0 {
		t.Errorf("second archive: %d", n)
	}
	// The archived entries are kept, oldest first; a limit keeps the
	// newest of them.
	arch := must(s.ArchivedHistory(ctx, 0))(t)
	if len(arch) != 4 || arch[0].Action != "a0" || arch[3].Action != "a3" || arch[0].Time.IsZero() || arch[0].Agent != "builder" {
		t.Errorf("archived history = %+v", arch)
	}
	if arch := must(s.ArchivedHistory(ctx, 2))(t); len(arch) != 2 || arch[0].Action != "a2" || arch[1].Action != "a3" {
		t.Errorf("archived history, limit 2 = %+v", arch)
	}
}

func testApprovalOnePending(t *testing.T, s warden.Store) {
	var wg sync.WaitGroup
	ids := make([]string, 12)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a, err := s.CreateApproval(ctx, warden.Approval{Session: "s", Tool: "Bash", Fingerprint: "same"})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = a.ID
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("concurrent approvals of one call got ids %v, want one", ids)
		}
	}
	if l := must(s.Approvals(ctx, warden.ApprovalFilter{Fingerprint: "same"}))(t); len(l) != 1 {
		t.Fatalf("%d approvals stored for one call", len(l))
	}
	// Once answered, the next ask of the call gets a new approval.
	must(s.ResolveApproval(ctx, ids[0], warden.Resolution{Status: warden.ApprovalRejected, Message: "no"}, nil))(t)
	b := must(s.CreateApproval(ctx, warden.Approval{Session: "s", Tool: "Bash", Fingerprint: "same"}))(t)
	if b.ID == ids[0] || b.Status != warden.ApprovalPending {
		t.Errorf("after the answer: %+v", b)
	}
	// Approvals without a fingerprint are never shared.
	x := must(s.CreateApproval(ctx, warden.Approval{Tool: "Bash"}))(t)
	y := must(s.CreateApproval(ctx, warden.Approval{Tool: "Bash"}))(t)
	if x.ID == y.ID {
		t.Error("approvals without fingerprint shared an id")
	}
}

// testWriteDecision: a store that writes a decision in one transaction
// stores the session, the history entry and the audit record together, or
// nothing at all.
func testWriteDecision(t *testing.T, s warden.Store) {
	sess, rec, err := s.WriteDecision(ctx, "wd", func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
		if !created {
			t.Error("a new session was not reported as created")
		}
		x.Calls, x.Violations = 1, 1
		return &warden.DecisionRecord{
			Audit:   warden.AuditRecord{Session: "wd", Tool: "Bash", Decision: warden.Deny, Code: warden.CodeRuleDeny, Args: map[string]any{"command": "rm -rf /"}},
			History: &warden.HistoryEntry{Session: "wd", Action: "violation:rule_deny:Bash", Result: "fail"},
		}, nil
	})
	check(t, err)
	if sess.Calls != 1 || rec.ID == 0 || rec.Decision != warden.Deny {
		t.Fatalf("session %+v, record %+v", sess, rec)
	}
	recs := must(s.Audit(ctx, warden.AuditFilter{Session: "wd"}))(t)
	st := must(s.State(ctx))(t)
	if len(recs) != 1 || recs[0].ID != rec.ID || len(st.History) != 1 || st.History[0].Action != "violation:rule_deny:Bash" {
		t.Errorf("audit %+v, history %+v", recs, st.History)
	}
	// A trim in the same transaction keeps the newest entries.
	for i := range 3 {
		_, _, err := s.WriteDecision(ctx, "wd", func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
			return &warden.DecisionRecord{
				Audit:       warden.AuditRecord{Session: "wd", Tool: "Bash", Decision: warden.Deny},
				History:     &warden.HistoryEntry{Session: "wd", Action: fmt.Sprint("v", i), Result: "fail"},
				HistoryKeep: 2,
			}, nil
		})
		check(t, err)
	}
	if st := must(s.State(ctx))(t); len(st.History) != 2 || st.History[0].Action != "v1" || st.History[1].Action != "v2" {
		t.Errorf("live history after trimming to 2: %+v", st.History)
	}
	// An error stores nothing: not the session change, not the record.
	boom := errors.New("boom")
	_, _, err = s.WriteDecision(ctx, "wd", func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
		x.Calls = 99
		return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: "wd", Tool: "Bash", Decision: warden.Allow}}, boom
	})
	isErr(t, err, boom)
	if x := must(s.Session(ctx, "wd"))(t); x.Calls != 1 {
		t.Errorf("calls = %d after a failed write, want 1", x.Calls)
	}
	if recs := must(s.Audit(ctx, warden.AuditFilter{Session: "wd"}))(t); len(recs) != 4 {
		t.Errorf("%d audit records after a failed write, want 4", len(recs))
	}
	// No record: the session alone, like UpdateSession.
	sess, rec, err = s.WriteDecision(ctx, "wd", func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
		x.Calls++
		return nil, nil
	})
	check(t, err)
	if sess.Calls != 2 || rec.ID != 0 {
		t.Errorf("session %+v, record %+v", sess, rec)
	}
}

func testHalts(t *testing.T, s warden.Store) {
	if _, ok, err := s.Halted(ctx, "a"); ok || err != nil {
		t.Fatalf("halted before any halt: %v %v", ok, err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := s.SetHalt(ctx, warden.Halt{Session: "a", Message: "stop a", By: "ops", At: at}); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{"a", "a/sub", "a/sub/deeper"} {
		h, ok, err := s.Halted(ctx, sid)
		if err != nil || !ok || h.Session != "a" || h.Message != "stop a" || h.By != "ops" || !h.At.Equal(at) {
			t.Errorf("halted %s: %+v %v %v", sid, h, ok, err)
		}
	}
	for _, sid := range []string{"b", "ab", ""} {
		if _, ok, _ := s.Halted(ctx, sid); ok {
			t.Errorf("session %q is halted by a's halt", sid)
		}
	}
	// The project's halt stops every session; a session's own halt wins
	// (its message is the more specific).
	if _, err := s.SetHalt(ctx, warden.Halt{Message: "stop all", At: at}); err != nil {
		t.Fatal(err)
	}
	if h, ok, _ := s.Halted(ctx, "b"); !ok || h.Message != "stop all" {
		t.Errorf("project halt for b: %+v %v", h, ok)
	}
	if h, _, _ := s.Halted(ctx, "a/sub"); h.Message != "stop a" {
		t.Errorf("a/sub: %+v", h)
	}
	// Halting again replaces.
	if _, err := s.SetHalt(ctx, warden.Halt{Session: "a", Message: "still stop", At: at}); err != nil {
		t.Fatal(err)
	}
	hs, err := s.Halts(ctx)
	if err != nil || len(hs) != 2 || hs[0].Session != "" || hs[1].Message != "still stop" {
		t.Errorf("halts: %+v %v", hs, err)
	}
	if err := s.ClearHalt(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearHalt(ctx, ""); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("clearing twice: %v", err)
	}
	if _, ok, _ := s.Halted(ctx, "b"); ok {
		t.Error("b still halted after resume")
	}
}

// testHaltAndGrants: a store's one-query read of a decision's halt and
// grants (warden.DecisionReader) says what Halted and Grants say, for
// every session, halted or not, with grants of every kind.
func testHaltAndGrants(t *testing.T, s warden.Store) {
	past := s.Now().Add(-time.Hour)
	for _, g := range []warden.Grant{
		{Tool: "Bash", Subject: warden.SubjectCommand, Value: "ls"},
		{Tool: "Bash", Subject: warden.SubjectCommand, Value: "make", Session: "a", UsesLeft: 2},
		{Tool: "Write", Subject: warden.SubjectPath, Pattern: "docs/**", Session: "a/sub", Role: "writer"},
		{Tool: "Bash", Subject: warden.SubjectCommand, Value: "old", Expires: past},
		{Tool: "Bash", Subject: warden.SubjectCommand, Value: "b only", Session: "b"},
	} {
		must(s.AddGrant(ctx, g))(t)
	}
	revoked := must(s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "revoked"}))(t)
	check(t, s.RevokeGrant(ctx, revoked.ID))
	usedUp := must(s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "once", UsesLeft: 1}))(t)
	must(s.UseGrant(ctx, usedUp.ID))(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	compare := func(state string) {
		for _, sid := range []string{"", "a", "a/sub", "a/sub/x", "b", "c"} {
			h, halted, grants, err := s.HaltAndGrants(ctx, sid, "")
			wh, whalted, werr := s.Halted(ctx, sid)
			check(t, err)
			check(t, werr)
			if halted != whalted || fmt.Sprintf("%+v", h) != fmt.Sprintf("%+v", wh) {
				t.Errorf("%s, session %q: halt %+v %v, Halted says %+v %v", state, sid, h, halted, wh, whalted)
			}
			if halted {
				continue
			}
			want := must(s.Grants(ctx, warden.GrantFilter{Session: sid}))(t)
			if sid == "" {
				want = slices.DeleteFunc(want, func(g warden.Grant) bool { return g.Session != "" })
			}
			if fmt.Sprintf("%+v", grants) != fmt.Sprintf("%+v", want) {
				t.Errorf("%s, session %q: grants\n %+v\nGrants says\n %+v", state, sid, grants, want)
			}
		}
	}
	compare("no halt")
	must(s.SetHalt(ctx, warden.Halt{Session: "a/sub", Message: "stop sub", By: "ops", At: at}))(t)
	compare("a/sub halted")
	must(s.SetHalt(ctx, warden.Halt{Message: "stop all", By: "ops", At: at}))(t)
	compare("the project halted too")
}

// testOneRecordPerCall: a store keeps at most one record per call id, by
// AppendAudit and by WriteDecision, also when writers race; the second
// write stores nothing (not the session change, not a grant use).
func testOneRecordPerCall(t *testing.T, s warden.Store) {
	first := must(s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, CallID: "c-1"}))(t)
	_, err := s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Deny, CallID: "c-1"})
	isErr(t, err, warden.ErrConflict)
	recs := must(s.Audit(ctx, warden.AuditFilter{CallID: "c-1"}))(t)
	if len(recs) != 1 || recs[0].ID != first.ID || recs[0].Decision != warden.Allow || recs[0].CallID != "c-1" {
		t.Errorf("records of call c-1: %+v", recs)
	}
	// Records without a call id are never in conflict.
	for range 2 {
		must(s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow}))(t)
	}
	g := must(s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "x", UsesLeft: 5}))(t)
	_, _, err = s.WriteDecision(ctx, "one", func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
		x.Calls++
		return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: "one", Tool: "Bash", Decision: warden.Allow, CallID: "c-1"},
			UseGrants: []string{g.ID}}, nil
	})
	isErr(t, err, warden.ErrConflict)
	if x, err := s.Session(ctx, "one"); err == nil && x.Calls != 0 {
		t.Errorf("session calls = %d after a conflicting write, want 0", x.Calls)
	}
	if gs := must(s.Grants(ctx, warden.GrantFilter{}))(t); len(gs) != 1 || gs[0].UsesLeft != 5 {
		t.Errorf("grant after a conflicting write: %+v, want 5 uses left", gs)
	}
	// Racing writers of one call: one record.
	var wg sync.WaitGroup
	var won atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Deny, CallID: "c-race"}); err == nil {
				won.Add(1)
			} else if !errors.Is(err, warden.ErrConflict) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(must(s.Audit(ctx, warden.AuditFilter{CallID: "c-race"}))(t)); n != 1 || won.Load() != 1 {
		t.Errorf("8 racing writers of one call: %d records, %d writers succeeded; want 1 and 1", n, won.Load())
	}
}

// testWriteDecisionGrants: the grants a decision used are counted in its
// transaction; a grant that cannot be used fails the write, storing
// nothing.
func testWriteDecisionGrants(t *testing.T, s warden.Store) {
	once := must(s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "x", UsesLeft: 1}))(t)
	write := func() error {
		_, _, err := s.WriteDecision(ctx, "g", func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
			x.Calls++
			return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: "g", Tool: "Bash", Decision: warden.Allow, Grants: []string{once.ID}},
				UseGrants: []string{once.ID}}, nil
		})
		return err
	}
	check(t, write())
	err := write()
	var gu *warden.GrantUnusableError
	if !errors.As(err, &gu) || gu.ID != once.ID {
		t.Fatalf("second use of a one-use grant: %v, want a GrantUnusableError", err)
	}
	if x := must(s.Session(ctx, "g"))(t); x.Calls != 1 {
		t.Errorf("calls = %d, want 1: the failed write stored the session", x.Calls)
	}
	if recs := must(s.Audit(ctx, warden.AuditFilter{Session: "g"}))(t); len(recs) != 1 {
		t.Errorf("%d records, want 1", len(recs))
	}
}

// testWriteDecisionMix: many decisions at once, on a few sessions, of
// every kind (some fail, some repeat a call, some use a grant that runs
// out, some trim the history) store exactly what they would have stored
// one after the other: where a store shares one transaction among
// concurrent writes, a write's success or failure is still its own.
func testWriteDecisionMix(t *testing.T, s warden.Store) {
	const n, grantUses = 96, 5
	g := must(s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "x", UsesLeft: grantUses}))(t)
	boom := errors.New("boom")
	type result struct {
		rec warden.AuditRecord
		err error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			sid := fmt.Sprint("mix-", i%4)
			_, rec, err := s.WriteDecision(ctx, sid, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
				if created != (x.Calls == 0) {
					t.Errorf("write %d: created %v with %d calls", i, created, x.Calls)
				}
				x.Calls++
				if i%7 == 3 {
					return nil, boom
				}
				dr := &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Allow,
					Args: map[string]any{"n": i}}}
				if i%5 == 1 {
					dr.Audit.CallID = fmt.Sprint("mix-call-", i%3)
				}
				if i%6 == 2 {
					dr.UseGrants = []string{g.ID}
				}
				if i%4 == 0 {
					dr.History = &warden.HistoryEntry{Session: sid, Action: fmt.Sprint("v", i), Result: "fail"}
					dr.HistoryKeep = 3
				}
				return dr, nil
			})
			results[i] = result{rec, err}
		}()
	}
	close(start)
	wg.Wait()
	calls := map[string]int{}
	callIDs := map[string]int{}
	used, history := 0, 0
	ids := map[int64]int{}
	for i, r := range results {
		var gu *warden.GrantUnusableError
		switch {
		case i%7 == 3:
			isErr(t, r.err, boom)
			continue
		case errors.Is(r.err, warden.ErrConflict) && i%5 == 1:
			continue
		case errors.As(r.err, &gu) && i%6 == 2:
			continue
		case r.err != nil:
			t.Errorf("write %d: %v", i, r.err)
			continue
		}
		calls[fmt.Sprint("mix-", i%4)]++
		if i%5 == 1 {
			callIDs[r.rec.CallID]++
		}
		if i%6 == 2 {
			used++
		}
		if i%4 == 0 {
			history++
		}
		if j, dup := ids[r.rec.ID]; dup || r.rec.ID == 0 {
			t.Errorf("writes %d and %d: record id %d", j, i, r.rec.ID)
		}
		ids[r.rec.ID] = i
	}
	for id, c := range callIDs {
		if c != 1 {
			t.Errorf("call %s recorded %d times", id, c)
		}
	}
	if len(callIDs) != 3 {
		t.Errorf("calls with an id recorded: %v, want 3", callIDs)
	}
	if used != grantUses {
		t.Errorf("the grant of %d uses was used by %d writes", grantUses, used)
	}
	if gs := must(s.Grants(ctx, warden.GrantFilter{All: true}))(t); len(gs) != 1 || gs[0].UsesLeft != 0 {
		t.Errorf("grant after the writes: %+v", gs)
	}
	for sid, c := range calls {
		if x := must(s.Session(ctx, sid))(t); x.Calls != c {
			t.Errorf("session %s: %d calls, %d writes succeeded", sid, x.Calls, c)
		}
	}
	recs := must(s.Audit(ctx, warden.AuditFilter{}))(t)
	if len(recs) != len(ids) {
		t.Errorf("%d records, %d writes succeeded", len(recs), len(ids))
	}
	for _, r := range recs {
		i, ok := ids[r.ID]
		if n, _ := r.Args["n"].(float64); !ok || int(n) != i {
			t.Errorf("record %d holds %v, written by write %d (%v)", r.ID, r.Args, i, ok)
		}
	}
	if st := must(s.State(ctx))(t); len(st.History) != min(3, history) {
		t.Errorf("%d live history entries of %d, want the newest 3", len(st.History), history)
	}
}

// testOutcomes: a host's outcome goes to the record with its tool_use id,
// else to the session's latest call of the tool that ran and has no
// outcome yet; a call with no record is ErrNotFound; Audit returns both.
func testOutcomes(t *testing.T, s warden.Store) {
	add := func(session, tool, toolUse string, d warden.Effect) int64 {
		return must(s.AppendAudit(ctx, warden.AuditRecord{Session: session, Tool: tool, Decision: d, Mode: "enforce", ToolUse: toolUse}))(t).ID
	}
	a := add("s", "Bash", "tu-1", warden.Allow)
	b := add("s", "Bash", "tu-2", warden.Allow)
	c := add("s", "Bash", "", warden.Allow)
	d := add("s", "Bash", "", warden.Allow)
	add("s", "Bash", "", warden.Deny)
	other := add("t", "Bash", "", warden.Allow)
	check(t, s.SetOutcome(ctx, warden.Outcome{Session: "s", Tool: "Bash", ToolUse: "tu-1", OK: false}))
	// No tool_use: the latest call of the tool that ran, then the one
	// before it (the latest has its outcome now).
	check(t, s.SetOutcome(ctx, warden.Outcome{Session: "s", Tool: "Bash", OK: true}))
	check(t, s.SetOutcome(ctx, warden.Outcome{Session: "s", Tool: "Bash", OK: false}))
	isErr(t, s.SetOutcome(ctx, warden.Outcome{Session: "s", Tool: "Bash", ToolUse: "tu-9", OK: true}), warden.ErrNotFound)
	isErr(t, s.SetOutcome(ctx, warden.Outcome{Session: "s", Tool: "Read", OK: true}), warden.ErrNotFound)
	want := map[int64]string{a: warden.OutcomeFail, b: "", c: warden.OutcomeFail, d: warden.OutcomeOK, other: ""}
	recs := must(s.Audit(ctx, warden.AuditFilter{}))(t)
	for _, r := range recs {
		if r.Outcome != want[r.ID] {
			t.Errorf("record %d (%s, tool_use %q): outcome %q, want %q", r.ID, r.Session, r.ToolUse, r.Outcome, want[r.ID])
		}
	}
	if recs[0].ToolUse != "tu-1" {
		t.Errorf("tool_use of the first record: %q", recs[0].ToolUse)
	}
}

// testSessionAgent: a session keeps the agent that opened it, through
// UpdateSession, WriteDecision (also grouped) and Sessions.
func testSessionAgent(t *testing.T, s warden.Store) {
	must(s.UpdateSession(ctx, "mine", func(x *warden.Session, created bool) error {
		if !created || x.Agent != "" {
			t.Errorf("new session: created %v, agent %q", created, x.Agent)
		}
		x.Agent = "builder"
		return nil
	}))(t)
	if got := must(s.Session(ctx, "mine"))(t); got.Agent != "builder" {
		t.Errorf("agent after UpdateSession: %q", got.Agent)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("w%d", i)
			_, _, err := s.WriteDecision(ctx, id, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
				x.Agent = "agent-" + id
				return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: id, Tool: "Bash", Decision: warden.Allow, Agent: x.Agent}}, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		id := fmt.Sprintf("w%d", i)
		if got := must(s.Session(ctx, id))(t); got.Agent != "agent-"+id {
			t.Errorf("session %s: agent %q", id, got.Agent)
		}
	}
	// An update that leaves the agent keeps it.
	must(s.UpdateSession(ctx, "mine", func(x *warden.Session, created bool) error { x.Calls++; return nil }))(t)
	list := must(s.Sessions(ctx, warden.SessionFilter{}))(t)
	found := false
	for _, x := range list {
		if x.ID == "mine" {
			found = x.Agent == "builder" && x.Calls == 1
		}
	}
	if !found {
		t.Errorf("Sessions lost the agent of session mine: %+v", list)
	}
}

// testAgentHalts: a halt of an agent token is apart from the session and
// project halts: listed with them, read by AgentHalted and HaltAndGrants
// (for that agent only), lifted by ClearAgentHalt alone.
func testAgentHalts(t *testing.T, s warden.Store) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, ok, err := s.AgentHalted(ctx, "rogue"); ok || err != nil {
		t.Fatalf("halted before any halt: %v %v", ok, err)
	}
	if _, err := s.SetHalt(ctx, warden.Halt{Agent: "rogue", Session: "s", Message: "x"}); err == nil {
		t.Error("a halt of an agent and a session at once was taken")
	}
	must(s.SetHalt(ctx, warden.Halt{Agent: "rogue", Message: "stop rogue", By: "ops", At: at}))(t)
	h, ok, err := s.AgentHalted(ctx, "rogue")
	if err != nil || !ok || h.Agent != "rogue" || h.Message != "stop rogue" || h.By != "ops" || !h.At.Equal(at) {
		t.Errorf("AgentHalted(rogue): %+v %v %v", h, ok, err)
	}
	for _, other := range []string{"rogue2", "rogu", ""} {
		if _, ok, _ := s.AgentHalted(ctx, other); ok {
			t.Errorf("agent %q is halted by rogue's halt", other)
		}
	}
	// Not a project halt nor a session's.
	for _, sid := range []string{"", "rogue", "s"} {
		if h, ok, _ := s.Halted(ctx, sid); ok {
			t.Errorf("session %q halted by the agent's halt: %+v", sid, h)
		}
	}
	for _, sid := range []string{"", "new-session", "a/b"} {
		h, halted, _, err := s.HaltAndGrants(ctx, sid, "rogue")
		if err != nil || !halted || h.Agent != "rogue" || h.Message != "stop rogue" {
			t.Errorf("HaltAndGrants(%q, rogue): %+v %v %v", sid, h, halted, err)
		}
		if _, halted, _, _ := s.HaltAndGrants(ctx, sid, "good"); halted {
			t.Errorf("HaltAndGrants(%q, good) is halted", sid)
		}
	}
	// A session's own halt is the narrower one; the project's the wider.
	must(s.SetHalt(ctx, warden.Halt{Session: "a", Message: "stop a", At: at}))(t)
	must(s.SetHalt(ctx, warden.Halt{Message: "stop all", At: at}))(t)
	if h, _, _, _ := s.HaltAndGrants(ctx, "a/sub", "rogue"); h.Message != "stop a" {
		t.Errorf("a/sub for rogue: %+v", h)
	}
	if h, _, _, _ := s.HaltAndGrants(ctx, "b", "rogue"); h.Message != "stop rogue" {
		t.Errorf("b for rogue: %+v", h)
	}
	if h, _, _, _ := s.HaltAndGrants(ctx, "b", "good"); h.Message != "stop all" {
		t.Errorf("b for good: %+v", h)
	}
	check(t, s.ClearHalt(ctx, "a"))
	check(t, s.ClearHalt(ctx, ""))
	hs := must(s.Halts(ctx))(t)
	if len(hs) != 1 || hs[0].Agent != "rogue" || hs[0].Session != "" {
		t.Errorf("halts: %+v", hs)
	}
	isErr(t, s.ClearHalt(ctx, ""), warden.ErrNotFound)
	check(t, s.ClearAgentHalt(ctx, "rogue"))
	isErr(t, s.ClearAgentHalt(ctx, "rogue"), warden.ErrNotFound)
	if _, ok, _ := s.AgentHalted(ctx, "rogue"); ok {
		t.Error("rogue still halted after ClearAgentHalt")
	}
}

// testAuditCallSum: a record keeps the digest of its call (CallSum), by
// AppendAudit and WriteDecision, and a later record with the same call id
// is refused whatever its digest.
func testAuditCallSum(t *testing.T, s warden.Store) {
	must(s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, CallID: "x", CallSum: "sum-x", Agent: "a"}))(t)
	_, err := s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, CallID: "x", CallSum: "other"})
	isErr(t, err, warden.ErrConflict)
	recs := must(s.Audit(ctx, warden.AuditFilter{CallID: "x"}))(t)
	if len(recs) != 1 || recs[0].CallSum != "sum-x" || recs[0].Agent != "a" {
		t.Errorf("records of call x: %+v", recs)
	}
	_, rec, err := s.WriteDecision(ctx, "cs", func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
		return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: "cs", Tool: "Bash", Decision: warden.Allow, CallID: "y", CallSum: "sum-y"}}, nil
	})
	check(t, err)
	if got := must(s.Audit(ctx, warden.AuditFilter{CallID: "y"}))(t); len(got) != 1 || got[0].CallSum != "sum-y" || got[0].ID != rec.ID {
		t.Errorf("records of call y: %+v", got)
	}
}
