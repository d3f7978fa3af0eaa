package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/sqlite"
)

// floorSQLiteArg, as the e2e test binary's first argument, makes it the
// durable floor of BenchmarkServeLoad (serveFloorSQLite).
const floorSQLiteArg = "serve-floor-sqlite"

// floorStoreArg, as the e2e test binary's first argument, makes it the
// store floor of BenchmarkServeLoad (serveFloorStore); a second argument
// is a PostgreSQL store's URL.
const floorStoreArg = "serve-floor-store"

// floorWrite is one request's row, waiting for its group's commit.
type floorWrite struct {
	body []byte
	done chan error
}

// serveFloorSQLite is the load test's durable floor: the floor
// (serveFloor) that also writes each request's body as one row of a SQLite
// table (the driver warden uses, WAL, synchronous=FULL) before it
// answers, the rows of the requests waiting at once in one transaction
// and one sync. No token check, no decision, no session, and one narrow
// row with no index besides its id: no server that writes each call
// durably to SQLite can answer this client much faster on this machine,
// so the row tells what the durable write costs and what is warden's.
func serveFloorSQLite() {
	path, err := filepath.Abs("floor.db")
	if err != nil {
		floorFail(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		floorFail(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, time BIGINT NOT NULL, body TEXT NOT NULL)`); err != nil {
		floorFail(err)
	}
	floorServe(floorGroups(func(group []*floorWrite) error { return floorCommit(db, group) }))
}

// floorGroups is a floor's record: each request's body waits for its
// group's commit (floorCommits).
func floorGroups(commit func([]*floorWrite) error) func(body []byte) error {
	writes := make(chan *floorWrite, 1024)
	go floorCommits(commit, writes)
	return func(body []byte) error {
		fw := &floorWrite{body: body, done: make(chan error, 1)}
		writes <- fw
		return <-fw.done
	}
}

// A group waits at most floorLinger for as many callers as the last
// group held (at most floorEnough), as warden's group writer lingers
// under load, then takes every write waiting (at most floorGroup).
const (
	floorLinger = 500 * time.Microsecond
	floorEnough = 16
	floorGroup  = 64
)

// floorCommits writes the rows of writes in groups, one multi-row insert
// and one commit each, then answers each group's callers.
func floorCommits(commit func([]*floorWrite) error, writes chan *floorWrite) {
	last := 0
	for first := range writes {
		group := []*floorWrite{first}
		want := min(last, floorEnough)
		linger := time.NewTimer(floorLinger)
	wait:
		for len(group) < want {
			select {
			case fw := <-writes:
				group = append(group, fw)
			case <-linger.C:
				break wait
			}
		}
		linger.Stop()
	drain:
		for len(group) < floorGroup {
			select {
			case fw := <-writes:
				group = append(group, fw)
			default:
				break drain
			}
		}
		last = len(group)
		err := commit(group)
		for _, fw := range group {
			fw.done <- err
		}
	}
}

func floorCommit(db *sql.DB, group []*floorWrite) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	args := make([]any, 0, 2*len(group))
	for _, fw := range group {
		args = append(args, now, string(fw.body))
	}
	q := `INSERT INTO calls (time, body) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(group)), ", ")
	if _, err := tx.Exec(q, args...); err != nil {
		return err
	}
	return tx.Commit()
}

// floorFileArg, as the e2e test binary's first argument, makes it the
// file floor of BenchmarkServeLoad (serveFloorFile).
const floorFileArg = "serve-floor-file"

// serveFloorFile is the load test's file floor: the floor (serveFloor)
// that appends each request's body to a file and syncs it (fdatasync)
// before it answers, the bodies of the requests waiting at once in one
// write and one sync, grouped as serveFloorSQLite groups them. No
// database: what any server that makes each call durable before its
// answer, by whatever means, pays on this machine at the least.
func serveFloorFile() {
	f, err := os.OpenFile("floor.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		floorFail(err)
	}
	var buf []byte
	floorServe(floorGroups(func(group []*floorWrite) error {
		buf = buf[:0]
		for _, fw := range group {
			buf = append(append(buf, fw.body...), '\n')
		}
		if _, err := f.Write(buf); err != nil {
			return err
		}
		return unix.Fdatasync(int(f.Fd()))
	}))
}

