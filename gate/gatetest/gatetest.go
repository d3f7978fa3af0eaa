// Package gatetest is the contract every front end of package gate keeps,
// as one suite in the spirit of storetest.Run: the same scenarios run
// against each front end (the hooks through hookd, warden serve over
// HTTP through /v1/decide and /v1/hook, the MCP proxy, the Go client), each on a real PostgreSQL store
// reached through a proxy that the scenarios cut (pgtest.Proxy), and each
// asserts a fail-closed answer and exactly one audit record of the call:
//
//   - the policy broken mid-run: the next call is denied POLICY_ERROR;
//   - a decision timed out (the store's audit table locked past the front
//     end's deadline): denied with a failure code, and recorded once the
//     lock is gone, under the gate's own context or from the spool;
//   - a call id replayed: the same call again gets the decision on record,
//     another call under the id is denied BAD_INPUT;
//   - the store down: denied STORE_UNAVAILABLE, and recorded once it is
//     back (the spool).
//
// It is imported by tests only.
package gatetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/pgtest"
	"github.com/warden-run/warden/postgres"
)

// Policy is the project's policy: echo is allowed in a shell and as the
// MCP server "fake"'s tool echo; anything else is denied.
const Policy = `version: 1
default: deny
rules:
  - id: echo
    effect: allow
    tool: shell
    command: ["echo *"]
  - id: mcp-echo
    effect: allow
    tool: mcp__fake__echo
`

// Project is what a front end runs on: a folder with the policy file and
// a PostgreSQL store of its own, reached through Proxy.
type Project struct {
	Dir    string
	Policy string // the policy file
	// Store is the store URL the front end uses (through Proxy).
	Store string
	Proxy *pgtest.Proxy

	direct string  // the store URL without the proxy
	admin  *sql.DB // the test's own connection
	schema string
}

// Call is one tool call a scenario sends: a shell command echo MARKER (an
// MCP front end calls the tool echo with {"text": MARKER}).
type Call struct {
	Marker string
	// CallID is the call's id ("" none): the same id sent twice is a
	// retry.
	CallID string
}

// Answer is a front end's answer as its caller reads it.
type Answer struct {
	Decision warden.Effect
	// Code is the decision's code, where the caller can read one.
	Code warden.Code
	// Raw is the answer as the caller got it, for failure messages.
	Raw string
}

// FrontEnd is one front end under test.
type FrontEnd struct {
	Name string
	// Start starts the front end on the project (its store reachable) and
	// returns how to send it a call. The front end stops when the test
	// ends.
	Start func(t *testing.T, p *Project) func(t *testing.T, c Call) Answer
	// Deadline is how long the front end waits for a decision before it
	// gives up on its own: the timeout scenario holds the store longer.
	Deadline time.Duration
}

// Run runs every scenario against fe.
func Run(t *testing.T, fe FrontEnd) {
	for _, sc := range []struct {
		name string
		run  func(t *testing.T, fe FrontEnd, p *Project, call func(*testing.T, Call) Answer)
	}{
		{"PolicyBrokenMidRun", policyBroken},
		{"DecisionTimedOut", timedOut},
		{"CallIDReplayed", replayed},
		{"StoreDown", storeDown},
	} {
		t.Run(sc.name, func(t *testing.T) {
			p := NewProject(t)
			call := fe.Start(t, p)
			sc.run(t, fe, p, call)
		})
	}
}

// NewProject makes a project with Policy and its own schema.
func NewProject(t *testing.T) *Project {
	t.Helper()
	admin := pgtest.Admin(t)
	direct := pgtest.SchemaOn(t, admin)
	u := regexp.MustCompile(`search_path=([a-z0-9_]+)`).FindStringSubmatch(direct)
	p := &Project{Dir: t.TempDir(), direct: direct, admin: admin, schema: u[1]}
	p.Policy = filepath.Join(p.Dir, "warden.yaml")
	p.Proxy = pgtest.NewProxy(t, direct)
	p.Store = p.Proxy.URL
	if err := os.WriteFile(p.Policy, []byte(Policy), 0o644); err != nil {
		t.Fatal(err)
	}
	// The schema made before any front end opens it (as `warden init`
	// does): a front end's first open would race another's.
	st, err := postgres.Open(t.Context(), direct)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return p
}

