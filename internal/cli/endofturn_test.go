package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/hookd"
)

// TestEndOfTurnFailureNeverContinues: at the events that end a turn
// (Claude Code's and Codex's Stop and SubagentStop, Gemini CLI's
// AfterAgent, OpenCode's session.idle), a broken policy, bad input or a
// hookd that gives no answer is answered with exit code 0 and nothing
// that makes the host ask the model again: no context, no block, no deny.
func TestEndOfTurnFailureNeverContinues(t *testing.T) {
	t.Parallel()
	broken := project(t, "version: 1\nrules: [\n")
	events := []struct {
		host  string
		event map[string]any
	}{
		{"claude", map[string]any{"session_id": "s1", "cwd": broken, "hook_event_name": "Stop", "stop_hook_active": false}},
		{"claude", map[string]any{"session_id": "s1", "cwd": broken, "hook_event_name": "Stop", "stop_hook_active": true}},
		{"claude", map[string]any{"session_id": "s1", "cwd": broken, "hook_event_name": "SubagentStop", "agent_id": "a1", "agent_type": "x"}},
		{"codex", map[string]any{"session_id": "s1", "cwd": broken, "hook_event_name": "Stop", "turn_id": "t1"}},
		{"gemini", map[string]any{"session_id": "s1", "cwd": broken, "hook_event_name": "AfterAgent", "prompt": "hi", "prompt_response": "done"}},
		{"opencode", map[string]any{"session_id": "s1", "directory": broken, "event": "session.idle"}},
	}
	// continues reports what in an answer would make a host go on.
	continues := func(out []byte) string {
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			return "no JSON: " + string(out)
		}
		for _, k := range []string{"decision", "continue", "reason", "system", "message"} {
			if _, ok := m[k]; ok {
				return "it has " + k
			}
		}
		if hs, ok := m["hookSpecificOutput"].(map[string]any); ok {
			return "it has hookSpecificOutput " + func() string { b, _ := json.Marshal(hs); return string(b) }()
		}
		return ""
	}
	t.Run("each", func(t *testing.T) {
		for _, tc := range events {
			js, _ := json.Marshal(tc.event)
			name, _ := tc.event["hook_event_name"].(string)
			if tc.host == "opencode" {
				name = "session.idle"
			}
			t.Run(tc.host+"/"+name, func(t *testing.T) {
				t.Parallel()
				// A broken policy.
				var out, errb bytes.Buffer
				code := Run(context.Background(), []string{"hook", tc.host}, bytes.NewReader(js), &out, &errb)
				if why := continues(out.Bytes()); code != 0 || why != "" {
					t.Errorf("broken policy: exit %d, %s: %s", code, why, out.String())
				}
				if tc.event["stop_hook_active"] == true && strings.TrimSpace(out.String()) != "{}" {
					t.Errorf("stop_hook_active: %s, want {}", out.String())
				}
				// A bad command line: the event is still known.
				out.Reset()
				code = Run(context.Background(), []string{"hook", tc.host, "--bogus"}, bytes.NewReader(js), &out, &errb)
				if why := continues(out.Bytes()); code != 0 || why != "" {
					t.Errorf("bad command line: exit %d, %s: %s", code, why, out.String())
				}
				// A hookd that takes the event and never answers.
				out.Reset()
				sock := hangingHookd(t)
				c := &hookd.Client{Stdin: bytes.NewReader(js), Stdout: &out, Stderr: &errb, Socket: sock, Bin: "/nonexistent/warden", Grace: 100 * time.Millisecond}
				code = c.Run([]string{tc.host, "--timeout", "100ms"})
				if why := continues(out.Bytes()); code != 0 || why != "" {
					t.Errorf("hookd without an answer: exit %d, %s: %s", code, why, out.String())
				}
			})
		}
	})
	// Before a tool, the same failures still deny.
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"hook", "claude"}, strings.NewReader(claudePre(broken, "ls")), &out, &errb)
	var m map[string]any
	json.Unmarshal(out.Bytes(), &m)
	if d, _ := permission(m); d != "deny" || code != 0 {
		t.Errorf("PreToolUse with a broken policy: %s (exit %d)", d, code)
	}
}

// hangingHookd listens on a socket of its own, takes every request and
// never answers.
func hangingHookd(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hookd-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o700)
	sock := filepath.Join(dir, "hookd.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		os.RemoveAll(dir)
	})
	return sock
}