// serveFloorStore is the load test's store floor: the floor (serveFloor)
// that also records each call in warden's store as `warden serve` does
// (sqlite.Open in the working folder, or postgres.Open on the URL after
// the process's first argument; Store.WriteDecision: the
// session's row, the audit record with an ordered call id, and for a deny
// a history entry with the history's trim, in the store's group commit),
// with no token check, no decoding of the call and no decision: its
// session and command are found in the body, and its record is one of
// four made in advance for the load test's four commands. Against the
// durable floor (serveFloorSQLite) it measures warden's store, against
// warden serve on SQLite, warden's work besides the store.
func serveFloorStore() {
	var st warden.Store
	var err error
	if len(os.Args) > 2 {
		st, err = postgres.Open(context.Background(), os.Args[2])
	} else {
		st, err = sqlite.Open(context.Background(), filepath.Join(".warden", "warden.db"))
	}
	if err != nil {
		floorFail(err)
	}
	floorServe(func(body []byte) error {
		sid, cmd := bodyString(body, `"session":"`), bodyString(body, `"command":"`)
		if sid == "" || cmd == "" {
			return errors.New("no session or command in the body")
		}
		rec := floorRecord(sid, cmd)
		_, _, err := st.WriteDecision(context.Background(), sid, func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
			x.Calls++
			x.LastSeen = rec.Time
			dr := &warden.DecisionRecord{Audit: rec}
			if rec.Decision == warden.Deny {
				x.Violations++
				dr.History = &warden.HistoryEntry{Time: rec.Time, Session: sid, Action: "violation:" + string(rec.Code) + ":Bash", Result: "fail"}
				dr.HistoryKeep = 100
			}
			return dr, nil
		})
		return err
	})
}

// bodyString is the JSON string after key in body ("" when none), its
// escapes left as they are.
func bodyString(body []byte, key string) string {
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return ""
	}
	rest := body[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// floorRecord is the audit record warden serve writes for the load
// test's command cmd (e2e/testdata/hookbench.rego decides the same).
func floorRecord(sid, cmd string) warden.AuditRecord {
	r := warden.AuditRecord{Time: time.Now(), Session: sid, Host: "http", Tool: "Bash", Args: map[string]any{"command": cmd},
		Decision: warden.Allow, Code: warden.CodeAllowed, Mode: "enforce", Latency: 20 * time.Microsecond, CallID: gate.NewCallID(),
		Warnings: []string{}, Grants: []string{}}
	switch {
	case strings.HasPrefix(cmd, "rm "):
		r.Decision, r.Code, r.Rule, r.Matched = warden.Deny, warden.CodeRuleDeny, "no-rm", []string{"no-rm"}
		r.Reason = "Deleting files is blocked in this project. Move the file into the attic folder instead, or ask the user."
	case strings.HasPrefix(cmd, "git push"):
		r.Decision, r.Code, r.Rule, r.Matched = warden.Ask, warden.CodeRuleAsk, "ask-push", []string{"ask-push"}
		r.Reason = "Pushing needs the user's approval."
	case strings.HasPrefix(cmd, "git status"):
		r.Rule, r.Matched = "allow-git-status", []string{"allow-git-status", "warn-echo"}
		r.Warnings = []string{"echo is for debugging only; write results to a file instead."}
	default:
		r.Rule, r.Matched = "allow-git-read", []string{"allow-git-read"}
	}
	return r
}

// floorServe serves a floor on loopback, its address on stdout: it reads
// each request's body, gives it to record (when there is one) and answers
// a fixed decision; a record that fails answers 500 with its error.
func floorServe(record func(body []byte) error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		floorFail(err)
	}
	fmt.Printf("%shttp://%s\n", floorPrefix, ln.Addr())
	answer := []byte(`{"decision":{"decision":"allow","code":"allowed"}}` + "\n")
	floorFail(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if record == nil {
			io.Copy(io.Discard, r.Body)
		} else {
			body, err := io.ReadAll(r.Body)
			if err == nil {
				err = record(body)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})))
}

// floorFail ends a floor's process on err.
func floorFail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
