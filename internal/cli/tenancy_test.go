package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckRefusesBentSessionID: `warden check` refuses a session id with
// white space at an end or a control character (BAD_INPUT, exit 1), from
// --session and from the call, also line by line: never trimmed into
// another session.
func TestCheckRefusesBentSessionID(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "w.db")
	for _, c := range []struct {
		name, stdin string
		args        []string
	}{
		{"flag", `{"tool":"Bash","args":{"command":"git status"}}`, []string{"--session", "s1 "}},
		{"flag, stateful", `{"tool":"Bash","args":{"command":"git status"}}`, []string{"--session", "\ts1", "--store", store}},
		{"call", `{"tool":"Bash","args":{"command":"git status"},"session":"s1\u0007"}`, nil},
		{"call, stateful", `{"tool":"Bash","args":{"command":"git status"},"session":"s1\n"}`, []string{"--store", store}},
		{"jsonl", `{"tool":"Bash","args":{"command":"git status"},"session":" s1"}`, []string{"--jsonl"}},
	} {
		out, stderr, code := run(t, c.stdin, append([]string{"check", "--policy", coding}, c.args...)...)
		if code != 1 || !strings.Contains(stderr, "session id") || strings.Contains(out, `"allow"`) || !strings.Contains(out, "BAD_INPUT") {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s", c.name, code, out, stderr)
		}
	}
	// The id as given is taken.
	if out, stderr, code := run(t, `{"tool":"Bash","args":{"command":"git status"},"session":"s1"}`, "check", "--policy", coding, "--store", store); code != 0 {
		t.Errorf("a good session id: exit %d\n%s%s", code, out, stderr)
	}
}

// TestHaltAgent: `warden halt --agent NAME` halts an agent token (shown by
// `warden state`), apart from the project's and the sessions' halts, and
// `warden resume --agent NAME` lifts it.
func TestHaltAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	data, err := os.ReadFile(coding)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pol, data, 0o644)
	P := []string{"--policy", pol}
	out, stderr, code := run(t, "", append([]string{"halt", "--agent", "rogue", "--message", "Stop now."}, P...)...)
	if code != 0 || !strings.Contains(out, "halted: agent rogue") {
		t.Fatalf("halt --agent: %d %s%s", code, out, stderr)
	}
	if _, stderr, code := run(t, "", append([]string{"halt", "--agent", "rogue", "--session", "s"}, P...)...); code == 0 || !strings.Contains(stderr, "not both") {
		t.Errorf("halt --agent --session: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, "", append([]string{"halt", "--session", "s "}, P...)...); code == 0 || !strings.Contains(stderr, "session id") {
		t.Errorf("halt --session with a trailing space: %d %s", code, stderr)
	}
	out, _, _ = run(t, "", append([]string{"state"}, P...)...)
	if !strings.Contains(out, "HALTED: agent rogue, in every session") || strings.Contains(out, "HALTED: every session of the project") {
		t.Errorf("state:\n%s", out)
	}
	// The project is not halted: a local call goes on.
	if out, _, code := run(t, `{"tool":"Bash","args":{"command":"git status"},"session":"local"}`, append([]string{"check", "--session", "local", "--store", filepath.Join(dir, ".warden", "warden.db")}, P...)...); code != 0 {
		t.Errorf("a local call while an agent is halted: %d %s", code, out)
	}
	if _, stderr, code := run(t, "", append([]string{"resume"}, P...)...); code == 0 || !strings.Contains(stderr, "not halted") {
		t.Errorf("resume of the project: %d %s", code, stderr)
	}
	if out, stderr, code := run(t, "", append([]string{"resume", "--agent", "rogue"}, P...)...); code != 0 || !strings.Contains(out, "resumed: agent rogue") {
		t.Errorf("resume --agent: %d %s%s", code, out, stderr)
	}
	if out, _, _ := run(t, "", append([]string{"state"}, P...)...); strings.Contains(out, "HALTED") {
		t.Errorf("state after resume:\n%s", out)
	}
}

// TestServeTokenExpires: `warden serve token add --expires` takes a
// duration or an RFC 3339 time in the future, and `token ls` shows it.
func TestServeTokenExpires(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens.json")
	T := []string{"--tokens", file}
	out, stderr, code := run(t, "", append([]string{"serve", "token", "add", "--kind", "agent", "--expires", "30d", "bot"}, T...)...)
	if code != 0 || !strings.HasPrefix(out, "wdn_") || !strings.Contains(stderr, "valid until") {
		t.Fatalf("add --expires 30d: %d %s%s", code, out, stderr)
	}
	if _, _, code := run(t, "", append([]string{"serve", "token", "add", "--kind", "person", "--expires", "2099-01-02T03:04:05Z", "alice"}, T...)...); code != 0 {
		t.Fatalf("add --expires TIME: %d", code)
	}
	if _, _, code := run(t, "", append([]string{"serve", "token", "add", "--kind", "person", "forever"}, T...)...); code != 0 {
		t.Fatalf("add without --expires: %d", code)
	}
	for _, bad := range []string{"yesterday", "2020-01-01T00:00:00Z", "-3h"} {
		if _, stderr, code := run(t, "", append([]string{"serve", "token", "add", "--kind", "agent", "--expires", bad, "x-" + bad}, T...)...); code == 0 || !strings.Contains(stderr, "--expires") {
			t.Errorf("add --expires %s: %d %s", bad, code, stderr)
		}
	}
	out, _, code = run(t, "", append([]string{"serve", "token", "ls"}, T...)...)
	want := time.Now().Add(30 * 24 * time.Hour).UTC().Format("2006-01-02")
	if code != 0 || !strings.Contains(out, "EXPIRES") || !strings.Contains(out, want) || !strings.Contains(out, "2099-01-02 03:04 UTC") ||
		!strings.Contains(out, "never") || strings.Contains(out, "x-") {
		t.Errorf("token ls:\n%s", out)
	}
	var list []map[string]any
	data, _ := os.ReadFile(file)
	if json.Unmarshal(data, &list) != nil || len(list) != 3 {
		t.Fatalf("tokens file: %s", data)
	}
	for _, e := range list {
		if _, ok := e["expires"]; ok != (e["name"] != "forever") {
			t.Errorf("token %v: expires %v", e["name"], e["expires"])
		}
	}
}
