package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/secretforms"
	"github.com/warden-run/warden/session"
)

// TestShown: a listing is never null, an approval's expiry is filled in,
// and a secret kept in clear in a grant's value or pattern or an
// approval's part is redacted in what is shown.
func TestShown(t *testing.T) {
	if session.ShownApprovals(nil, time.Hour) == nil || session.ShownGrants(nil) == nil {
		t.Error("an empty listing is nil (JSON null)")
	}
	c := secretforms.Commands[0]
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	as := session.ShownApprovals([]warden.Approval{{ID: "a1", Status: warden.ApprovalPending, CreatedAt: created,
		Parts: []warden.GrantPart{{Subject: warden.SubjectCommand, Value: c.In}}}}, time.Hour)
	if !as[0].ExpiresAt.Equal(session.ApprovalExpiry(as[0], time.Hour)) || as[0].ExpiresAt.IsZero() {
		t.Errorf("approval expiry %v", as[0].ExpiresAt)
	}
	gs := session.ShownGrants([]warden.Grant{{ID: "g1", Value: c.In, Pattern: c.In}})
	for _, shown := range []string{as[0].Parts[0].Value, gs[0].Value, gs[0].Pattern} {
		if strings.Contains(shown, c.Secret) || !strings.Contains(shown, warden.Redacted) {
			t.Errorf("%s: shown as %q", c.Name, shown)
		}
	}
}
