// Package spawn starts the follow-up sessions that final-report plugins
// ask for (report.SpawnRequest, the seed's createSession) and keeps track
// of them.
//
// A Runner checks each request against the policy's `report.spawn:`
// limits (docs/policy.md), records it in the audit trail under the
// pseudo-tool "spawn_session" with the session that completed as its
// parent, and starts the host's headless mode (claude -p, codex exec,
// gemini -p, opencode run) in a process of its own with its output in
// .warden/spawn/ID.log. The process carries the spawn's id in $WARDEN_SPAWN;
// when the host's session-start hook sees it, Link records the new session
// as the parent's child (its depth one more, its role the requested one or
// the parent's), so the follow-up is governed like any other session.
// Wait records how each process ended. List reads it all back for `warden
// report` and `warden state`.
//
// Every refusal (an unknown host or role, a missing program, a limit) is a
// deny record in the audit trail and an error for the caller's log; none is
// dropped silently.
package spawn

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/report"
)

// Tool is the pseudo-tool name of the spawn audit records.
const Tool = "spawn_session"

// Env carries a follow-up session's spawn id to the host's hooks.
const Env = "WARDEN_SPAWN"

// Events of the spawn audit records (their "event" argument).
const (
	Refused = "refused" // the request was refused; nothing started
	Started = "started" // the host's process was started
	Linked  = "linked"  // the host's session started and was linked to its parent
	Exited  = "exited"  // the host's process ended
)

// The call ids of a spawn's records: one record of each kind per spawn.
const (
	startedID = "spawn:"
	linkedID  = "spawn-link:"
	exitedID  = "spawn-exit:"
)

// Store is what spawning needs of a warden store.
type Store interface {
	warden.SessionStore
	warden.AuditLog
}

// Headless is a host that can run one prompt with nobody at the terminal;
// every host package's Adapter is one.
type Headless interface {
	Headless(prompt string) []string
}

// Runner starts follow-up sessions for one policy and store. Its Spawn
// method is a report.Spawner. Safe for concurrent use.
type Runner struct {
	Policy *policy.Policy
	Store  Store
	// Logger receives what Wait records; nil is slog.Default().
	Logger *slog.Logger
	// LookPath finds a host's program; nil is exec.LookPath.
	LookPath func(string) (string, error)

	mu    sync.Mutex
	procs []*proc
}

// proc is one started follow-up.
type proc struct {
	id, parent, host, role string
	depth                  int
	cmd                    *exec.Cmd
	start                  time.Time
	done                   chan error
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

// Spawner returns r.Spawn as a report.Spawner.
func (r *Runner) Spawner() report.Spawner { return r.Spawn }

// Spawn checks a request, records it and starts the host's headless
// process; it does not wait for it (Wait does). A refusal is recorded in
// the audit trail and returned.
func (r *Runner) Spawn(ctx context.Context, req report.SpawnRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := r.plan(ctx, req)
	if err != nil {
		r.refuse(ctx, req, err)
		return err
	}
	log, err := r.logFile(p.id)
	if err != nil {
		err = fmt.Errorf("spawn %s: the log file: %w", p.id, err)
		r.refuse(ctx, req, err)
		return err
	}
	defer log.Close()
	p.cmd.Stdout, p.cmd.Stderr = log, log
	rel, _ := filepath.Rel(r.Policy.Dir, log.Name())
	args := map[string]any{"event": Started, "spawn_id": p.id, "plugin": req.Plugin, "prompt": req.Prompt,
		"prompt_sum": promptSum(req.Host, req.Prompt), "command": filepath.Base(p.cmd.Path), "cwd": p.cmd.Dir, "log": rel}
	rec := warden.AuditRecord{Session: req.Parent, Role: p.role, Host: p.host, Depth: p.depth, Tool: Tool,
		Args: warden.RedactArgsCut(args, 4000), Decision: warden.Allow, Code: warden.CodeAllowed, Mode: "enforce",
		CallID: startedID + p.id, Reason: fmt.Sprintf("follow-up session %s started on %s for plugin %q", p.id, p.host, req.Plugin)}
	// The record first: the host's session-start hook looks it up.
	if _, err := r.Store.AppendAudit(ctx, rec); err != nil {
		return fmt.Errorf("spawn %s: record it: %w", p.id, err)
	}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		err = fmt.Errorf("spawn %s: start %s: %w", p.id, p.cmd.Path, err)
		r.exited(ctx, p, -1, err)
		return err
	}
	p.done = make(chan error, 1)
	go func() { p.done <- p.cmd.Wait() }()
	r.procs = append(r.procs, p)
	return nil
}