// Records are the audit records of the calls with the marker.
func (p *Project) Records(t *testing.T, marker string) []warden.AuditRecord {
	t.Helper()
	st, err := postgres.Open(t.Context(), p.direct)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.Audit(t.Context(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []warden.AuditRecord
	for _, r := range all {
		args, _ := json.Marshal(r.Args)
		if strings.Contains(string(args), marker) {
			out = append(out, r)
		}
	}
	return out
}

// oneRecord asserts that the calls with the marker have exactly one
// audit record, of the effect want, and returns it.
func oneRecord(t *testing.T, p *Project, marker string, want warden.Effect) warden.AuditRecord {
	t.Helper()
	recs := p.Records(t, marker)
	if len(recs) != 1 {
		t.Fatalf("%s: %d audit records, want exactly one: %+v", marker, len(recs), recs)
	}
	if recs[0].Decision != want {
		t.Errorf("%s: the record says %s %s, want %s", marker, recs[0].Decision, recs[0].Code, want)
	}
	return recs[0]
}

// denied asserts a fail-closed answer: a deny with one of the codes.
func denied(t *testing.T, what string, a Answer, codes ...warden.Code) {
	t.Helper()
	if a.Decision != warden.Deny {
		t.Fatalf("%s: answered %s, want deny: %s", what, a.Decision, a.Raw)
	}
	for _, c := range codes {
		if a.Code == c {
			return
		}
	}
	t.Errorf("%s: denied %s, want one of %v: %s", what, a.Code, codes, a.Raw)
}

func allowed(t *testing.T, what string, a Answer) {
	t.Helper()
	if a.Decision != warden.Allow {
		t.Fatalf("%s: answered %s %s, want allow: %s", what, a.Decision, a.Code, a.Raw)
	}
}

func policyBroken(t *testing.T, fe FrontEnd, p *Project, call func(*testing.T, Call) Answer) {
	allowed(t, "echo before the edit", call(t, Call{Marker: "before-edit"}))
	if err := os.WriteFile(p.Policy, []byte("version: 1\nrules: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := call(t, Call{Marker: "after-edit", CallID: "c-broken-1"})
	denied(t, "echo with the policy broken", a, warden.CodePolicyError)
	oneRecord(t, p, "after-edit", warden.Deny)
	// Fixed again: the next call is decided with it.
	if err := os.WriteFile(p.Policy, []byte(Policy), 0o644); err != nil {
		t.Fatal(err)
	}
	allowed(t, "echo with the policy fixed", call(t, Call{Marker: "after-fix"}))
	oneRecord(t, p, "after-fix", warden.Allow)
}

func timedOut(t *testing.T, fe FrontEnd, p *Project, call func(*testing.T, Call) Answer) {
	allowed(t, "echo before the lock", call(t, Call{Marker: "before-lock"}))
	// Another client holds the audit table: the decision cannot write
	// its record, nor read the session's history, until it lets go.
	ctx := context.Background()
	tx, err := p.admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("LOCK TABLE " + p.schema + ".audit IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a := call(t, Call{Marker: "locked", CallID: "c-locked-1"})
	t.Logf("answered after %s (deadline %s)", time.Since(start).Round(time.Millisecond), fe.Deadline)
	tx.Rollback()
	denied(t, "echo with the store held", a, warden.CodeTimeout, warden.CodeUnavailable, warden.CodeStoreUnavailable)
	// The record comes under the gate's own context once the lock is
	// gone, or from the spool with the next write.
	allowed(t, "echo after the lock", call(t, Call{Marker: "after-lock"}))
	waitRecord(t, p, "locked")
	oneRecord(t, p, "locked", warden.Deny)
}

// waitRecord waits for a record of the marker to arrive (a failure
// recorded after the caller's answer went out). A hang, not a measure.
func waitRecord(t *testing.T, p *Project, marker string) {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if len(p.Records(t, marker)) > 0 {
			return
		}
	}
}

func replayed(t *testing.T, fe FrontEnd, p *Project, call func(*testing.T, Call) Answer) {
	first := call(t, Call{Marker: "replay-1", CallID: "c-replay-1"})
	allowed(t, "echo, first", first)
	again := call(t, Call{Marker: "replay-1", CallID: "c-replay-1"})
	allowed(t, "echo, the same call again under its id", again)
	oneRecord(t, p, "replay-1", warden.Allow)
	// Another call under the id is refused, and the refusal recorded.
	other := call(t, Call{Marker: "replay-other", CallID: "c-replay-1"})
	denied(t, "another call under a used id", other, warden.CodeBadInput)
	oneRecord(t, p, "replay-other", warden.Deny)
	if n := len(p.Records(t, "replay-1")); n != 1 {
		t.Errorf("replay-1 has %d records after the refusal, want 1", n)
	}
}

func storeDown(t *testing.T, fe FrontEnd, p *Project, call func(*testing.T, Call) Answer) {
	allowed(t, "echo before the outage", call(t, Call{Marker: "before-down"}))
	p.Proxy.Stop()
	a := call(t, Call{Marker: "down-1", CallID: "c-down-1"})
	p.Proxy.Start()
	denied(t, "echo with the store down", a, warden.CodeStoreUnavailable, warden.CodeTimeout, warden.CodeUnavailable)
	// The spooled record joins with the store's next write.
	allowed(t, "echo after the outage", call(t, Call{Marker: "after-down"}))
	waitRecord(t, p, "down-1")
	oneRecord(t, p, "down-1", warden.Deny)
}

// CodeIn is the first warden code named in text ("" none): how a caller
// that reads text (a hook's answer) reads the code.
func CodeIn(text string) warden.Code {
	best, at := warden.Code(""), len(text)+1
	for _, c := range []warden.Code{warden.CodePolicyError, warden.CodeTimeout, warden.CodeUnavailable, warden.CodeRefused,
		warden.CodeStoreUnavailable, warden.CodeBadInput, warden.CodeRuleDeny, warden.CodeDefault, warden.CodeAllowed} {
		if i := strings.Index(text, string(c)); i >= 0 && i < at {
			best, at = c, i
		}
	}
	return best
}

// Marker is the command of a call.
func (c Call) Command() string { return fmt.Sprintf("echo %s", c.Marker) }
