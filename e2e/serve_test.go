package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

const servePolicy = `version: 1
default: deny
rules:
  - id: ask-touch
    effect: ask
    tool: shell
    command: ["touch *"]
    message: Creating files needs a person's approval.
    suggestion: Wait for the answer.
  - id: echo
    effect: allow
    tool: shell
    command: ["echo *"]
  - id: files
    effect: allow
    path: ["**"]
`

// served is one `warden serve` process.
type served struct {
	t    *testing.T
	url  string
	cmd  *exec.Cmd
	logs *bytes.Buffer
	done chan struct{}
}

// serveProject writes a policy into a new project folder.
func serveProject(t *testing.T, policy string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveToken adds a token with `warden serve token add` and returns it.
func serveToken(t *testing.T, dir, kind, name string, extra ...string) string {
	t.Helper()
	cmd := exec.Command(wardenBin, append([]string{"serve", "token", "add", "--kind", kind, name}, extra...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warden serve token add: %v\n%s", err, stderr.String())
	}
	tok := strings.TrimSpace(string(out))
	if !strings.HasPrefix(tok, "wdn_") || strings.Contains(stderr.String(), tok) {
		t.Fatalf("token add printed %q (stderr %q)", out, stderr.String())
	}
	return tok
}

// startServe runs `warden serve` on a free loopback port in dir and
// returns once it serves.
func startServe(t *testing.T, dir string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(wardenBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	logs := &bytes.Buffer{}
	cmd.Stderr = &syncWriter{w: logs}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, logs: logs, done: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "warden serve: "); ok {
				urlc <- strings.TrimSuffix(strings.Fields(u)[0], "/")
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() { cmd.Wait(); close(s.done) }()
	select {
	case s.url = <-urlc:
	case <-s.done:
		t.Fatalf("warden serve exited: %s", logs.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("warden serve did not start: %s", logs.String())
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// stop ends the service as an operator would (SIGTERM) and waits.
func (s *served) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("warden serve did not stop on SIGTERM: %s", s.logs.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// call sends a JSON request with a bearer token and decodes the answer.
func (s *served) call(method, path, tok string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

type decideAnswer struct {
	Decision warden.Decision `json:"decision"`
	Error    string          `json:"error"`
}

// decide sends a call to /v1/decide with an agent token.
func (s *served) decide(tok string, call map[string]any, wait string) decideAnswer {
	s.t.Helper()
	var d decideAnswer
	if code := s.call("POST", "/v1/decide", tok, map[string]any{"call": call, "wait": wait}, &d); code != 200 {
		s.t.Fatalf("decide: status %d", code)
	}
	return d
}

// waitPending waits for a pending approval and returns it.
func (s *served) waitPending(tok string) warden.Approval {
	s.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var list []warden.Approval
		if s.call("GET", "/v1/approvals", tok, nil, &list) == 200 && len(list) > 0 {
			return list[0]
		}
	}
	s.t.Fatalf("no pending approval: %s", s.logs.String())
	return warden.Approval{}
}

func touchCall(file, session string) map[string]any {
	return map[string]any{"tool": "Bash", "args": map[string]any{"command": "touch " + file}, "session": session}
}

// awaitDecision waits for a decision a goroutine is getting.
func awaitDecision(t *testing.T, c <-chan decideAnswer) decideAnswer {
	t.Helper()
	select {
	case d := <-c:
		return d
	case <-time.After(90 * time.Second):
		t.Fatal("the waiting call got no answer")
	}
	return decideAnswer{}
}

var _ = context.Background
var _ = fmt.Sprint