// plan checks a request against the policy and builds its process.
func (r *Runner) plan(ctx context.Context, req report.SpawnRequest) (*proc, error) {
	if err := req.Check(); err != nil {
		return nil, warden.Errorf(warden.CodeBadInput, "%v", err)
	}
	rp := r.Policy.Report
	lim := policy.DefaultReportSpawn()
	if rp != nil && rp.Spawn != nil {
		lim = rp.Spawn
	}
	h, ok := host.Lookup(req.Host)
	if !ok {
		return nil, warden.Errorf(warden.CodeBadInput, "spawn: unknown host %q (want %s)", req.Host, host.Want())
	}
	hl, ok := h.(Headless)
	if !ok {
		return nil, warden.Errorf(warden.CodeBadInput, "spawn: host %s has no headless mode", req.Host)
	}
	if len(lim.Hosts) > 0 && !contains(lim.Hosts, req.Host) {
		return nil, warden.Errorf(warden.CodeRuleDeny, "spawn: host %s is not in report.spawn.hosts (%s)", req.Host, strings.Join(lim.Hosts, ", "))
	}
	if req.Parent == "" {
		return nil, warden.Errorf(warden.CodeBadInput, "spawn: the request names no parent session")
	}
	parent, err := r.Store.Session(ctx, req.Parent)
	if err != nil && !errors.Is(err, warden.ErrNotFound) {
		return nil, err
	}
	role := req.Role
	if role == "" {
		role = parent.Role
	} else if r.Policy.Roles[role] == nil {
		return nil, warden.Errorf(warden.CodeRoleUnknown, "spawn: role %q is not defined under roles", role)
	}
	depth := parent.Depth + 1
	if lim.MaxDepth == 0 {
		return nil, warden.Errorf(warden.CodeDepthExceeded, "spawn: follow-up sessions are off in this policy (report.spawn.max_depth is 0)")
	}
	if depth > lim.MaxDepth {
		return nil, warden.Errorf(warden.CodeDepthExceeded,
			"spawn: a follow-up of session %s would run at depth %d, over report.spawn.max_depth %d (a chain of follow-up sessions ends there)",
			req.Parent, depth, lim.MaxDepth)
	}
	recs, err := r.Store.Audit(ctx, warden.AuditFilter{Session: req.Parent, Tool: Tool})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, a := range recs {
		if a.Args["event"] == Started {
			n++
		}
	}
	if n >= lim.MaxPerSession {
		return nil, warden.Errorf(warden.CodeDepthExceeded, "spawn: session %s has started %d follow-up sessions, the limit of report.spawn.max_per_session", req.Parent, n)
	}
	if anc, err := r.loop(ctx, req); err != nil {
		return nil, err
	} else if anc != "" {
		return nil, warden.Errorf(warden.CodeDepthExceeded, "spawn: a loop: session %s was itself started on %s with this prompt; a follow-up does not start itself again", anc, req.Host)
	}
	dir := r.Policy.Dir
	if req.Cwd != "" {
		dir, err = inside(r.Policy.Dir, req.Cwd)
		if err != nil {
			return nil, warden.Errorf(warden.CodeOutsideWorkspace, "spawn: cwd %q: %v", req.Cwd, err)
		}
	}
	argv := hl.Headless(req.Prompt)
	look := r.LookPath
	if look == nil {
		look = exec.LookPath
	}
	path, err := look(argv[0])
	if err != nil {
		return nil, warden.Errorf(warden.CodeBadInput, "spawn: the %s program %q is not found in PATH", req.Host, argv[0])
	}
	id, err := newID()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = environ(os.Environ(), id)
	cmd.SysProcAttr = detach()
	return &proc{id: id, parent: req.Parent, host: req.Host, role: role, depth: depth, cmd: cmd}, nil
}

