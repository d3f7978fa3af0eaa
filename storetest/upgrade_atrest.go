package storetest

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

// SecretsRedactedOnUpgrade: grants and approvals that an older warden
// kept with a secret in clear (the values of the parts of calls that
// carry every secret form, written as it wrote them) are redacted when a
// store at schema version 11 is opened by this warden, and each grant
// still allows exactly its call. open opens the store, the same database
// each time.
func SecretsRedactedOnUpgrade(t *testing.T, open func() (warden.Store, *sql.DB)) {
	root := t.TempDir()
	file := filepath.Join(root, "warden.yaml")
	if err := os.WriteFile(file, []byte(atRestPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		t.Fatal(err)
	}
	s, db := open()
	var granted []warden.ToolCall
	for _, call := range SecretCalls("s-old") {
		tr := eng.Explain(call, nil)
		if tr.Decision.Decision != warden.Ask {
			continue
		}
		var parts []warden.GrantPart
		for _, p := range tr.Parts {
			// An older warden kept a part's value as it is. (A part that
			// is secret only in its line, a word of a private key, is
			// not known to be one without the line, which a grant does
			// not keep.)
			if p.Effect != warden.Ask || p.Value == "" || p.Input != "" || warden.RedactExact(p.Value) == p.Value && p.Subject == warden.SubjectCommand {
				continue
			}
			parts = append(parts, warden.GrantPart{Subject: p.Subject, Value: p.Value})
		}
		if len(parts) == 0 {
			continue
		}
		must(s.CreateApproval(ctx, warden.Approval{Tool: call.Tool, Session: call.Session, Parts: parts,
			Summary: call.Tool + ": " + parts[0].Value, Code: warden.CodeDefault}))(t)
		for _, p := range parts {
			must(s.AddGrant(ctx, warden.Grant{Tool: call.Tool, Subject: p.Subject, Value: p.Value, UsesLeft: -1}))(t)
		}
		if len(parts) == countAsk(tr) {
			granted = append(granted, call)
		}
	}
	if len(granted) < 10 {
		t.Fatalf("%d calls granted, want most of the secret forms", len(granted))
	}
	// The store is at schema version 11, as an older warden left it: the
	// later migrations are undone (0013 added audit.sandbox).
	for _, q := range []string{`DELETE FROM warden_schema WHERE version >= 12`, `ALTER TABLE audit DROP COLUMN sandbox`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, db = open()
	defer s.Close()
	CheckNoSecret(t, db, "")
	tr := session.New(eng, s)
	for _, call := range granted {
		res, err := tr.Decide(ctx, call, session.Options{})
		if err != nil || res.Decision.Decision != warden.Allow {
			t.Errorf("call %v with its grant after the upgrade: %s %s %v", call.Args, res.Decision.Decision, res.Decision.Reason, err)
		}
	}
}

// countAsk counts the parts of a decision that ask, by value.
func countAsk(tr *engine.Trace) int {
	seen := map[string]bool{}
	for _, p := range tr.Parts {
		if p.Effect == warden.Ask && p.Value != "" {
			seen[p.Subject+"\x00"+p.Value] = true
		}
	}
	return len(seen)
}
