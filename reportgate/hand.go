package reportgate

import (
	"context"
	"fmt"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/report"
)

// HandInstructions is the report instructions for an agent wired by hand
// (`warden report instructions`): for session sid, held to the contract
// whatever its role, with its nonce (drawn and stored the first time, as
// Instructions does); without a session (sid ""), with a fresh nonce that
// nothing stores. A policy without a report section, and a session whose
// report is final or failed already, are errors that say so.
func HandInstructions(ctx context.Context, pol *policy.Policy, st warden.ReportStore, sid string) (string, error) {
	if pol.Report == nil {
		return "", fmt.Errorf("%s has no report section: no report is asked for", pol.File)
	}
	if sid == "" {
		s, err := report.NewSession(&report.Config{Plugins: pol.Report.Files.Factories()})
		if err != nil {
			return "", err
		}
		return warden.TerminalSafe(s.Instructions()), nil
	}
	// A role the contract applies to (with no roles listed, any role at
	// depth 0 does).
	role := ""
	if len(pol.Report.Roles) > 0 {
		role = pol.Report.Roles[0]
	}
	text, err := Instructions(ctx, pol, st, warden.Session{ID: sid, Role: role})
	if err != nil || text != "" {
		return text, err
	}
	r, err := st.Report(ctx, sid)
	if err != nil {
		return "", err
	}
	return "", fmt.Errorf("the report of session %s is %s already", sid, r.Status)
}
