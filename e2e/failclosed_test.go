package e2e

// Failure modes of the hook path, driven through the real warden-hook and
// warden binaries with the hosts' real hook JSON: each failure must end in
// an answer the host reads as "block" (exit code 2, or exit code 0 with a
// deny in the host's JSON; OpenCode's plugin reads only the JSON), never
// in an exit code or an output the host reads as "no objection". Claude
// Code, Codex and Gemini CLI go on with a call whose hook exits with
// another code, prints text that is not JSON, or times out.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/exectest"
)

const fcPolicy = `version: 1
rules:
  - id: no-rm
    effect: deny
    command: "rm *"
    message: no rm
    suggestion: remove nothing
  - id: ok-ls
    effect: allow
    command: "ls*"
`

// fcEvent is a host's real PreToolUse-like event for a shell command in
// dir (see the adapters' golden files).
func fcEvent(host, dir, command string) string {
	var v map[string]any
	switch host {
	case "claude", "codex":
		v = map[string]any{"session_id": "s1", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_1", "permission_mode": "default"}
	case "gemini":
		v = map[string]any{"session_id": "s1", "cwd": dir, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
			"tool_input": map[string]any{"command": command}, "timestamp": "2026-01-01T00:00:00Z"}
	case "opencode":
		v = map[string]any{"event": "tool.execute.before", "directory": dir, "session_id": "s1", "tool": "bash",
			"call_id": "c1", "args": map[string]any{"command": command}}
	}
	js, _ := json.Marshal(v)
	return string(js)
}

// fcProject is a project with fcPolicy, and the environment of a hook in
// it: its own HOME and hookd socket (hookd is stopped at the end).
type fcProject struct {
	dir  string
	sock string
	env  []string
}

func newFCProject(t *testing.T) *fcProject {
	t.Helper()
	root := t.TempDir()
	p := &fcProject{dir: filepath.Join(root, "project")}
	mustMkdir(t, p.dir)
	if err := os.WriteFile(filepath.Join(p.dir, "warden.yaml"), []byte(fcPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "whd-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sockDir, 0o700)
	p.sock = filepath.Join(sockDir, "hookd.sock")
	home := filepath.Join(root, "home")
	mustMkdir(t, home)
	p.env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "WARDEN_HOOKD_SOCKET=" + p.sock}
	t.Cleanup(func() {
		exec.Command(wardenBin, "hookd", "stop", "--socket", p.sock).Run()
		os.RemoveAll(sockDir)
	})
	return p
}

type fcAnswer struct {
	stdout, stderr string
	code           int
}

// hook runs warden-hook HOST ARGS... in the project with stdin, and env
// added to the project's environment.
func (p *fcProject) hook(t *testing.T, stdin io.Reader, env []string, args ...string) fcAnswer {
	t.Helper()
	return p.run(t, wardenHookBin, stdin, env, args...)
}

// run runs bin (warden-hook, or warden for `warden hook`) in the project.
func (p *fcProject) run(t *testing.T, bin string, stdin io.Reader, env []string, args ...string) fcAnswer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = p.dir
	cmd.Env = append(append([]string{}, p.env...), env...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run warden-hook: %v", err)
	}
	return fcAnswer{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// blocked reports whether the host would block the call on this answer,
// and what it would take for the reason.
func (a fcAnswer) blocked(host string) (bool, string) {
	var out struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Message  string `json:"message"`
		Specific struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	parsed := json.Unmarshal([]byte(strings.TrimSpace(a.stdout)), &out) == nil
	switch host {
	case "opencode":
		// The plugin blocks on no JSON, or a deny or ask; it ignores the code.
		if !parsed || out.Decision == "deny" || out.Decision == "ask" {
			return true, out.Message + a.stdout
		}
		return false, ""
	case "gemini":
		if a.code == 2 {
			return true, a.stderr
		}
		return a.code == 0 && parsed && out.Decision == "deny", out.Reason
	default: // claude, codex
		if a.code == 2 {
			return true, a.stderr
		}
		return a.code == 0 && parsed && out.Specific.Decision == "deny", out.Specific.Reason
	}
}

func (a fcAnswer) mustBlock(t *testing.T, host, what, reason string) {
	t.Helper()
	ok, why := a.blocked(host)
	if !ok {
		t.Errorf("%s: %s let the call through: exit %d, stdout %q, stderr %q", what, host, a.code, a.stdout, a.stderr)
		return
	}
	if reason != "" && !strings.Contains(why, reason) {
		t.Errorf("%s: %s blocked, but the reason does not say %q: %q", what, host, reason, why)
	}
}

func fcScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "warden")
	if err := exectest.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var fcHosts = []string{"claude", "codex", "gemini", "opencode"}

// TestFailClosedNotWardensAnswer: warden-hook runs `warden hook` (hookd
// off, or a first call) and used to pass on whatever that program said.
// Another program named warden, a warden too old for this warden-hook, or
// a crash after the answer gave exit codes 0 (with text), 1 or 255, which
// Claude Code, Codex and Gemini CLI take for "no objection".
func TestFailClosedNotWardensAnswer(t *testing.T) {
	p := newFCProject(t)
	deny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x"}}`
	bins := map[string]string{
		"text, exit 0":      fcScript(t, `echo "warden 0.1: hook: unknown command"`),
		"text, exit 1":      fcScript(t, `echo "Usage: warden COMMAND"; exit 1`),
		"a deny, then -9":   fcScript(t, "echo '"+deny+"'\nkill -9 $$"),
		"a JSON list":       fcScript(t, `echo '[]'`),
		"a deny and exit 3": fcScript(t, "echo '"+deny+"'; exit 3"),
	}
	for what, bin := range bins {
		for _, host := range fcHosts {
			a := p.hook(t, strings.NewReader(fcEvent(host, p.dir, "rm -rf x")), []string{"WARDEN_HOOKD=off", "WARDEN_BIN=" + bin}, host)
			a.mustBlock(t, host, "WARDEN_BIN answers "+what, "")
			if a.code != 2 {
				t.Errorf("WARDEN_BIN answers %s: %s: exit %d, want 2", what, host, a.code)
			}
		}
	}
	// warden itself still answers through warden-hook.
	a := p.hook(t, strings.NewReader(fcEvent("claude", p.dir, "ls -la")), []string{"WARDEN_HOOKD=off", "WARDEN_BIN=" + wardenBin}, "claude")
	if a.code != 0 || !strings.Contains(a.stdout, `"permissionDecision":"allow"`) {
		t.Errorf("an allowed call through warden: exit %d, %s %s", a.code, a.stdout, a.stderr)
	}
}

// TestFailClosedStdinNeverClosed: a host that sends the event and keeps
// stdin open used to leave warden-hook waiting until the host's timeout,
// which hosts take for "no objection". It now denies at the call's
// deadline (--timeout), as BAD_INPUT.
func TestFailClosedStdinNeverClosed(t *testing.T) {
	p := newFCProject(t)
	for _, host := range fcHosts {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, fcEvent(host, p.dir, "rm -rf x"))
		done := make(chan fcAnswer, 1)
		go func() { done <- p.hook(t, r, nil, host, "--timeout", "1s") }()
		if host == "claude" {
			// `warden hook` itself, as a host runs it without warden-hook.
			go func() { done <- p.run(t, wardenBin, r, nil, "hook", host, "--timeout", "1s") }()
		}
		var a fcAnswer
		select {
		case a = <-done:
		case <-time.After(time.Minute): // a hang, not a measure
			w.Close()
			t.Fatalf("%s: warden-hook still waits for stdin to close after a minute", host)
		}
		answers := []fcAnswer{a}
		if host == "claude" {
			select {
			case b := <-done:
				answers = append(answers, b)
			case <-time.After(time.Minute):
				w.Close()
				t.Fatalf("%s: the hook still waits for stdin to close after a minute", host)
			}
		}
		w.Close()
		r.Close()
		for _, a := range answers {
			a.mustBlock(t, host, "stdin never closed", "")
			if !strings.Contains(a.stdout+a.stderr, "did not close the hook's input") {
				t.Errorf("%s: the reason does not name the open input: %s %s", host, a.stdout, a.stderr)
			}
		}
	}
}

// fcSocket listens on the project's hookd socket as something other than
// hookd, answering every request with answer.
func fcSocket(t *testing.T, p *fcProject, answer string) {
	t.Helper()
	ln, err := net.Listen("unix", p.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.Copy(io.Discard, c)
			io.WriteString(c, answer)
			c.Close()
		}
	}()
}

