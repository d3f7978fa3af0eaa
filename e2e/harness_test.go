// Package e2e runs the real agent hosts (Claude Code, Codex, Gemini CLI,
// OpenCode, at the versions pinned in .ci/install-hosts.sh) against the
// scripted model server, governed by the warden binary built from this
// repository. Install the hosts with `bash .ci/install-hosts.sh`; without
// them the tests skip, unless CI is set, where a missing host fails.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/internal/scripted"
	"github.com/warden-run/warden/sqlite"
)

// wardenBin and wardenHookBin are the warden and warden-hook binaries,
// built once by TestMain into one folder (warden-hook finds warden there).
var wardenBin, wardenHookBin string

// repoRoot is the repository's folder (go test runs a package's tests in
// its folder; a source path from runtime.Caller is not a folder under
// -trimpath).
var repoRoot = func() string {
	r, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return r
}()

// goEnv is `go env NAME`.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func TestMain(m *testing.M) {
	// BenchmarkServeLoad's floors: this binary as a server that does
	// nothing, or that records each call and nothing else.
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case floorArg:
			serveFloor()
			return
		case floorSQLiteArg:
			serveFloorSQLite() // a SQLite row a request
			return
		case floorFileArg:
			serveFloorFile() // a file's append and sync a group
			return
		case floorStoreArg:
			serveFloorStore() // warden's store, no decision
			return
		}
	}
	dir, err := os.MkdirTemp("", "warden-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wardenBin = filepath.Join(dir, "warden")
	wardenHookBin = filepath.Join(dir, "warden-hook")
	build := exec.Command("go", "build", "-o", dir, "./cmd/warden", "./cmd/warden-hook", "./cmd/warden-sandbox")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: build warden: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hostSpec is one pinned host installation (see .ci/install-hosts.sh).
type hostSpec struct {
	name, version, probe string
}

var (
	claudeSpec   = hostSpec{"claude-code", "2.1.328", "node_modules/@anthropic-ai/claude-code-linux-x64/claude"}
	codexSpec    = hostSpec{"codex", "0.169.0", "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"}
	geminiSpec   = hostSpec{"gemini-cli", "0.61.0", "node_modules/@google/gemini-cli/bundle/gemini.js"}
	opencodeSpec = hostSpec{"opencode", "1.18.33", "node_modules/opencode-linux-x64/bin/opencode"}
)

func hostsRoot() string {
	if r := os.Getenv("WARDEN_E2E_HOSTS"); r != "" {
		return r
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "warden-e2e", "hosts")
}

// requireHost returns the host's binary or entry point. A missing host
// skips the test, or fails it when CI is set.
func requireHost(t *testing.T, h hostSpec) string {
	t.Helper()
	p := filepath.Join(hostsRoot(), h.name+"@"+h.version, h.probe)
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("%s@%s is not installed (%s missing); run `bash .ci/install-hosts.sh %s`", h.name, h.version, p, h.name)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// env is a test's sandbox: its own HOME and XDG folders, a project folder
// and the scripted model server.
type env struct {
	t       *testing.T
	root    string
	home    string
	project string
	model   *scripted.Server
	// vars is the environment every process gets (host, hooks).
	vars []string
}

func newEnv(t *testing.T, turns ...scripted.Turn) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	for _, d := range []string{e.home, e.project} {
		mustMkdir(t, d)
	}
	srv, err := scripted.Start(turns...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e.model = srv
	// A runtime folder of its own: the hookd its hooks start (the default
	// socket lives there) is this test's alone, so tests run in parallel
	// never share one, and it is stopped when the test ends. Short, as a
	// socket path has a length limit.
	run, err := os.MkdirTemp("", "wrt-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(run, 0o700)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		exec.CommandContext(ctx, wardenBin, "hookd", "stop", "--socket", filepath.Join(run, "warden", "hookd.sock")).Run()
		os.RemoveAll(run)
	})
	e.vars = []string{
		"XDG_RUNTIME_DIR=" + run,
		// Room for a loaded machine: a hook answers within 45 s, under
		// the hosts' own 60 s hook timeout, instead of 10 s.
		"WARDEN_HOOK_TIMEOUT=45s",
		// The sandbox's project folder is new: Gemini CLI trusts it only
		// so (warden init gemini fails in a folder it does not trust).
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"HOME=" + e.home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(e.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(e.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(e.home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(e.home, ".local", "state"),
	}
	return e
}

// useHookd makes the hooks of this sandbox run through warden-hook with a
// hookd of their own (its socket in a private folder), stopped at the end.
// It returns the socket.
func (e *env) useHookd() string {
	e.t.Helper()
	dir, err := os.MkdirTemp("", "whd-") // short: socket paths are limited
	if err != nil {
		e.t.Fatal(err)
	}
	sock := filepath.Join(dir, "hookd.sock")
	e.vars = append(e.vars, "WARDEN_HOOKD_SOCKET="+sock)
	e.t.Cleanup(func() {
		e.warden("hookd", "stop", "--socket", sock)
		os.RemoveAll(dir)
	})
	return sock
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// write writes content to rel (in the project unless absolute). It uses
// exectest.WriteFile: some of what it writes is a script a host then runs.
func (e *env) write(rel, content string) string {
	e.t.Helper()
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.project, rel)
	}
	mustMkdir(e.t, filepath.Dir(p))
	if err := exectest.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) writeJSON(path string, v any) {
	e.t.Helper()
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		e.t.Fatal(err)
	}
	e.write(path, string(js)+"\n")
}

func (e *env) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(e.project, rel))
	return err == nil
}

