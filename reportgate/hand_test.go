package reportgate_test

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/reportgate"
)

// TestHandInstructions: an agent wired by hand gets its session's nonce,
// drawn once and kept, even in a role the contract names none of (the
// first listed role stands in); without a session, a fresh nonce nothing
// stores; a report that is final already, and a policy without a report
// section, are errors that say so.
func TestHandInstructions(t *testing.T) {
	pol, st, _ := project(t, section+"  roles: [writer, reviewer]\n")
	first, err := reportgate.HandInstructions(ctx, pol, st, "h1")
	m := nonceRe.FindStringSubmatch(first)
	if err != nil || m == nil {
		t.Fatalf("session h1: %v\n%s", err, first)
	}
	if again, err := reportgate.HandInstructions(ctx, pol, st, "h1"); err != nil || again != first {
		t.Errorf("h1 again: %v\n%s", err, again)
	}
	fresh, err := reportgate.HandInstructions(ctx, pol, st, "")
	if err != nil || strings.Contains(fresh, m[1]) || nonceRe.FindStringSubmatch(fresh) == nil {
		t.Errorf("no session: %v\n%s", err, fresh)
	}
	if rs, err := st.Reports(ctx, warden.ReportFilter{}); err != nil || len(rs) != 1 {
		t.Errorf("stored reports: %+v %v, want h1's alone", rs, err)
	}
	if _, err := st.UpdateReport(ctx, "h1", func(r *warden.Report, _ bool) error { r.Status = warden.ReportFinal; return nil }); err != nil {
		t.Fatal(err)
	}
	if text, err := reportgate.HandInstructions(ctx, pol, st, "h1"); err == nil || !strings.Contains(err.Error(), "final already") {
		t.Errorf("a final report: %q %v", text, err)
	}
	none, st2, _ := project(t, "")
	if _, err := reportgate.HandInstructions(ctx, none, st2, "h1"); err == nil || !strings.Contains(err.Error(), "no report section") {
		t.Errorf("no report section: %v", err)
	}
}
