package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/remote"
	"github.com/warden-run/warden/wire"
)

// TestServiceEchoesNonce: the service echoes the nonce of each request to
// /v1/decide, /v1/hook and /v1/hidden in its answer; a request without
// one (an older client) is answered as before, and a malformed one is
// refused.
func TestServiceEchoesNonce(t *testing.T) {
	v := start(t, testPolicy)
	in := fmt.Sprintf(`{"session_id":"n1","hook_event_name":"PreToolUse","cwd":%q,"tool_name":"Bash","tool_input":{"command":"echo hi"}}`, v.dir)
	hookBody, _ := json.Marshal(map[string]any{"v": 1, "op": "hook", "args": []string{"claude"}, "dir": v.dir, "stdin": []byte(in)})
	bodies := map[string]string{
		"/v1/decide": `{"call":{"tool":"Bash","args":{"command":"echo hi"},"session":"n1"}}`,
		"/v1/hook":   string(hookBody),
		"/v1/hidden": `{"tools":["Bash"],"session":"n1"}`,
	}
	post := func(path, nonce string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", v.url+path, strings.NewReader(bodies[path]))
		req.Header.Set("Authorization", "Bearer "+v.agent)
		if nonce != "" {
			req.Header.Set(wire.NonceHeader, nonce)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	for path := range bodies {
		n := wire.NewNonce()
		if code, m := post(path, n); code != 200 || m["nonce"] != n {
			t.Errorf("%s with nonce %s: %d, echoed %v (%v)", path, n, code, m["nonce"], m)
		}
		if code, m := post(path, ""); code != 200 || m["nonce"] != nil {
			t.Errorf("%s without a nonce (an older client): %d %v", path, code, m)
		}
		if code, m := post(path, strings.Repeat("x", 200)); code != 400 || !strings.Contains(fmt.Sprint(m["error"]), wire.NonceHeader) {
			t.Errorf("%s with a malformed nonce: %d %v", path, code, m)
		}
	}
}

// misroute is a real reverse proxy in front of the service that breaks
// the tie between a request and its answer: "replay" answers every
// request to a path with the first answer it got there (a cache that
// ignores the body); "strip" drops the nonce header on its way to the
// service, which then answers as a service older than the echo does.
func misroute(t *testing.T, service, mode string) string {
	t.Helper()
	target, _ := url.Parse(service)
	rp := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	cached := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode {
		case "strip":
			r.Header.Del(wire.NonceHeader)
			rp.ServeHTTP(w, r)
		case "replay":
			mu.Lock()
			body, ok := cached[r.URL.Path]
			mu.Unlock()
			if !ok {
				rec := httptest.NewRecorder()
				rp.ServeHTTP(rec, r)
				body = rec.Body.Bytes()
				mu.Lock()
				cached[r.URL.Path] = body
				mu.Unlock()
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestClientRefusesAnswerForAnotherCall: the Go client of the service
// (remote.Client, and the gate of `warden mcp proxy --serve`) used to take
// any 200 answer: an allow a cache kept from an earlier call allowed
// rm -rf. It now takes only the answer that echoes its request's nonce.
func TestClientRefusesAnswerForAnotherCall(t *testing.T) {
	v := start(t, testPolicy)
	ctx := context.Background()
	echo := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "echo hi"}, Session: "m1"}
	rm := warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "rm -rf x"}, Session: "m1"}

	// Straight to the service: its answers are taken.
	c := &remote.Client{URL: v.url, Token: v.agent}
	if r, err := c.Decide(ctx, echo, 0); err != nil || r.Decision.Decision != warden.Allow {
		t.Fatalf("echo hi, straight: %+v %v", r, err)
	}
	if r, err := c.Decide(ctx, rm, 0); err != nil || r.Decision.Decision != warden.Deny || r.Decision.Code == warden.CodeUnavailable {
		t.Fatalf("rm -rf, straight: %+v %v", r, err)
	}

	// Through a cache that replays the first answer: the allow of echo hi
	// is not taken for rm -rf.
	c = &remote.Client{URL: misroute(t, v.url, "replay"), Token: v.agent}
	if r, err := c.Decide(ctx, echo, 0); err != nil || r.Decision.Decision != warden.Allow {
		t.Fatalf("echo hi, first through the cache: %+v %v", r, err)
	}
	r, err := c.Decide(ctx, rm, 0)
	if err == nil || r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeUnavailable || !strings.Contains(r.Decision.Reason, "meant for another request") {
		t.Fatalf("rm -rf answered by the cached allow: %+v %v", r, err)
	}
	gate := &remote.MCPGate{Client: c, Session: "m1"}
	if vd, err := gate.Decide(ctx, rm); err == nil || vd.Decision.Decision != warden.Deny {
		t.Fatalf("mcp proxy gate, rm -rf answered by the cached allow: %+v %v", vd, err)
	}
	if _, err := gate.Hidden(ctx, []string{"Bash"}); err != nil {
		t.Fatalf("hidden, first through the cache: %v", err)
	}
	if h, err := gate.Hidden(ctx, []string{"Bash", "Write"}); err == nil {
		t.Fatalf("hidden, answered by the cached list: %v", h)
	}

	// A service that does not echo (older than this client): refused, as
	// too old, never taken.
	c = &remote.Client{URL: misroute(t, v.url, "strip"), Token: v.agent}
	r, err = c.Decide(ctx, echo, 0)
	if err == nil || r.Decision.Decision != warden.Deny || r.Decision.Code != warden.CodeRefused || !strings.Contains(r.Decision.Reason, "too old") {
		t.Fatalf("a service that does not echo: %+v %v", r, err)
	}
}

// TestOldClientNewService: a client that sends no nonce (any earlier
// warden) gets the service's answer as before, and reads it.
func TestOldClientNewService(t *testing.T) {
	v := start(t, testPolicy)
	body := `{"call":{"tool":"Bash","args":{"command":"rm -rf x"},"session":"o1"}}`
	req, _ := http.NewRequest("POST", v.url+"/v1/decide", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+v.agent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	// An older client's type: the fields it knew.
	var old struct {
		Decision warden.Decision `json:"decision"`
		AuditID  int64           `json:"audit_id,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&old); resp.StatusCode != 200 || err != nil || old.Decision.Decision != warden.Deny || old.Decision.Rule != "no-rm" {
		t.Fatalf("an old client's decide: %d %v %s", resp.StatusCode, err, data)
	}
}
