package storetest

import (
	"database/sql"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/sqlstore"
)

// CheckUpgraded checks a store opened on a database that an older warden
// wrote at schema version 5 (testdata/schema5.sql of the sqlite and
// postgres packages, made by that build's migrations and Store calls):
// the schema is at this build's version, every record reads back as
// written, and the columns and indexes of the later migrations work.
func CheckUpgraded(t *testing.T, s warden.Store) {
	t.Helper()
	if db, ok := s.(interface{ DB() *sql.DB }); ok {
		var v int
		if err := db.DB().QueryRow(`SELECT MAX(version) FROM warden_schema`).Scan(&v); err != nil || v != sqlstore.SchemaVersion {
			t.Fatalf("schema version %d (%v), want %d", v, err, sqlstore.SchemaVersion)
		}
	}
	x := must(s.Session(ctx, "s-old"))(t)
	if x.Role != "dev" || x.Host != "claude" || x.Calls != 3 || x.Intent != "fix the build; then test" {
		t.Errorf("session: %+v", x)
	}
	if g := grantIDs(t, s, warden.GrantFilter{All: true}); g != "[g-old]" {
		t.Errorf("grants %q, want g-old", g)
	}
	if all := must(s.Approvals(ctx, warden.ApprovalFilter{Status: warden.ApprovalPending}))(t); len(all) != 2 {
		t.Errorf("%d pending approvals, want 2", len(all))
	}
	pend := must(s.Approvals(ctx, warden.ApprovalFilter{Fingerprint: "fp-1"}))(t)
	if len(pend) != 1 || pend[0].Args["command"] != "rm -rf build; echo ';'" {
		t.Fatalf("pending approvals: %+v", pend)
	}
	// The unique index of one pending approval per call holds on old rows.
	again := newApproval(s, t, "s-old", pend[0].Fingerprint)
	if again.ID != pend[0].ID {
		t.Errorf("a second approval for %s: %s, want the pending %s", pend[0].Fingerprint, again.ID, pend[0].ID)
	}
	if h, ok, err := s.Halted(ctx, "s-old/agent-1"); err != nil || !ok || h.Message != "stop; now" {
		t.Errorf("halted: %+v %v %v", h, ok, err)
	}
	st := must(s.State(ctx))(t)
	if st.Phase != "build" || len(st.Anchors) != 1 || st.Anchors[0].Content != "never push to main" ||
		len(st.History) != 1 || st.History[0].Action != "edit" {
		t.Errorf("state: %+v", st)
	}
	recs := must(s.Audit(ctx, warden.AuditFilter{CallID: "call-1"}))(t)
	if len(recs) != 1 || recs[0].Reason != "listing; not allowed" || recs[0].Source != "" || recs[0].Args["command"] != "ls; pwd" {
		t.Fatalf("old audit record: %+v", recs)
	}
	// Migration 6 added the source column; migration 5's call index holds.
	r := must(s.AppendAudit(ctx, warden.AuditRecord{Session: "s-old", Tool: "Bash", Decision: warden.Deny, CallID: "call-2", Source: "never list"}))(t)
	if got := must(s.Audit(ctx, warden.AuditFilter{CallID: "call-2"}))(t); len(got) != 1 || got[0].Source != "never list" || got[0].ID <= recs[0].ID {
		t.Errorf("new audit record %+v, read back %+v", r, got)
	}
	if _, err := s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, CallID: "call-1"}); err == nil {
		t.Error("a second record for call-1 was appended")
	}
}