// loop returns the ancestor of the request's parent (the parent itself
// included) that was started on the same host with the same prompt, if
// any.
func (r *Runner) loop(ctx context.Context, req report.SpawnRequest) (string, error) {
	sum := promptSum(req.Host, req.Prompt)
	sid := req.Parent
	for range 64 {
		l, ok, err := linkOf(ctx, r.Store, sid)
		if err != nil || !ok {
			return "", err
		}
		if l.sum == sum {
			return sid, nil
		}
		sid = l.Parent
	}
	return "", nil
}

// refuse records a refused request.
func (r *Runner) refuse(ctx context.Context, req report.SpawnRequest, cause error) {
	code := warden.CodeBadInput
	var we *warden.Error
	if errors.As(cause, &we) {
		code = we.Code
	}
	args := map[string]any{"event": Refused, "plugin": req.Plugin, "prompt": req.Prompt, "role": req.Role, "cwd": req.Cwd}
	rec := warden.AuditRecord{Session: req.Parent, Host: req.Host, Tool: Tool, Args: warden.RedactArgsCut(args, 4000),
		Decision: warden.Deny, Code: code, Reason: warden.RedactString(cause.Error()), Mode: "enforce"}
	if _, err := r.Store.AppendAudit(ctx, rec); err != nil {
		r.logger().Warn("spawn: record a refusal", "parent", req.Parent, "error", err)
	}
}

// Invalid records the results of err that asked for follow-up sessions
// wrongly (report.ResultError: an on-complete output that is not a valid
// result) as refusals of session parent's follow-ups, so that `warden
// report spawns` shows them with the reason.
func (r *Runner) Invalid(ctx context.Context, parent string, err error) {
	for _, re := range resultErrors(err) {
		r.refuse(ctx, report.SpawnRequest{Plugin: re.Plugin, Parent: parent}, warden.Errorf(warden.CodeBadInput, "%v", re.Err))
	}
}

