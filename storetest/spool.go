package storetest

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/warden-run/warden"
)

// SpoolingStore is a store with a spool file (sqlstore.Store).
type SpoolingStore interface {
	warden.Store
	SetSpool(path string)
	Spool(r warden.AuditRecord) error
}

// SpoolTakenIn: records spooled while the store was down join the audit
// trail after the next record the store takes, as a long-lived process
// (hookd, warden serve) writes them; a spooled record of a call the
// store holds already is dropped; the spool file is gone after.
func SpoolTakenIn(t *testing.T, s SpoolingStore, spool string) {
	s.SetSpool(spool)
	held := must(s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, Code: warden.CodeAllowed, Mode: "enforce", CallID: "held"}))(t)
	down := warden.FailClosed(warden.StoreError(errors.New("connection refused")))
	for i := range 5 {
		r := warden.FailureRecord(warden.ToolCall{Tool: "Bash", Session: "s-spool", Args: map[string]any{"command": "ls"}}, fmt.Sprintf("down-%d", i), "", down)
		check(t, s.Spool(r))
	}
	// Spooled again by a second process that gave up on the same call.
	check(t, s.Spool(warden.FailureRecord(warden.ToolCall{Tool: "Bash"}, "held", "", down)))
	if _, err := os.Stat(spool); err != nil {
		t.Fatalf("no spool file: %v", err)
	}
	// Each write takes some of the spool in (it spends little time on
	// it), until nothing waits.
	writes := 0
	for ; writes < 1000; writes++ {
		must(s.AppendAudit(ctx, warden.AuditRecord{Tool: "Read", Decision: warden.Allow, Code: warden.CodeAllowed, Mode: "enforce", CallID: fmt.Sprintf("back-%d", writes)}))(t)
		if _, err := os.Stat(spool); errors.Is(err, os.ErrNotExist) {
			writes++
			break
		}
	}
	recs := must(s.Audit(ctx, warden.AuditFilter{}))(t)
	if len(recs) != 6+writes {
		t.Errorf("%d records after the store came back, want %d (1 before, 5 spooled, %d after)", len(recs), 6+writes, writes)
	}
	spooled := must(s.Audit(ctx, warden.AuditFilter{Session: "s-spool"}))(t)
	for _, r := range spooled {
		if r.Code != warden.CodeStoreUnavailable || r.Decision != warden.Deny {
			t.Errorf("spooled record %+v, want a STORE_UNAVAILABLE deny", r)
		}
	}
	if r := must(s.Audit(ctx, warden.AuditFilter{CallID: "held"}))(t); len(r) != 1 || r[0].ID != held.ID {
		t.Errorf("the call recorded before: %+v, want its first record alone", r)
	}
	if _, err := os.Stat(spool); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the spool file is still there: %v", err)
	}
}