// TestFailClosedHookdSocketAnswers: warden-hook printed whatever answered
// on hookd's socket, with its exit code: nothing with exit code 0, or
// exit code 1, let the call through.
func TestFailClosedHookdSocketAnswers(t *testing.T) {
	b64 := func(s string) string { js, _ := json.Marshal([]byte(s)); return string(js) }
	for what, answer := range map[string]string{
		"nothing, exit 0":  `{"v":1,"code":0}`,
		"{}, exit 1":       `{"v":1,"code":1,"stdout":` + b64("{}") + `}`,
		"text, exit 0":     `{"v":1,"code":0,"stdout":` + b64("ok\n") + `}`,
		"a deny, exit 255": `{"v":1,"code":255,"stdout":` + b64(`{"decision":"deny","reason":"x"}`) + `}`,
	} {
		p := newFCProject(t)
		fcSocket(t, p, answer)
		for _, host := range fcHosts {
			a := p.hook(t, strings.NewReader(fcEvent(host, p.dir, "rm -rf x")), nil, host)
			a.mustBlock(t, host, "the socket answers "+what, "hookd")
		}
	}
}

// TestFailClosedServeAnswers: a hook pointed at `warden serve` must deny
// when what answers is not the service's hook answer. It used to follow
// redirects (resending the token, and taking the allow of whatever answered
// at the end) and pass on any code and any stdout.
func TestFailClosedServeAnswers(t *testing.T) {
	b64 := func(s string) string { js, _ := json.Marshal([]byte(s)); return string(js) }
	allow := `{"v":1,"code":0,"stdout":` + b64("{}\n") + `}`
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/other/v1/hook":
			io.WriteString(w, allow)
		case "/r307/v1/hook":
			http.Redirect(w, r, "/other/v1/hook", http.StatusTemporaryRedirect)
		case "/r302/v1/hook":
			http.Redirect(w, r, "/other/v1/hook", http.StatusFound)
		case "/code1/v1/hook":
			io.WriteString(w, `{"v":1,"code":1,"stdout":`+b64("{}")+`}`)
		case "/html/v1/hook":
			io.WriteString(w, `{"v":1,"code":0,"stdout":`+b64("<html>sign in</html>")+`}`)
		case "/slow/v1/hook":
			<-release
		default:
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for /slow
	p := newFCProject(t)
	for _, tc := range []struct{ path, reason string }{
		{"/r307", "redirect"},
		{"/r302", "redirect"},
		{"/code1", "SERVICE_UNAVAILABLE"},
		{"/html", "SERVICE_UNAVAILABLE"},
		{"/slow", "SERVICE_UNAVAILABLE"},
	} {
		for _, host := range []string{"claude", "gemini", "opencode"} {
			a := p.hook(t, strings.NewReader(fcEvent(host, p.dir, "rm -rf x")), []string{"WARDEN_SERVE_TOKEN=wdn_test"},
				host, "--serve", srv.URL+tc.path, "--timeout", "1s")
			a.mustBlock(t, host, "the service at "+tc.path, "")
			if !strings.Contains(a.stdout+a.stderr, tc.reason) {
				t.Errorf("%s at %s: the answer does not say %q: %s %s", host, tc.path, tc.reason, a.stdout, a.stderr)
			}
		}
	}
}

