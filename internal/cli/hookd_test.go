package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/sqlite"
)

// startHookd runs a hookd in this process on a socket of its own and
// stops it when the test ends.
func startHookd(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hookd-") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s", "hookd.sock")
	srv := newHookd(sock, time.Minute, log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hookd: %v", err)
		}
		os.RemoveAll(dir)
	})
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if _, err := hookd.Ask(sock, &hookd.Request{Op: hookd.OpPing}, time.Second); err == nil {
			return sock
		}
		if time.Since(start) > time.Minute { // room for a loaded machine
			t.Fatal("hookd did not come up")
		}
	}
}

// viaClient runs warden-hook's client on an event. bin is the warden
// binary for the fallback ("" must not be needed: a missing one fails).
func viaClient(t *testing.T, sock, stdin string, args ...string) (int, map[string]any, string) {
	t.Helper()
	return viaClientGrace(t, sock, stdin, 0, args...)
}

// viaClientGrace is viaClient with the client's Grace (0: its default).
func viaClientGrace(t *testing.T, sock, stdin string, grace time.Duration, args ...string) (int, map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &hookd.Client{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Socket: sock,
		Bin: filepath.Join(t.TempDir(), "no-warden-here"), Grace: grace}
	code := c.Run(args)
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("warden-hook %v answered no JSON (exit %d): %v\nstdout: %s\nstderr: %s", args, code, err, out.String(), errb.String())
	}
	return code, m, errb.String()
}

