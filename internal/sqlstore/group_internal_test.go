package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// groupStore opens a SQLite store with group commit, as package sqlite
// does (which this package cannot import).
func groupStore(t *testing.T) *Store {
	t.Helper()
	return groupStoreBusy(t, 5000)
}

// groupStoreBusy is groupStore whose connections wait busyMS
// milliseconds for the file's write lock.
func groupStoreBusy(t *testing.T, busyMS int) *Store {
	t.Helper()
	return groupStoreWith(t, busyMS, true)
}

// groupStoreWith is groupStoreBusy whose audit inserts return their ids
// (RETURNING, as on PostgreSQL) unless consecutive.
func groupStoreWith(t *testing.T, busyMS int, consecutive bool) *Store {
	t.Helper()
	return groupStoreDialect(t, busyMS, Dialect{ConsecutiveIDs: consecutive, DataVersion: "SELECT data_version FROM pragma_data_version()"})
}

// connVersion is Dialect.ConnVersion as package sqlite has it, on the
// driver's own connection.
func connVersion(dc any) (int64, error) {
	v, err := dc.(interface {
		FileControlDataVersion(dbName string) (uint32, error)
	}).FileControlDataVersion("main")
	return int64(v), err
}

// groupStoreDialect is groupStoreWith with d's ConsecutiveIDs,
// DataVersion, ConnVersion and HeldLock.
func groupStoreDialect(t *testing.T, busyMS int, d Dialect) *Store {
	t.Helper()
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyMS))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "warden.db")+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), db, Dialect{Name: "sqlite", Rebind: func(q string) string { return q }, GroupCommit: true,
		ConsecutiveIDs: d.ConsecutiveIDs, DataVersion: d.DataVersion, ConnVersion: d.ConnVersion, HeldLock: d.HeldLock,
		LockMigrations: func(context.Context, *sql.Tx) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestCommitGroup runs one group of writes of every kind, as concurrent
// decisions make them, and checks that the group stores what the writes
// would have stored one after the other: a write that fails leaves
// nothing and the next write on its session does not see it; each record
// gets its own id; a call decided before, in the group or earlier, is a
// conflict; a grant is used no more often than it may be. The records' ids
// come from the insert's last id (package sqlite) or its RETURNING rows.
func TestCommitGroup(t *testing.T) {
	for _, consecutive := range []bool{true, false} {
		t.Run(fmt.Sprintf("consecutive=%v", consecutive), func(t *testing.T) {
			testCommitGroup(t, groupStoreWith(t, 5000, consecutive))
		})
	}
}

func testCommitGroup(t *testing.T, s *Store) {
	ctx := context.Background()
	if _, err := s.AppendAudit(ctx, warden.AuditRecord{Tool: "Bash", Decision: warden.Allow, CallID: "old"}); err != nil {
		t.Fatal(err)
	}
	g, err := s.AddGrant(ctx, warden.Grant{Tool: "Bash", Subject: warden.SubjectCommand, Value: "x", UsesLeft: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSession(ctx, "B", func(x *warden.Session, _ bool) error { x.Calls = 10; return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	type step struct {
		ctx     context.Context
		session string
		callID  string
		grant   bool
		fail    bool
		history bool
		noAudit bool
		// what the fn must be told
		created bool
		calls   int
	}
	steps := []step{
		{session: "A", callID: "c1", created: true, calls: 0},
		{session: "A", fail: true, calls: 1},
		{session: "A", callID: "c1", calls: 1},       // decided earlier in the group
		{session: "B", grant: true, calls: 10},       // uses the grant
		{session: "B", grant: true, calls: 11},       // the grant is used up
		{session: "A", history: true, calls: 1},      // trims the history to 2
		{ctx: cancelled, session: "D"},               // its caller left
		{session: "C", callID: "old", created: true}, // decided before the group
		{session: "A", history: true, calls: 2},
		{session: "A", history: true, calls: 3},
		{session: "A", noAudit: true, calls: 4},
		{session: "E", created: true},
	}
	batch := make([]*writeReq, len(steps))
	for i, st := range steps {
		c := st.ctx
		if c == nil {
			c = ctx
		}
		batch[i] = &writeReq{ctx: c, id: st.session, res: make(chan writeRes, 1), fn: func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
			if created != st.created || x.Calls != st.calls {
				t.Errorf("write %d: told created %v with %d calls, want %v and %d", i, created, x.Calls, st.created, st.calls)
			}
			x.Calls++
			x.LastSeen = s.Now()
			if st.fail {
				return nil, boom
			}
			if st.noAudit {
				return nil, nil
			}
			dr := &warden.DecisionRecord{Audit: warden.AuditRecord{Session: st.session, Tool: "Bash", Decision: warden.Allow,
				CallID: st.callID, Args: map[string]any{"n": i}}}
			if st.grant {
				dr.UseGrants = []string{g.ID}
			}
			if st.history {
				dr.History = &warden.HistoryEntry{Session: st.session, Action: fmt.Sprint("v", i), Result: "fail"}
				dr.HistoryKeep = 2
			}
			return dr, nil
		}}
	}
	s.commitGroup(batch)
	res := make([]writeRes, len(batch))
	for i, r := range batch {
		res[i] = <-r.res
	}
	var gu *warden.GrantUnusableError
	for i, want := range []error{nil, boom, warden.ErrConflict, nil, gu, nil, context.Canceled, warden.ErrConflict, nil, nil, nil, nil} {
		err := res[i].err
		switch {
		case want == nil && err != nil:
			t.Errorf("write %d: %v", i, err)
		case i == 4:
			if !errors.As(err, &gu) || gu.ID != g.ID {
				t.Errorf("write 4: %v, want the grant unusable", err)
			}
		case want != nil && !errors.Is(err, want):
			t.Errorf("write %d: %v, want %v", i, err, want)
		}
	}
	// Each record is the one its write made, under its own id.
	ids := map[int64]bool{}
	for i, r := range res {
		if r.err != nil || steps[i].noAudit {
			if r.rec.ID != 0 {
				t.Errorf("write %d: record %d for a write with none", i, r.rec.ID)
			}
			continue
		}
		if r.rec.ID == 0 || ids[r.rec.ID] {
			t.Errorf("write %d: record id %d", i, r.rec.ID)
			continue
		}
		ids[r.rec.ID] = true
		got, err := s.Audit(ctx, warden.AuditFilter{Session: steps[i].session})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range got {
			if g.ID == r.rec.ID {
				found = true
				if n, _ := g.Args["n"].(float64); int(n) != i || g.CallID != steps[i].callID {
					t.Errorf("write %d: record %d holds %v, call %q", i, g.ID, g.Args, g.CallID)
				}
			}
		}
		if !found {
			t.Errorf("write %d: record %d is not in the audit trail", i, r.rec.ID)
		}
	}
	for id, want := range map[string]int{"A": 5, "B": 11, "E": 1} {
		x, err := s.Session(ctx, id)
		if err != nil || x.Calls != want {
			t.Errorf("session %s: %d calls (%v), want %d", id, x.Calls, err, want)
		}
		if res[map[string]int{"A": 10, "B": 3, "E": 11}[id]].sess.Calls != want {
			t.Errorf("session %s as returned: %+v", id, res[10].sess)
		}
	}
	for _, id := range []string{"C", "D"} {
		if _, err := s.Session(ctx, id); !errors.Is(err, warden.ErrNotFound) {
			t.Errorf("session %s of a failed write: %v, want not found", id, err)
		}
	}
	if recs, _ := s.Audit(ctx, warden.AuditFilter{}); len(recs) != 1+6 {
		t.Errorf("%d audit records, want 7", len(recs))
	}
	st, err := s.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.History) != 2 || st.History[0].Action != "v8" || st.History[1].Action != "v9" {
		t.Errorf("live history %+v, want v8 and v9", st.History)
	}
	if gs, _ := s.Grants(ctx, warden.GrantFilter{All: true}); len(gs) != 1 || gs[0].UsesLeft != 0 {
		t.Errorf("grant after the group: %+v", gs)
	}
}

// TestCommitGroupChunks: a group larger than one statement's rows
// (stmtRows) writes every session, entry and record, each record under
// the id returned for it.
func TestCommitGroupChunks(t *testing.T) {
	ctx := context.Background()
	s := groupStore(t)
	n := 2*stmtRows + 3
	batch := make([]*writeReq, n)
	for i := range batch {
		sid := fmt.Sprint("s", i)
		batch[i] = &writeReq{ctx: ctx, id: sid, res: make(chan writeRes, 1), fn: func(x *warden.Session, created bool) (*warden.DecisionRecord, error) {
			x.Calls = i + 1
			return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Deny, Args: map[string]any{"n": i}},
				History: &warden.HistoryEntry{Session: sid, Action: fmt.Sprint("v", i)}, HistoryKeep: n}, nil
		}}
	}
	s.commitGroup(batch)
	for i, r := range batch {
		res := <-r.res
		if res.err != nil || res.sess.Calls != i+1 {
			t.Fatalf("write %d: %+v %v", i, res.sess, res.err)
		}
		recs, err := s.Audit(ctx, warden.AuditFilter{Session: fmt.Sprint("s", i)})
		if err != nil || len(recs) != 1 || recs[0].ID != res.rec.ID || recs[0].Args["n"] != float64(i) {
			t.Errorf("write %d: record %d, stored %+v (%v)", i, res.rec.ID, recs, err)
		}
		if x, err := s.Session(ctx, fmt.Sprint("s", i)); err != nil || x.Calls != i+1 {
			t.Errorf("session s%d: %+v %v", i, x, err)
		}
	}
	if st, err := s.State(ctx); err != nil || len(st.History) != n {
		t.Errorf("%d live history entries, want %d (%v)", len(st.History), n, err)
	}
}

// TestCommitGroupCallerLeft: a caller that stops waiting while its group
// runs (its deadline passes after its write was made) gets an error, and
// its decision is not committed: the hook has answered it as a failure
// and recorded that under the call's id. The group's other writes are
// committed. It failed before callerGone (the decision was committed).
func TestCommitGroupCallerLeft(t *testing.T) {
	ctx := context.Background()
	s := groupStore(t)
	leaving, leave := context.WithCancel(ctx)
	defer leave()
	write := func(c context.Context, sid, callID string, during func()) *writeReq {
		return &writeReq{ctx: c, id: sid, res: make(chan writeRes, 1), fn: func(x *warden.Session, _ bool) (*warden.DecisionRecord, error) {
			x.Calls++
			if during != nil {
				during()
			}
			return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: sid, Tool: "Bash", Decision: warden.Allow, CallID: callID}}, nil
		}}
	}
	batch := []*writeReq{write(ctx, "A", "a1", nil), write(leaving, "B", "b1", leave), write(ctx, "C", "c1", nil)}
	s.commitGroup(batch)
	for i, r := range batch {
		res := <-r.res
		if left := i == 1; left != (res.err != nil) {
			t.Errorf("write %d: error %v", i, res.err)
		}
	}
	recs, err := s.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.CallID)
	}
	if strings.Join(ids, ",") != "a1,c1" {
		t.Errorf("records %v: want a1 and c1, not the decision whose caller left", ids)
	}
	if _, err := s.Session(ctx, "B"); !errors.Is(err, warden.ErrNotFound) {
		t.Errorf("session B: %v, want it not stored", err)
	}
}

