package remote_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/internal/servetest"
	"github.com/warden-run/warden/remote"
	"github.com/warden-run/warden/serve"
	"github.com/warden-run/warden/wire"
)

const policy = `version: 1
default: deny
rules:
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: Deleting is not allowed.
    suggestion: Move it to the trash folder instead.
  - id: echo
    effect: allow
    tool: shell
    command: ["echo *"]
`

// service runs a real `warden serve` on a loopback port with a SQLite
// store, and returns its URL, folder and an agent token.
func service(t *testing.T) (string, string, string) {
	t.Helper()
	sv := servetest.Start(t, policy)
	return sv.URL, sv.Dir, sv.Token(t, "ci-bot", serve.KindAgent)
}

// proxy is a real reverse proxy in front of the service: "replay" answers
// every request with the first answer it got (a cache that ignores the
// body), "strip" drops the nonce header on its way (the service then
// answers as one older than the echo).
func proxy(t *testing.T, service, mode string) string {
	t.Helper()
	target, _ := url.Parse(service)
	rp := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var cached []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mode == "strip" {
			r.Header.Del(wire.NonceHeader)
			rp.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if cached == nil {
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			cached = rec.Body.Bytes()
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(cached)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func event(dir, command string) []byte {
	js, _ := json.Marshal(map[string]any{"session_id": "r1", "hook_event_name": "PreToolUse", "cwd": dir, "tool_name": "Bash",
		"tool_input": map[string]any{"command": command}})
	return js
}

// permission is Claude Code's reading of a hook answer.
func permission(out []byte) string {
	var m struct {
		Specific struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	json.Unmarshal(out, &m)
	return m.Specific.Decision
}

// TestRemoteRefusesAnswerForAnotherCall: a remote hook used to take any
// hook answer with a 200: an allow a cache in front of the service kept
// from an earlier call let rm -rf through. It now takes only the answer
// that echoes its request's nonce, and denies a service that does not
// echo at all as too old.
func TestRemoteRefusesAnswerForAnotherCall(t *testing.T) {
	svc, dir, tok := service(t)
	t.Setenv(hookd.ServeTokenEnv, tok)
	run := func(url, command string) (int, string, string) {
		var out, errb bytes.Buffer
		code := remote.RunHook(url, hookd.ServeToken, []string{"claude"}, event(dir, command), "", &out, &errb)
		return code, out.String(), errb.String()
	}
	// Straight to the service.
	if code, out, errs := run(svc, "echo hi"); code != 0 || permission([]byte(out)) != "allow" {
		t.Fatalf("echo hi, straight: exit %d %s %s", code, out, errs)
	}
	if code, out, errs := run(svc, "rm -rf x"); code != 0 || permission([]byte(out)) != "deny" || !strings.Contains(out, "no-rm") {
		t.Fatalf("rm -rf, straight: exit %d %s %s", code, out, errs)
	}

	cache := proxy(t, svc, "replay")
	if code, out, errs := run(cache, "echo hi"); code != 0 || permission([]byte(out)) != "allow" {
		t.Fatalf("echo hi, first through the cache: exit %d %s %s", code, out, errs)
	}
	code, out, errs := run(cache, "rm -rf x")
	if permission([]byte(out)) == "allow" || code != 2 || !strings.Contains(out+errs, "SERVICE_UNAVAILABLE") || !strings.Contains(out+errs, "meant for another request") {
		t.Fatalf("rm -rf answered by the cached allow: exit %d %s %s", code, out, errs)
	}

	old := proxy(t, svc, "strip")
	code, out, errs = run(old, "echo hi")
	if permission([]byte(out)) == "allow" || code != 2 || !strings.Contains(out+errs, "SERVICE_REFUSED") || !strings.Contains(out+errs, "too old") {
		t.Fatalf("a service that does not echo: exit %d %s %s", code, out, errs)
	}
}

// TestRemoteTakesItsOwnAnswer: Remote's answer carries the nonce it sent,
// fresh for every request.
func TestRemoteTakesItsOwnAnswer(t *testing.T) {
	svc, dir, tok := service(t)
	seen := map[string]bool{}
	for i := range 3 {
		req := &wire.HookRequest{V: wire.Version, Op: wire.OpHook, Args: []string{"claude"}, Dir: dir, Stdin: event(dir, fmt.Sprintf("echo %d", i))}
		resp, err := (&remote.Client{URL: svc, Token: tok}).Hook(req, time.Now().Add(time.Minute))
		if err != nil || resp.Nonce == "" || seen[resp.Nonce] {
			t.Fatalf("call %d: nonce %q (seen before: %v), %v", i, resp.Nonce, seen[resp.Nonce], err)
		}
		seen[resp.Nonce] = true
	}
}

// TestServiceErrorCarriesTheCode: the service's error body carries the
// error's code (wire.ErrorBody), and the client fails closed with it: a
// refused token is SERVICE_REFUSED, a body the service cannot read
// BAD_INPUT, whatever the status alone would say.
func TestServiceErrorCarriesTheCode(t *testing.T) {
	svc, _, tok := service(t)
	call := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "echo hi"}}
	resp, err := (&remote.Client{URL: svc, Token: "not-a-token"}).Decide(t.Context(), call, 0)
	if warden.ErrorCode(err) != warden.CodeRefused || resp.Decision.Decision != warden.Deny || resp.Decision.Code != warden.CodeRefused {
		t.Errorf("a refused token: %s %s, %v; want a SERVICE_REFUSED deny", resp.Decision.Decision, resp.Decision.Code, err)
	}
	// The body as the service wrote it.
	req, _ := http.NewRequest(http.MethodPost, svc+"/v1/decide", strings.NewReader(`{"call":{"tool":""}}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var body wire.ErrorBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.StatusCode != 400 || body.Code != string(warden.CodeBadInput) || body.Error == "" {
		t.Errorf("a call without a tool: HTTP %d %+v, %v; want 400 with the code BAD_INPUT", r.StatusCode, body, err)
	}
	// A code from a body is taken only when it is one: never a success.
	for code, want := range map[string]warden.Code{"STORE_UNAVAILABLE": warden.CodeStoreUnavailable, "ALLOWED": warden.CodeUnavailable,
		"no such code!": warden.CodeUnavailable, "": warden.CodeUnavailable} {
		if got := warden.ErrorCode(remote.ServiceError(svc, 500, wire.ErrorBody{Error: "x", Code: code})); got != want {
			t.Errorf("HTTP 500 with code %q: %s, want %s", code, got, want)
		}
	}
}
