package session_test

// Tests with real processes: this test binary re-executes itself as a hook
// process (TestMain, WARDEN_SESSION_CHILD) so that many processes share one
// SQLite file, and so that a process can be killed with SIGKILL right after
// it acknowledged a write.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("WARDEN_SESSION_CHILD"); mode != "" {
		os.Exit(child(mode, os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// child runs one hook-like process against the project in dir.
func child(mode, dir string) int {
	ctx := context.Background()

	pol, err := policy.Load(filepath.Join(dir, "warden.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.DefaultFile))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	tr := session.New(eng, st)
	switch mode {
	case "decide":
		// Four calls: two in the process's own session, two in a session
		// every process shares.
		own := os.Getenv("WARDEN_CHILD_SESSION")
		for _, c := range []warden.ToolCall{bash(own, "builder", "git status"), bash("shared", "builder", "git status"),
			bash(own, "builder", "git log"), bash("shared", "builder", "git push origin main")} {
			res, err := tr.Decide(ctx, c, session.Options{})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			json.NewEncoder(os.Stdout).Encode(res.Decision)
		}
		return 0
	case "approve":
		// Queue an approval, answer it always, acknowledge, then hang
		// until killed.
		res, err := tr.Decide(ctx, bash("k", "builder", "git push origin main"), session.Options{})
		if err != nil || res.Approval == nil {
			fmt.Fprintln(os.Stderr, "decide:", err)
			return 1
		}
		a, err := session.Approve(ctx, st, res.Approval.ID, session.Answer{Scope: warden.ScopeAlways}, time.Now())
		if err != nil {
			fmt.Fprintln(os.Stderr, "approve:", err)
			return 1
		}
		g, err := st.AddGrant(ctx, warden.Grant{Tool: "Bash", Role: "builder", Subject: "command", Value: "make deploy", UsesLeft: 2})
		if err != nil {
			fmt.Fprintln(os.Stderr, "grant:", err)
			return 1
		}
		fmt.Printf("ACK %s %s %s\n", a.ID, a.Grants[0], g.ID)
		os.Stdout.Sync()
		time.Sleep(time.Hour)
		return 0
	}
	return 2
}

func childCmd(t *testing.T, mode, dir string, env ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$", dir)
	cmd.Env = append(append(os.Environ(), "WARDEN_SESSION_CHILD="+mode), env...)
	return cmd
}

func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(testPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFiftyProcesses: 50 hook processes decide at once against one SQLite
// file that none of them has created yet. No record is lost, no process
// fails (in particular not with "database is locked"), and the shared
// session's counters see every call.
func TestFiftyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if raceEnabled {
		// Each child is this test binary: under the race detector every
		// transaction is several times slower, and 50 processes queue for
		// the write lock longer than the store's busy timeout, which stays
		// below the hook's deadline on purpose. The test is about locking
		// between processes, not races inside one; the normal run has it.
		t.Skip("50 processes built with -race outwait the busy timeout; run without -race")
	}
	const n = 50
	dir := project(t)
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		cmd := childCmd(t, "decide", dir, fmt.Sprintf("WARDEN_CHILD_SESSION=p%d", i))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		}(i)
	}
	close(start)
	wg.Wait()
	for i := range outs {
		if errs[i] != nil || strings.Contains(outs[i], "locked") || strings.Contains(outs[i], "BUSY") {
			t.Errorf("process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	if t.Failed() {
		return
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Audit(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4*n {
		t.Errorf("%d audit records after %d processes x 4 calls", len(recs), n)
	}
	shared, err := st.Session(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if shared.Calls != 2*n || shared.Violations != 1 || shared.FirstTool != "Bash" {
		t.Errorf("shared session lost updates: %+v", shared)
	}
	warned := 0
	for _, r := range recs {
		if r.Session == "shared" && len(r.Warnings) > 0 {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d first-tool warnings in the shared session, want 1", warned)
	}
	// Every process asked for the same push in the shared session: one
	// approval, reused by all.
	as, err := st.Approvals(ctx, warden.ApprovalFilter{Session: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 {
		t.Errorf("%d approvals for one call in one session, want 1", len(as))
	}
	for i := 0; i < n; i++ {
		if s, err := st.Session(ctx, fmt.Sprintf("p%d", i)); err != nil || s.Calls != 2 {
			t.Errorf("session p%d: %+v %v", i, s, err)
		}
	}
}

// TestKillAfterAck: an approval answered "always", its grant, and a grant
// with a use count survive a SIGKILL of the process right after it
// acknowledged them.
func TestKillAfterAck(t *testing.T) {
	dir := project(t)
	cmd := childCmd(t, "approve", dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no acknowledgement: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed by SIGKILL: %v", werr)
	}
	var approval, grant, grant2 string
	if _, err := fmt.Sscanf(line, "ACK %s %s %s", &approval, &grant, &grant2); err != nil {
		t.Fatalf("ack %q: %v", line, err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := st.Approval(ctx, approval)
	if err != nil || a.Status != warden.ApprovalApproved || a.Scope != warden.ScopeAlways || len(a.Grants) != 1 || a.Grants[0] != grant {
		t.Fatalf("approval after kill -9: %+v %v", a, err)
	}
	gs, err := st.Grants(ctx, warden.GrantFilter{})
	if err != nil || len(gs) != 2 || gs[0].ID != grant || gs[1].ID != grant2 || gs[1].UsesLeft != 2 {
		t.Fatalf("grants after kill -9: %+v %v", gs, err)
	}
	// And the grant is honoured by a new process's decision.
	pol, _ := policy.Load(filepath.Join(dir, "warden.yaml"))
	eng, _ := engine.Compile(pol, workspace.Live())
	res, err := session.New(eng, st).Decide(ctx, bash("k2", "builder", "git push origin main"), session.Options{})
	if err != nil || res.Decision.Decision != warden.Allow || res.Decision.Rule != "grant:"+grant {
		t.Errorf("after kill -9, the grant is not honoured: %+v %v", res.Decision, err)
	}
}