// TestFailClosedPolicyGoneParentTakesOver: a project's policy deleted
// mid-session (or left a broken link) used to hand its calls to a policy
// in a parent folder, in silence: there an allow-all one allowed rm -rf.
func TestFailClosedPolicyGoneParentTakesOver(t *testing.T) {
	for _, mode := range []string{"hookd", "off"} {
		p := newFCProject(t)
		parent := filepath.Dir(p.dir)
		if err := os.WriteFile(filepath.Join(parent, "warden.yaml"), []byte("version: 1\ndefault: allow\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var env []string
		if mode == "off" {
			env = []string{"WARDEN_HOOKD=off"}
		}
		for _, host := range fcHosts {
			p.hook(t, strings.NewReader(fcEvent(host, p.dir, "rm -rf x")), env, host).mustBlock(t, host, mode+": with the policy", "")
		}
		os.Remove(filepath.Join(p.dir, "warden.yaml"))
		for _, host := range fcHosts {
			p.hook(t, strings.NewReader(fcEvent(host, p.dir, "rm -rf x")), env, host).mustBlock(t, host, mode+": policy removed", "policy of "+p.dir+" is gone")
		}
		os.Symlink(filepath.Join(p.dir, "gone.yaml"), filepath.Join(p.dir, "warden.yaml"))
		os.RemoveAll(filepath.Join(p.dir, ".warden"))
		for _, host := range fcHosts {
			p.hook(t, strings.NewReader(fcEvent(host, p.dir, "rm -rf x")), env, host).mustBlock(t, host, mode+": policy a broken link", "broken link")
		}
	}
}

// TestFailClosedUnknownToolEvent: an event warden does not know that
// carries a tool call (a host's new or renamed gate, a hook wired by hand)
// was answered with nothing at all. (OpenCode's events come from warden's
// own plugin, which sends only the events warden knows.)
func TestFailClosedUnknownToolEvent(t *testing.T) {
	p := newFCProject(t)
	for _, host := range []string{"claude", "codex", "gemini"} {
		var v map[string]any
		json.Unmarshal([]byte(fcEvent(host, p.dir, "rm -rf x")), &v)
		v["hook_event_name"] = fmt.Sprint(v["hook_event_name"], "V2")
		js, _ := json.Marshal(v)
		a := p.hook(t, bytes.NewReader(js), nil, host)
		a.mustBlock(t, host, "an unknown event with a tool call", "")
		if a.code != 2 {
			t.Errorf("%s: an unknown event with a tool call: exit %d, want 2", host, a.code)
		}
	}
}