// warden runs the warden binary in the project with the sandbox's env.
func (e *env) warden(args ...string) (string, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, wardenBin, args...)
	cmd.Dir = e.project
	cmd.Env = e.vars
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// store opens the project's default store; it is closed when the test ends.
func (e *env) store() warden.Store {
	e.t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(e.project, ".warden", "warden.db"))
	if err != nil {
		e.t.Fatalf("open the project's store: %v", err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

// audit returns the audit trail of the project's default store.
func (e *env) audit() []warden.AuditRecord {
	e.t.Helper()
	recs, err := e.store().Audit(context.Background(), warden.AuditFilter{})
	if err != nil {
		e.t.Fatalf("read the audit trail: %v", err)
	}
	return recs
}

// roleAudit returns the audit trail as "TOOL DECISION CODE ROLE DEPTH"
// lines, for the tests of roles and subagents.
func (e *env) roleAudit() []string {
	e.t.Helper()
	var out []string
	for _, a := range e.audit() {
		out = append(out, strings.Join([]string{a.Tool, string(a.Decision), string(a.Code), a.Role, string(rune('0' + a.Depth))}, " "))
	}
	return out
}

// result is what a host run left.
type result struct {
	stdout, stderr string
	err            error
	elapsed        time.Duration
}

// run runs a host under a timeout in its own process group and kills the
// whole group at the end (hosts retry forever when the model is down, and
// leave children behind).
func (e *env) run(timeout time.Duration, extraEnv []string, name string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = e.project
	cmd.Env = append(append([]string(nil), e.vars...), extraEnv...)
	cmd.Stdin = nil // /dev/null
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	r := result{stdout: stdout.String(), stderr: stderr.String(), err: err, elapsed: time.Since(start)}
	if ctx.Err() != nil {
		r.err = fmt.Errorf("timed out after %s: %w", timeout, ctx.Err())
	}
	var cpu time.Duration // the host's CPU and its waited-for children's
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	e.t.Logf("%s ran %.1fs (cpu %.1fs), err=%v", filepath.Base(name), r.elapsed.Seconds(), cpu.Seconds(), r.err)
	return r
}

// dump logs what a run and the model saw, for a failing test.
// initHost wires warden into the host's settings in the project (warden
// init HOST), or fails the test.
func (e *env) initHost(host string) {
	e.t.Helper()
	if out, err := e.warden("init", host, "--bin", wardenBin); err != nil {
		e.t.Fatalf("warden init: %v\n%s", err, out)
	}
}

// played fails the test, showing the run, unless the host's run ended
// well with every scripted turn played; it returns the function that
// shows the run and fails, for the test's own checks.
func (e *env) played(host string, r result) func(format string, args ...any) {
	e.t.Helper()
	fail := func(format string, args ...any) {
		e.t.Helper()
		e.dump(r)
		e.t.Fatalf(format, args...)
	}
	if r.err != nil || len(e.model.Unplayed()) > 0 {
		fail("%s: %v; unplayed turns %v", host, r.err, e.model.Unplayed())
	}
	return fail
}

func (e *env) dump(r result) {
	e.t.Helper()
	e.t.Logf("stdout:\n%s", tail(r.stdout, 6000))
	e.t.Logf("stderr:\n%s", tail(r.stderr, 6000))
	for i, q := range e.model.Requests() {
		e.t.Logf("request %d %s %s turn=%q tools=%v results=%d", i, q.Protocol, q.Path, q.Turn, q.HasTools(), len(q.ToolResults()))
		for _, tr := range q.ToolResults() {
			e.t.Logf("  tool result %s: %s", tr.ID, tail(tr.Text, 600))
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// lastResults returns the tool results of the request that carried the
// most of them (hosts resend the whole conversation each turn).
func (e *env) lastResults() []scripted.ToolResult {
	var best []scripted.ToolResult
	for _, q := range e.model.Requests() {
		if r := q.ToolResults(); len(r) >= len(best) {
			best = r
		}
	}
	return best
}

// modelSaw reports whether any request to the model contained sub.
func (e *env) modelSaw(sub string) bool { return len(e.model.Find(sub)) > 0 }

func hasAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