// TestHookdAnswersLikeHook: through hookd, every answer is the one
// `warden hook` gives in its own process.
func TestHookdAnswersLikeHook(t *testing.T) {
	t.Parallel()
	sock := startHookd(t)
	// The same events on two copies of a project: one through `warden
	// hook`, one through hookd.
	direct, served := project(t, hookTestPolicy), project(t, hookTestPolicy)
	gemini := func(cwd, cmd string) string {
		js, _ := json.Marshal(map[string]any{"session_id": "g1", "cwd": cwd, "hook_event_name": "BeforeTool",
			"tool_name": "run_shell_command", "tool_input": map[string]any{"command": cmd}})
		return string(js)
	}
	start := func(cwd string) string {
		return claudeEvent(t, map[string]any{"session_id": "s9", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
	}
	pre := func(cmd string) func(string) string { return func(cwd string) string { return claudePre(cwd, cmd) } }
	for _, tc := range []struct {
		name  string
		stdin func(cwd string) string
		args  []string
	}{
		{"allow", pre("ls -la"), []string{"claude"}},
		{"deny", pre("ls && rm -rf x"), []string{"claude"}},
		{"ask", pre("git push origin main"), []string{"claude"}},
		{"start", start, []string{"claude"}},
		{"resume", start, []string{"claude"}}, // the same session again
		{"gemini-deny", func(cwd string) string { return gemini(cwd, "rm -rf /") }, []string{"gemini"}},
		{"codex-ask", pre("git push origin main"), []string{"codex"}},
		{"stateless", pre("rm x"), []string{"claude", "--stateless"}},
		{"unknown-host", pre("ls"), []string{"cursor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code1, m1, _ := runHookCmd(t, tc.stdin(direct), tc.args...)
			code2, m2, _ := viaClient(t, sock, tc.stdin(served), tc.args...)
			// Approval ids are random.
			ids := regexp.MustCompile(`a-[0-9a-f]{10}`)
			a, _ := json.Marshal(m1)
			b, _ := json.Marshal(m2)
			a, b = ids.ReplaceAll(a, []byte("a-ID")), ids.ReplaceAll(b, []byte("a-ID"))
			if code1 != code2 || !bytes.Equal(a, b) {
				t.Errorf("warden hook: exit %d %s\nwarden-hook: exit %d %s", code1, a, code2, b)
			}
		})
	}
	// hookd wrote its project's store: one audit record per decision.
	st, err := sqlite.Open(context.Background(), filepath.Join(filepath.Dir(filepath.Dir(served)), ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Audit(context.Background(), warden.AuditFilter{Session: "s1"})
	if err != nil || len(recs) != 4 {
		t.Errorf("audit of session s1: %d records (%v), want 4", len(recs), err)
	}
}

// TestHookdReloadsPolicy: hookd keeps the compiled policy, and compiles it
// again as soon as the file changes; a broken policy denies.
func TestHookdReloadsPolicy(t *testing.T) {
	t.Parallel()
	sock := startHookd(t)
	cwd := project(t, hookTestPolicy)
	file := filepath.Join(filepath.Dir(filepath.Dir(cwd)), "warden.yaml")
	decide := func() (string, string) {
		_, m, _ := viaClient(t, sock, claudePre(cwd, "ls -la"), "claude")
		return permission(m)
	}
	if d, _ := decide(); d != "allow" {
		t.Fatalf("ls: %s, want allow", d)
	}
	// Same length, so that only the content differs.
	if err := os.WriteFile(file, []byte(strings.Replace(hookTestPolicy, "id: allow-ls\n    effect: allow", "id: allow-ls\n    effect: deny ", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, _ := decide(); d != "deny" {
		t.Errorf("ls after the policy denies it: %s", d)
	}
	os.WriteFile(file, []byte("version: 1\nrules: [\n"), 0o644)
	if d, r := decide(); d != "deny" || !strings.Contains(r, "warden.yaml") {
		t.Errorf("broken policy: %s %q, want a deny naming the file", d, r)
	}
	os.WriteFile(file, []byte(hookTestPolicy), 0o644)
	if d, _ := decide(); d != "allow" {
		t.Errorf("fixed policy: %s, want allow", d)
	}
}

// TestHookdReportGate: through hookd, the report gate answers as `warden
// hook` does (the instructions at session start, the block with the retry
// text at the end of a turn, the end of the turn once the report is
// complete), and a plugin file edited on disk is loaded again.
func TestHookdReportGate(t *testing.T) {
	t.Parallel()
	sock := startHookd(t)
	reportProject := func() (cwd, plugin string) {
		cwd = project(t, hookTestPolicy+"report:\n  plugins: [report/support.yaml]\n")
		root := filepath.Dir(filepath.Dir(cwd))
		if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "reportgate", "testdata", "report"), root).CombinedOutput(); err != nil {
			t.Fatalf("copy the plugin: %v %s", err, out)
		}
		return cwd, filepath.Join(root, "report", "support.yaml")
	}
	direct, _ := reportProject()
	served, plugin := reportProject()
	nonceRe := regexp.MustCompile(`warden-([0-9a-f]{8})-`)
	event := func(cwd, sid, name string, fields map[string]any) string {
		m := map[string]any{"session_id": sid, "cwd": cwd, "hook_event_name": name}
		for k, v := range fields {
			m[k] = v
		}
		return claudeEvent(t, m)
	}
	// both runs one event on both projects and compares the answers, the
	// nonces aside; it returns the answer through hookd and the nonces.
	nonces := map[string]string{}
	both := func(sid, name string, fields func(nonce string) map[string]any, host string) map[string]any {
		t.Helper()
		code1, m1, log1 := runHookCmd(t, event(direct, sid, name, fields(nonces[direct+sid])), host)
		code2, m2, log2 := viaClient(t, sock, event(served, sid, name, fields(nonces[served+sid])), host)
		a, _ := json.Marshal(m1)
		b, _ := json.Marshal(m2)
		for cwd, data := range map[string][]byte{direct: a, served: b} {
			if n := nonceRe.FindSubmatch(data); n != nil && nonces[cwd+sid] == "" {
				nonces[cwd+sid] = string(n[1])
			}
		}
		if code1 != code2 || nonceRe.ReplaceAllString(string(a), "N") != nonceRe.ReplaceAllString(string(b), "N") {
			t.Fatalf("%s %s:\nwarden hook: exit %d %s\n%s\nwarden-hook: exit %d %s\n%s", host, name, code1, a, log1, code2, b, log2)
		}
		return m2
	}
	none := func(string) map[string]any { return map[string]any{"source": "startup"} }
	for _, host := range []string{"claude", "gemini"} {
		sid := "r-" + host
		stop, field := "Stop", "last_assistant_message"
		if host == "gemini" {
			stop, field = "AfterAgent", "prompt_response"
		}
		m := both(sid, "SessionStart", none, host)
		if nonces[served+sid] == "" || !strings.Contains(fmt.Sprint(m), `plugin="support"`) {
			t.Fatalf("%s session start through hookd: %v, want the report instructions", host, m)
		}
		m = both(sid, stop, func(n string) map[string]any {
			return map[string]any{field: "Done.\n<warden-" + n + "-FINAL>\nfixed\n</warden-" + n + "-FINAL>\n"}
		}, host)
		if m["decision"] != "block" || !strings.Contains(fmt.Sprint(m["reason"]), "support") {
			t.Fatalf("%s: a report without the metadata through hookd: %v, want a block naming the plugin", host, m)
		}
		m = both(sid, stop, func(n string) map[string]any {
			return map[string]any{field: "<warden-" + n + `-META plugin="support">{"language": "de", "solved": true}</warden-` + n + "-META>"}
		}, host)
		if m["decision"] != nil {
			t.Fatalf("%s: the metadata after the retry through hookd: %v, want the turn to end", host, m)
		}
	}

	// The plugin's instruction changes on disk: the next session hears it.
	data, err := os.ReadFile(plugin)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "whether the request was solved", "whether the ticket was closed", 2)
	if edited == string(data) {
		t.Fatal("the test plugin no longer says \"whether the request was solved\"")
	}
	if err := os.WriteFile(plugin, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, m, _ := viaClient(t, sock, event(served, "r-after-edit", "SessionStart", none("")), "claude")
	if !strings.Contains(fmt.Sprint(m), "whether the ticket was closed") {
		t.Errorf("session start after the plugin file changed: %v, want the new instruction", m)
	}
}

// TestHookdReloadsIntents: the intents file is compiled into the policy;
// hookd notices when it changes.
func TestHookdReloadsIntents(t *testing.T) {
	sock := startHookd(t)
	cwd := project(t, `version: 1
default: allow
intents:
  file: intents.yaml
  require: [write]
  out_of_scope: deny
`)
	root := filepath.Dir(filepath.Dir(cwd))
	// The session works on intent INT-1.
	st, err := sqlite.Open(context.Background(), filepath.Join(root, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.UpdateSession(context.Background(), "i1", func(s *warden.Session, created bool) error {
		s.IntentID, s.Status = "INT-1", warden.SessionActive
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	write := func(scope string) {
		if err := os.WriteFile(filepath.Join(root, "intents.yaml"), []byte("active_intents:\n  - id: INT-1\n    name: docs\n    status: IN_PROGRESS\n    owned_scope: [\""+scope+"\"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit := func() string {
		js, _ := json.Marshal(map[string]any{"session_id": "i1", "cwd": root, "hook_event_name": "PreToolUse",
			"tool_name": "Write", "tool_input": map[string]any{"file_path": filepath.Join(root, "docs", "a.md"), "content": "x"}})
		_, m, _ := viaClient(t, sock, string(js), "claude")
		d, _ := permission(m)
		return d
	}
	write("docs/**")
	if d := edit(); d != "allow" {
		t.Errorf("write in the intent's scope: %s, want allow", d)
	}
	write("src/**")
	if d := edit(); d != "deny" {
		t.Errorf("write after the intent's scope moved to src/: %s, want deny", d)
	}
}

// TestHookdReopensRemovedStore: a store removed while hookd holds it open
// is opened again, so that no audit record goes to a deleted file.
func TestHookdReopensRemovedStore(t *testing.T) {
	t.Parallel()
	sock := startHookd(t)
	cwd := project(t, hookTestPolicy)
	root := filepath.Dir(filepath.Dir(cwd))
	viaClient(t, sock, claudePre(cwd, "ls"), "claude")
	if err := os.RemoveAll(filepath.Join(root, ".warden")); err != nil {
		t.Fatal(err)
	}
	viaClient(t, sock, claudePre(cwd, "ls -l"), "claude")
	st, err := sqlite.Open(context.Background(), filepath.Join(root, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, _ := st.Audit(context.Background(), warden.AuditFilter{})
	if len(recs) != 1 || recs[0].Args["command"] != "ls -l" {
		t.Errorf("audit after the store was removed: %+v, want the one call made since", recs)
	}
}

// TestHookdClientFailsClosed: when hookd takes a call and never answers,
// and when warden cannot be run at all, the answer is a deny (exit 2).
func TestHookdClientFailsClosed(t *testing.T) {
	cwd := project(t, hookTestPolicy)
	dir, _ := os.MkdirTemp("", "hookd-")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "hookd.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // a hookd that hangs
		}
	}()
	code, m, stderr := viaClientGrace(t, sock, claudePre(cwd, "ls"), 100*time.Millisecond, "claude", "--timeout", "200ms")
	if d, r := permission(m); code != 2 || d != "deny" || !strings.Contains(r, "no answer in time") {
		t.Errorf("hung hookd: exit %d %s %q (%s)", code, d, r, stderr)
	}
	// No hookd and no warden binary: nothing can decide, so deny.
	code, m, _ = viaClient(t, filepath.Join(dir, "none.sock"), claudePre(cwd, "ls"), "claude")
	if d, _ := permission(m); code != 2 || d != "deny" {
		t.Errorf("no hookd, no warden: exit %d %s", code, d)
	}
}

// TestHookdClientRefusesUnsafeFolder: a socket in a folder other users can
// write to could be anyone's: the client does not ask it.
func TestHookdClientRefusesUnsafeFolder(t *testing.T) {
	sock := startHookd(t)
	cwd := project(t, hookTestPolicy)
	if _, m, _ := viaClient(t, sock, claudePre(cwd, "ls"), "claude"); func() string { d, _ := permission(m); return d }() != "allow" {
		t.Fatal("hookd does not allow ls")
	}
	dir := filepath.Dir(sock)
	os.Chmod(dir, 0o777)
	defer os.Chmod(dir, 0o700)
	// The answer would be allow from hookd; the client must not ask it
	// (and, with no warden binary to run itself, denies).
	code, m, _ := viaClient(t, sock, claudePre(cwd, "ls"), "claude")
	if d, _ := permission(m); code != 2 || d != "deny" {
		t.Errorf("socket in a 0777 folder: exit %d %s, want the client's own deny", code, d)
	}
}

// TestHookdRefusesOtherVersions: a request of another protocol version is
// refused, not guessed at.
func TestHookdRefusesOtherVersions(t *testing.T) {
	sock := startHookd(t)
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(`{"v":99,"op":"hook","args":["claude"],"dir":"/"}`))
	c.(*net.UnixConn).CloseWrite()
	var resp hookd.Response
	if err := json.NewDecoder(c).Decode(&resp); err != nil || !strings.Contains(resp.Refused, "version 99") {
		t.Errorf("answer %+v (%v), want a refusal naming version 99", resp, err)
	}
}

// TestHookdRefusesAnotherHome: ~ in a policy is the caller's home, so a
// hookd started under another HOME leaves the call to the client.
func TestHookdRefusesAnotherHome(t *testing.T) {
	sock := startHookd(t)
	req := &hookd.Request{Op: hookd.OpHook, Args: []string{"claude"}, Dir: "/", Home: "/somewhere/else", Stdin: []byte(claudePre("/", "ls"))}
	if resp, err := hookd.Ask(sock, req, 5*time.Second); err == nil || !strings.Contains(resp.Refused, "another HOME") {
		t.Errorf("answer %+v (%v), want a refusal", resp, err)
	}
}

func TestHookdStop(t *testing.T) {
	sock := startHookd(t)
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"hookd", "stop", "--socket", sock}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "stopped") {
		t.Fatalf("hookd stop: %d %s %s", code, out.String(), errb.String())
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); os.IsNotExist(err) {
			break
		}
		if time.Since(start) > time.Minute { // room for a loaded machine
			t.Fatal("the socket is still there 5 s after stop")
		}
	}
	out.Reset()
	if code := Run(context.Background(), []string{"hookd", "status", "--socket", sock}, nil, &out, &errb); code == 0 {
		t.Errorf("status after stop: exit 0: %s", out.String())
	}
}

// BenchmarkHookdCall is hookd's own share of a warden-hook call: one
// request on the socket, decided with the store (no process start).
func BenchmarkHookdCall(b *testing.B) {
	sock := startHookd(b)
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(hookTestPolicy), 0o644)
	for _, bc := range []struct{ name, cmd string }{{"allow", "ls -la"}, {"deny", "ls && rm -rf x"}} {
		b.Run(bc.name, func(b *testing.B) {
			req := &hookd.Request{Op: hookd.OpHook, Args: []string{"claude"}, Dir: dir, Home: os.Getenv("HOME"), Stdin: []byte(claudePre(dir, bc.cmd))}
			for b.Loop() {
				resp, err := hookd.Ask(sock, req, 10*time.Second)
				if err != nil || !bytes.Contains(resp.Stdout, []byte("permissionDecision")) {
					b.Fatalf("%v %s", err, resp.Stdout)
				}
			}
		})
	}
}

// TestHookdLargeInput: a large event (a 5 MB file write) goes through
// hookd whole and is decided like any other.
func TestHookdLargeInput(t *testing.T) {
	t.Parallel()
	sock := startHookd(t)
	cwd := project(t, hookTestPolicy+`  - id: allow-write
    effect: allow
    tool: write
    path: ["**"]
`)
	js, _ := json.Marshal(map[string]any{"session_id": "big", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Write",
		"tool_input": map[string]any{"file_path": filepath.Join(cwd, "big.txt"), "content": strings.Repeat("x", 5<<20)}})
	// The subject is the size, not the speed: a loaded machine (the race
	// detector, every package testing at once) gets a long deadline.
	code, m, stderr := viaClient(t, sock, string(js), "claude", "--timeout", "2m")
	if d, r := permission(m); code != 0 || d != "allow" {
		t.Errorf("5 MB write: exit %d %s %q (%s)", code, d, r, stderr)
	}
}

// TestHookdSeesWorkspaceChange: hookd keeps its view of the workspace
// across calls and checks it before each: a folder made to look like a
// repository (HEAD, objects/, refs/, whose configuration git would run)
// after git status was allowed there is seen at the next call.
func TestHookdSeesWorkspaceChange(t *testing.T) {
	sock := startHookd(t)
	cwd := project(t, hookTestPolicy+`  - id: allow-status
    effect: allow
    tool: shell
    command: ["git status"]
`)
	// Older than the file system's clock step, so that hookd's view
	// remembers what it reads of the folder.
	time.Sleep(300 * time.Millisecond)
	decide := func() string {
		_, m, _ := viaClient(t, sock, claudePre(cwd, "git status"), "claude")
		d, _ := permission(m)
		return d
	}
	if d := decide(); d != "allow" {
		t.Fatalf("git status in a plain folder: %s, want allow", d)
	}
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(cwd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cwd, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := decide(); d == "allow" {
		t.Errorf("git status in a folder that became a repository's: %s", d)
	}
}
