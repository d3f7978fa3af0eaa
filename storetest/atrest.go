package storetest

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/secretforms"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

// atRestPolicy asks about every call, denies rm -rf, and allows a
// read: every call with a secret queues an approval, and a denied one
// leaves a history entry.
const atRestPolicy = `version: 1
default: ask
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: "rm -rf *"
    message: Recursive forced deletion is blocked.
    suggestion: Delete specific files.
`

// Secrets are every secret the redaction test knows (package
// secretforms): what NoSecretAtRest looks for.
func Secrets() []string {
	var out []string
	for _, c := range secretforms.Commands {
		out = append(out, c.Secret)
	}
	return append(out, secretforms.ArgSecrets...)
}

// SecretCalls are tool calls carrying every secret form the redaction
// test knows: each command form as a shell line, as a line that is
// denied, and as a tool's argument, and the argument maps with secrets
// under secret names, for a shell tool and another tool.
func SecretCalls(session string) []warden.ToolCall {
	var calls []warden.ToolCall
	for _, c := range secretforms.Commands {
		calls = append(calls,
			warden.ToolCall{Tool: "Bash", Session: session, Args: map[string]any{"command": c.In}},
			warden.ToolCall{Tool: "Bash", Session: session, Args: map[string]any{"command": c.In + " && rm -rf /tmp/x"}},
			warden.ToolCall{Tool: "deploy_site", Session: session, Args: map[string]any{"note": c.In}},
		)
	}
	return append(calls,
		warden.ToolCall{Tool: "Bash", Session: session, Args: secretforms.Args()},
		warden.ToolCall{Tool: "deploy_site", Session: session, Args: secretforms.Args()},
	)
}

// NoSecretAtRest decides calls carrying every secret form the redaction
// test knows through the session layer (audit records, approvals and
// their parts, grants from approvals answered for the session and for
// always, rejections, history, failure records) into s, then reads every
// column of every table the database's catalog lists (so that a table
// added later is covered) and every file under dir (the .warden folder
// the store and its spool live in), and fails on any secret in clear.
// db is the store's database; dir may be "" for none.
func NoSecretAtRest(t *testing.T, s warden.Store, db *sql.DB, dir string) {
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
	tr := session.New(eng, s)
	calls := SecretCalls("at-rest")
	var approvals []string
	asked := map[string]int{} // approval id -> call
	for i, call := range calls {
		res, err := tr.Decide(ctx, call, session.Options{CallID: fmt.Sprintf("call-%d", i)})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if res.Approval != nil {
			approvals = append(approvals, res.Approval.ID)
			asked[res.Approval.ID] = i
		}
	}
	if len(approvals) < len(secretforms.Commands) {
		t.Fatalf("%d approvals queued for %d calls: the policy asks about every call", len(approvals), len(calls))
	}
	// Answer them every way: grants for always and for the session, a
	// rejection, and some left pending.
	now := time.Now()
	for i, id := range approvals {
		switch i % 4 {
		case 0:
			_, err = session.Approve(ctx, s, id, session.Answer{Scope: warden.ScopeAlways, By: "alice"}, now)
		case 1:
			_, err = session.Approve(ctx, s, id, session.Answer{Scope: warden.ScopeSession, By: "alice"}, now)
		case 2:
			_, err = session.Reject(ctx, s, id, "not now", "alice")
		}
		if err != nil {
			t.Fatalf("answer approval %s: %v", id, err)
		}
	}
	// The calls again: the grants and the answers are used. A grant kept
	// redacted still covers exactly its call.
	approvedAlways := map[int]bool{}
	for i, id := range approvals {
		if i%4 == 0 {
			approvedAlways[asked[id]] = true
		}
	}
	for i, call := range calls {
		res, err := tr.Decide(ctx, call, session.Options{CallID: fmt.Sprintf("again-%d", i)})
		if err != nil {
			t.Fatalf("call %d again: %v", i, err)
		}
		if approvedAlways[i] && res.Decision.Decision != warden.Allow {
			t.Errorf("call %d (%v), approved for always, decided again: %s %s: %s", i, call.Args, res.Decision.Decision, res.Decision.Code, res.Decision.Reason)
		}
	}
	// A call that got no decision (a timeout) is recorded as a failure.
	for i, call := range calls[:3] {
		fail := warden.FailClosed(warden.Errorf(warden.CodeTimeout, "no decision in time for %v", call.Args["command"]))
		if _, err := session.RecordFailure(ctx, s, call, session.Options{CallID: fmt.Sprintf("failed-%d", i)}, fail); err != nil {
			t.Fatalf("record failure %d: %v", i, err)
		}
	}
	// Records the store could not take wait in its spool file: the last
	// ones stay there (no write follows to take them in).
	if sp, ok := s.(warden.Spooler); ok {
		for i, call := range calls {
			rec := warden.FailureRecord(call, fmt.Sprintf("spooled-%d", i), "", warden.FailClosed(warden.StoreError(fmt.Errorf("store down"))))
			if err := sp.Spool(rec); err != nil {
				t.Fatalf("spool: %v", err)
			}
		}
	}
	grants, err := s.Grants(ctx, warden.GrantFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) == 0 {
		t.Fatal("no grant made from the approvals answered for always and for the session")
	}
	CheckNoSecret(t, db, dir)
}

// CheckNoSecret fails the test for every secret of Secrets found in clear
// in a column of a table of db (any table its catalog lists) or in a file
// under dir ("" for none).
func CheckNoSecret(t *testing.T, db *sql.DB, dir string) {
	t.Helper()
	secrets := Secrets()
	tables, err := catalogTables(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("the catalog lists no table")
	}
	rowsRead := 0
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatalf("read table %s: %v", table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			rowsRead++
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("read table %s: %v", table, err)
			}
			for i, v := range vals {
				var text string
				switch v := v.(type) {
				case []byte:
					text = string(v)
				case string:
					text = v
				default:
					continue
				}
				for _, sec := range secrets {
					if strings.Contains(text, sec) {
						t.Errorf("table %s, column %s holds the secret %q in clear: %.300s", table, cols[i], sec, text)
					}
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read table %s: %v", table, err)
		}
		rows.Close()
	}
	if rowsRead == 0 {
		t.Fatal("read no row in any table")
	}
	if dir == "" {
		return
	}
	files := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, sec := range secrets {
			if strings.Contains(string(data), sec) {
				t.Errorf("file %s holds the secret %q in clear", path, sec)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Errorf("no file under %s", dir)
	}
}

// catalogTables lists the tables of the store's database from its catalog:
// PostgreSQL's (the tables of the current schema) or SQLite's.
func catalogTables(db *sql.DB) ([]string, error) {
	q := `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		rows, err = db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1`)
	}
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}