// resultErrors finds the report.ResultErrors in an error tree (errors.Join
// and %w wrappers).
func resultErrors(err error) []*report.ResultError {
	if err == nil {
		return nil
	}
	if re, ok := err.(*report.ResultError); ok {
		return []*report.ResultError{re}
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		var out []*report.ResultError
		for _, e := range u.Unwrap() {
			out = append(out, resultErrors(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		return resultErrors(u.Unwrap())
	}
	return nil
}

// logFile creates the log of spawn id under .warden/spawn/.
func (r *Runner) logFile(id string) (*os.File, error) {
	dir := filepath.Join(r.Policy.Dir, ".warden", "spawn")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
}

// Wait waits for every process Spawn started, each at most the policy's
// report.spawn.timeout from its start (then its process group is killed),
// and records how each ended. It returns the failures.
func (r *Runner) Wait(ctx context.Context) error {
	r.mu.Lock()
	procs := r.procs
	r.procs = nil
	r.mu.Unlock()
	limit := policy.DefaultSpawnTimeout
	if rp := r.Policy.Report; rp != nil && rp.Spawn != nil {
		limit = rp.Spawn.Timeout
	}
	var errs []error
	for _, p := range procs {
		timer := time.NewTimer(time.Until(p.start.Add(limit)))
		var err error
		select {
		case err = <-p.done:
		case <-timer.C:
			kill(p.cmd)
			<-p.done
			err = fmt.Errorf("killed after report.spawn.timeout %s", limit)
		}
		timer.Stop()
		code := 0
		if err != nil {
			code = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			errs = append(errs, fmt.Errorf("spawn %s (%s): %w", p.id, p.host, err))
		}
		r.exited(context.WithoutCancel(ctx), p, code, err)
	}
	return errors.Join(errs...)
}

// exited records how a follow-up's process ended.
func (r *Runner) exited(ctx context.Context, p *proc, code int, cause error) {
	args := map[string]any{"event": Exited, "spawn_id": p.id, "exit_code": code}
	reason := fmt.Sprintf("follow-up session %s exited with status %d", p.id, code)
	if !p.start.IsZero() {
		args["seconds"] = int(time.Since(p.start).Seconds())
	}
	if cause != nil {
		args["error"] = cause.Error()
		reason = fmt.Sprintf("follow-up session %s failed: %v", p.id, cause)
	}
	rec := warden.AuditRecord{Session: p.parent, Role: p.role, Host: p.host, Depth: p.depth, Tool: Tool, Args: warden.RedactArgsCut(args, 4000),
		Decision: warden.Allow, Code: warden.CodeAllowed, Mode: "enforce", CallID: exitedID + p.id, Reason: warden.RedactString(reason)}
	if _, err := r.Store.AppendAudit(ctx, rec); err != nil {
		r.logger().Warn("spawn: record the end", "spawn", p.id, "error", err)
	}
	if cause != nil {
		r.logger().Warn("spawn: follow-up session failed", "spawn", p.id, "host", p.host, "error", cause)
	}
}

// Link records that the host's session sid started as the follow-up of
// spawn id (from $WARDEN_SPAWN) and returns the parent and role to start
// it with. It reports false, linking nothing, for an id warden has no
// record of, a spawn of another host, or a spawn already linked (its
// process started a second session, for example from its shell: that one
// starts as any session does).
func Link(ctx context.Context, st warden.AuditLog, id, sid, hostName string) (parent, role string, ok bool, err error) {
	if id == "" || sid == "" {
		return "", "", false, nil
	}
	recs, err := st.Audit(ctx, warden.AuditFilter{CallID: startedID + id})
	if err != nil || len(recs) == 0 {
		return "", "", false, err
	}
	s := recs[0]
	if s.Host != hostName || s.Tool != Tool {
		return "", "", false, nil
	}
	rec := warden.AuditRecord{Session: sid, Role: s.Role, Host: hostName, Depth: s.Depth, Tool: Tool,
		Args: map[string]any{"event": Linked, "spawn_id": id, "parent": s.Session}, Decision: warden.Allow,
		Code: warden.CodeAllowed, Mode: "enforce", CallID: linkedID + id,
		Reason: fmt.Sprintf("session started as follow-up %s of session %s", id, s.Session)}
	if _, err := st.AppendAudit(ctx, rec); err != nil {
		if errors.Is(err, warden.ErrConflict) {
			return "", "", false, nil
		}
		return "", "", false, err
	}
	return s.Session, s.Role, true, nil
}

// link is what a linked session's records say of it.
type link struct {
	ID, Parent, sum string
}

// linkOf returns the spawn session sid was started by, if any.
func linkOf(ctx context.Context, st warden.AuditLog, sid string) (link, bool, error) {
	recs, err := st.Audit(ctx, warden.AuditFilter{Session: sid, Tool: Tool})
	if err != nil {
		return link{}, false, err
	}
	for _, a := range recs {
		if a.Args["event"] != Linked {
			continue
		}
		id, _ := strings.CutPrefix(a.CallID, linkedID)
		started, err := st.Audit(ctx, warden.AuditFilter{CallID: startedID + id})
		if err != nil || len(started) == 0 {
			return link{}, false, err
		}
		sum, _ := started[0].Args["prompt_sum"].(string)
		return link{ID: id, Parent: started[0].Session, sum: sum}, true, nil
	}
	return link{}, false, nil
}

// promptSum identifies a request's host and prompt, for the loop check.
func promptSum(hostName, prompt string) string {
	h := sha256.Sum256([]byte(hostName + "\x00" + prompt))
	return "sha256:" + hex.EncodeToString(h[:8])
}

func newID() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "sp" + hex.EncodeToString(b[:]), nil
}

// dropEnv are variables a follow-up must not inherit: the call id of the
// hook that started `warden report complete` (its calls would all be that
// one call), an older spawn id, and the markers by which a host knows it
// runs inside another (Claude Code refuses to start inside itself).
var dropEnv = []string{"WARDEN_HOOK_CALL_ID", Env, "WARDEN_HOOKD", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "GEMINI_CLI", "OPENCODE"}

// environ is the follow-up's environment: this process's, less dropEnv,
// with the spawn id, and with hookd off so that its hooks run `warden hook`
// in the host's environment, where they read the spawn id.
func environ(env []string, id string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(dropEnv, k) {
			out = append(out, kv)
		}
	}
	return append(out, Env+"="+id, "WARDEN_HOOKD=off")
}

// inside resolves rel inside root: relative, without "..", an existing
// folder.
func inside(root, rel string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", errors.New("must be relative to the project folder")
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", errors.New("must stay inside the project folder")
	}
	dir := filepath.Join(root, clean)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(rootReal, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", errors.New("leads outside the project folder")
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", errors.New("is not a folder")
	}
	return dir, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
