package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/workspace"
)

// Judge decides recorded calls against one policy, as warden would have
// decided them live: each session in order, with its role, its first
// tool, its grants-free history for the sequence rules, in a scratch store
// of its own (a real SQLite file in a temporary folder, removed by Close),
// so that the project's own store is never written. No approval is queued
// and no grant exists: an ask stays an ask.
type Judge struct {
	Policy *policy.Policy
	Engine *engine.Engine
	dir    string
	store  *sqlite.Store
	tr     *session.Tracker
}

// NewJudge loads the policy file (as the hooks do: a file mid-write is read
// again) and makes its scratch store.
func NewJudge(ctx context.Context, file string) (*Judge, error) {
	pol, err := policy.LoadStable(file)
	if err != nil {
		return nil, err
	}
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return NewJudgeEngine(ctx, eng)
}

// NewJudgeEngine makes a judge of a compiled policy, with its scratch
// store.
func NewJudgeEngine(ctx context.Context, eng *engine.Engine) (*Judge, error) {
	pol := eng.Policy()
	dir, err := os.MkdirTemp(scratchRoot(), "warden-replay-")
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "replay.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Judge{Policy: pol, Engine: eng, dir: dir, store: st, tr: session.New(eng, st)}, nil
}

// scratchRoot is where scratch stores go: /dev/shm where it is a folder (a
// memory file system, where a commit's sync costs nothing: the scratch
// store is thrown away), else the temporary folder.
func scratchRoot() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "warden-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return ""
}

// Close removes the scratch store.
func (j *Judge) Close() error {
	err := j.store.Close()
	os.RemoveAll(j.dir)
	return err
}

// Decide decides one recorded call in its session (role is the role of a
// call that recorded none). A call the session layer refuses (a session id
// warden does not accept, say) gets that refusal, as it would have live.
func (j *Judge) Decide(ctx context.Context, c Call, role string) warden.Decision {
	call := c.ToolCall()
	if call.Role == "" {
		call.Role = role
	}
	res, err := j.tr.Decide(ctx, call, session.Options{HostPrompts: true})
	if err != nil && res.Decision.Decision == "" {
		return warden.FailClosed(err)
	}
	return res.Decision
}

// workers is how many sessions DecideAll decides at once: the store's
// group writer commits their records together, which is where a replay
// spends its time.
const workers = 32

// DecideAll decides the calls, each session's in their order, several
// sessions at once (sessions share nothing in a replay: no grant, no
// approval, no halt). The decisions are in the calls' order.
func (j *Judge) DecideAll(ctx context.Context, calls []Call, role string) ([]warden.Decision, error) {
	out := make([]warden.Decision, len(calls))
	bySession := map[string][]int{}
	var order []string
	for i, c := range calls {
		if _, ok := bySession[c.Session]; !ok {
			order = append(order, c.Session)
		}
		bySession[c.Session] = append(bySession[c.Session], i)
	}
	work := make(chan []int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(order)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for idx := range work {
				for _, i := range idx {
					out[i] = j.Decide(ctx, calls[i], role)
				}
			}
		}()
	}
	for _, s := range order {
		if ctx.Err() != nil {
			break
		}
		work <- bySession[s]
	}
	close(work)
	wg.Wait()
	return out, ctx.Err()
}

// ToolCall is the call as warden decides it.
func (c Call) ToolCall() warden.ToolCall {
	return warden.ToolCall{Tool: c.Tool, Args: c.Args, Session: c.Session, Cwd: c.Cwd, Host: c.Host, Role: c.Role, Depth: c.Depth}
}

// Order sorts calls as they were made: by time, a transcript's own order
// kept for calls of one instant.
func Order(calls []Call) {
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].Time.Before(calls[j].Time) })
}

// FromAudit reads the calls of warden's own audit trail that f selects (tool calls only:
// records of session events and failures without a tool are left out),
// skipping the sessions in skip (those a host's transcript holds already).
// The records keep no folder: their calls are decided from project. Their
// arguments are as the trail keeps them, secrets redacted.
func FromAudit(ctx context.Context, log warden.AuditLog, project string, f warden.AuditFilter, skip map[string]bool) ([]Call, error) {
	recs, err := log.Audit(ctx, f)
	if err != nil {
		return nil, err
	}
	var out []Call
	for _, r := range recs {
		if r.Tool == "" || skip[r.Session] {
			continue
		}
		args := r.Args
		if args == nil {
			args = map[string]any{}
		}
		out = append(out, Call{Host: r.Host, Session: r.Session, ID: r.CallID, Tool: r.Tool, Args: args, Cwd: project,
			Time: r.Time, Role: r.Role, Depth: r.Depth, Source: fmt.Sprintf("audit:%d", r.ID)})
	}
	return out, nil
}