// TestGroupLinger: a writer that just finished a group of sessions A and
// B and finds only A's next write waiting waits for B's (which comes 20
// ms later) and takes both in one group; it waits no longer than its last
// group took when B's write does not come, not at all for a session
// alone, and not when it was idle for longer than its last group took.
func TestGroupLinger(t *testing.T) {
	ctx := context.Background()
	req := func(id string) *writeReq { return &writeReq{ctx: ctx, id: id} }
	var g groupWriter
	g.wake = make(chan struct{}, 1)
	g.quit = make(chan struct{})
	add := func(r *writeReq) {
		g.mu.Lock()
		g.queue = append(g.queue, r)
		g.mu.Unlock()
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
	ids := func(batch []*writeReq) string {
		var s []string
		for _, r := range batch {
			s = append(s, r.id)
		}
		return strings.Join(s, ",")
	}
	now := time.Now()
	l := linger{max: 10 * time.Second}
	l.done([]*writeReq{req("A"), req("B")}, now.Add(-10*time.Second), now)
	if n := l.expect(now); n != 2 {
		t.Fatalf("expect %d writes, want 2", n)
	}
	add(req("A"))
	go func() {
		time.Sleep(20 * time.Millisecond)
		add(req("B"))
	}()
	if batch, _ := g.gather(&l); ids(batch) != "A,B" {
		t.Errorf("group %q, want A,B: the writer did not wait for B", ids(batch))
	}

	// B does not come: the writer waits its last group's time, then goes.
	now = time.Now()
	l.done([]*writeReq{req("A"), req("B")}, now.Add(-50*time.Millisecond), now)
	add(req("A"))
	began := time.Now()
	if batch, _ := g.gather(&l); ids(batch) != "A" {
		t.Errorf("group %q, want A", ids(batch))
	}
	if el := time.Since(began); el < 50*time.Millisecond {
		t.Errorf("the writer went after %v, before its wait (50ms) was over", el)
	}

	// One session: no wait. Idle longer than the last group took: no
	// wait. As many writes waiting as make a group enough: no wait.
	var twenty, sixteen []*writeReq
	for i := range 20 {
		twenty = append(twenty, req(fmt.Sprint("s", i)))
	}
	for range lingerEnough {
		sixteen = append(sixteen, req("A"))
	}
	for _, tc := range []struct {
		name    string
		batch   []*writeReq
		ended   time.Duration
		waiting []*writeReq
	}{
		{"one session", []*writeReq{req("A")}, 0, []*writeReq{req("A")}},
		{"idle", []*writeReq{req("A"), req("B")}, 100 * time.Millisecond, []*writeReq{req("A")}},
		{"enough", twenty, 0, sixteen},
	} {
		now = time.Now()
		l := linger{max: 10 * time.Second}
		l.done(tc.batch, now.Add(-tc.ended-50*time.Millisecond), now.Add(-tc.ended))
		l.took = 10 * time.Second // a wait, if any, would be the test's time out
		if tc.ended > 0 {
			l.took = 50 * time.Millisecond
		}
		for _, r := range tc.waiting {
			add(r)
		}
		began := time.Now()
		if batch, _ := g.gather(&l); ids(batch) != ids(tc.waiting) {
			t.Errorf("%s: group %q, want %q", tc.name, ids(batch), ids(tc.waiting))
		}
		if el := time.Since(began); el > time.Second {
			t.Errorf("%s: the writer waited %v", tc.name, el)
		}
	}
}

// TestGroupKnowsSessions: a group writer that committed a session's
// change does not read it again for its next group, and sees at once what
// another connection committed meanwhile, of this store (a session
// updated outside the group) or of another process (a second pool on the
// file writing the row): the session a write is given is always the row
// as stored.
func TestGroupKnowsSessions(t *testing.T) {
	statement := Dialect{ConsecutiveIDs: true, DataVersion: "SELECT data_version FROM pragma_data_version()"}
	conn := statement
	conn.DataVersion, conn.ConnVersion, conn.HeldLock = "", connVersion, true
	t.Run("statement", func(t *testing.T) { testGroupKnowsSessions(t, groupStoreDialect(t, 5000, statement)) })
	t.Run("connection", func(t *testing.T) { testGroupKnowsSessions(t, groupStoreDialect(t, 5000, conn)) })
}

func testGroupKnowsSessions(t *testing.T, s *Store) {
	ctx := context.Background()
	var seen warden.Session
	write := func(role string) {
		t.Helper()
		_, _, err := s.WriteDecision(ctx, "A", func(x *warden.Session, _ bool) (*warden.DecisionRecord, error) {
			seen = *x
			x.Calls++
			x.LastSeen = time.Now() // with a monotonic reading and nanoseconds, as the tracker's clock gives
			if role != "" {
				x.Role = role
			}
			return &warden.DecisionRecord{Audit: warden.AuditRecord{Session: "A", Tool: "Bash", Decision: warden.Allow}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	stored := func() warden.Session {
		t.Helper()
		x, err := s.Session(ctx, "A")
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	write("first")
	want := stored()
	reads := s.sessionReads.Load()
	write("")
	if got := s.sessionReads.Load(); got != reads {
		t.Errorf("the group read its own session again (%d reads, %d before)", got, reads)
	}
	if seen != want {
		t.Errorf("the write was given %+v, the row holds %+v", seen, want)
	}

	// The file, for a pool of its own (another process).
	var seq int
	var name, file string
	if err := s.DB().QueryRowContext(ctx, `PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	exec := func(db *sql.DB, q string) func() error {
		return func() error { _, err := db.ExecContext(ctx, q); return err }
	}
	for _, c := range []struct {
		what   string
		change func() error
		shows  func(warden.Session) bool
		read   bool // the next group must read the session
	}{
		{"UpdateSession (through the group, known as it commits)", func() error {
			_, err := s.UpdateSession(ctx, "A", func(x *warden.Session, _ bool) error { x.Intent = "grouped"; return nil })
			return err
		}, func(x warden.Session) bool { return x.Intent == "grouped" }, false},
		{"another connection of the pool", exec(s.DB(), `UPDATE sessions SET role = 'changed' WHERE id = 'A'`),
			func(x warden.Session) bool { return x.Role == "changed" }, true},
		{"another process", exec(other, `UPDATE sessions SET role = 'elsewhere', calls = calls + 100 WHERE id = 'A'`),
			func(x warden.Session) bool { return x.Role == "elsewhere" }, true},
	} {
		if err := c.change(); err != nil {
			t.Fatal(err)
		}
		want = stored()
		reads = s.sessionReads.Load()
		write("")
		if seen != want || !c.shows(seen) {
			t.Errorf("after a change by %s the write was given %+v, the row holds %+v", c.what, seen, want)
		}
		if read := s.sessionReads.Load() != reads; read != c.read {
			t.Errorf("after a change by %s the group read the session: %v, want %v", c.what, read, c.read)
		}
	}
	if x := stored(); x.Calls != want.Calls+1 {
		t.Errorf("%d calls stored, want %d", x.Calls, want.Calls+1)
	}
}
