package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/pgtest"
)

const statePolicy = `version: 1
default:
  safe: allow
  destructive: ask
roles:
  coordinator:
    description: Plans and delegates.
    tools: [read, list, todo, delegate]
    first: [todo]
    max_depth: 2
  builder:
    description: Edits code and runs commands.
    tools: [read, list, write, edit, shell, todo]
    first: [read]
rules:
  - id: allow-git-read
    effect: allow
    tool: shell
    command: ["git status *", "git log *"]
  - id: ask-push
    effect: ask
    tool: shell
    command: "git push *"
    message: Pushing publishes commits.
    suggestion: Ask the user first.
state:
  anchors_max: 5
audit:
  retention: 30d
`

// stRun runs warden with args and stdin, returning the exit code, stdout
// and stderr.
func stRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func stProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(file, []byte(statePolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func stDecision(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("decision JSON %q: %v", out, err)
	}
	return m
}

// TestStatefulSession walks the README's session: governance text, the
// first-tool warning, the depth limit, an approval asked, answered always
// and honoured, revoked, and the audit trail of it all.
func TestStatefulSession(t *testing.T) {
	t.Parallel()
	pol := stProject(t)
	dir := filepath.Dir(pol)
	P := []string{"--policy", pol}

	code, out, errs := stRun(t, "", append([]string{"state", "event", "created", "--session", "S", "--role", "builder"}, P...)...)
	if code != 0 || !strings.Contains(out, "WARDEN GOVERNANCE") || !strings.Contains(out, "Use read before any other tool.") {
		t.Fatalf("created: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".warden", "warden.db")); err != nil {
		t.Fatalf("default store not created next to the policy: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".warden", ".gitignore")); err != nil || !strings.Contains(string(b), "*") {
		t.Errorf(".warden/.gitignore: %q %v", b, err)
	}
	check := func(call string, extra ...string) (int, map[string]any) {
		t.Helper()
		code, out, errs := stRun(t, call, append(append([]string{"check", "--session", "S"}, P...), extra...)...)
		if code == ExitError {
			t.Fatalf("check %s: %s %s", call, out, errs)
		}
		return code, stDecision(t, out)
	}
	code, d := check(`{"tool":"Bash","args":{"command":"git status"}}`)
	if code != ExitOK || !strings.Contains(toJSONString(d["warnings"]), "first tool call of a builder session") {
		t.Errorf("first-tool warning: %d %v", code, d)
	}
	code, d = check(`{"tool":"Bash","args":{"command":"git status"}}`)
	if code != ExitOK || len(d["warnings"].([]any)) != 0 {
		t.Errorf("second call: %d %v", code, d)
	}

	// Depth: a coordinator two levels down may not delegate.
	stRun(t, "", append([]string{"state", "event", "created", "--session", "C0", "--role", "coordinator"}, P...)...)
	stRun(t, "", append([]string{"state", "event", "created", "--session", "C1", "--role", "coordinator", "--parent", "C0"}, P...)...)
	stRun(t, "", append([]string{"state", "event", "created", "--session", "C2", "--role", "coordinator", "--parent", "C1"}, P...)...)
	code, out, _ = stRun(t, `{"tool":"Task","args":{"prompt":"x"}}`, append([]string{"check", "--session", "C2"}, P...)...)
	if code != ExitDeny || stDecision(t, out)["code"] != "DEPTH_EXCEEDED" {
		t.Errorf("delegation at depth 2: %d %s", code, out)
	}

	// An approval asked, answered always, honoured on the next call.
	push := `{"tool":"Bash","args":{"command":"git push origin main"}}`
	code, d = check(push)
	if code != ExitAsk || d["code"] != "RULE_ASK" {
		t.Fatalf("push: %d %v", code, d)
	}
	id := regexp.MustCompile(`a-[0-9a-f]+`).FindString(d["reason"].(string))
	if id == "" || !strings.Contains(d["suggestion"].(string), "warden approvals approve "+id) {
		t.Fatalf("ask names no approval: %v", d)
	}
	code, out, _ = stRun(t, "", append([]string{"approvals", "ls"}, P...)...)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "git push origin main") {
		t.Errorf("approvals ls: %s", out)
	}
	if code, _, errs := stRun(t, "", append([]string{"approvals", "approve", id}, P...)...); code != ExitError || !strings.Contains(errs, "--once, --session, --always") {
		t.Errorf("approve without a scope: %d %s", code, errs)
	}
	code, out, errs = stRun(t, "", append([]string{"approvals", "approve", id, "--always"}, P...)...)
	if code != 0 || !strings.Contains(out, "approved "+id+" (always)") {
		t.Fatalf("approve: %d %s %s", code, out, errs)
	}
	grant := regexp.MustCompile(`g-[0-9a-f]+`).FindString(out)
	code, d = check(push)
	if code != ExitOK || d["rule"] != "grant:"+grant {
		t.Errorf("push after approve always: %d %v", code, d)
	}
	if code, d = check(`{"tool":"Bash","args":{"command":"git push origin other"}}`); code != ExitAsk {
		t.Errorf("a grant wider than the call: %d %v", code, d)
	}
	_, out, _ = stRun(t, "", append([]string{"grants", "ls"}, P...)...)
	if !strings.Contains(out, grant) || !strings.Contains(out, "command git push origin main") {
		t.Errorf("grants ls: %s", out)
	}
	if code, _, errs := stRun(t, "", append([]string{"grants", "revoke", grant}, P...)...); code != 0 {
		t.Fatalf("revoke: %s", errs)
	}
	if code, _ = check(push); code != ExitAsk {
		t.Errorf("push after revoke: %d", code)
	}

	// Reject with a message.
	_, out, _ = stRun(t, "", append([]string{"approvals", "ls", "--json"}, P...)...)
	var pending []map[string]any
	json.Unmarshal([]byte(out), &pending)
	if len(pending) == 0 {
		t.Fatalf("no pending approvals: %s", out)
	}
	last := pending[len(pending)-1]["id"].(string)
	if code, _, errs := stRun(t, "", append([]string{"approvals", "reject", last}, P...)...); code != ExitError || !strings.Contains(errs, "--message") {
		t.Errorf("reject without message: %d %s", code, errs)
	}
	if code, out, _ := stRun(t, "", append([]string{"approvals", "reject", last, "--message", "Open a PR."}, P...)...); code != 0 || !strings.Contains(out, "Open a PR.") {
		t.Errorf("reject: %d %s", code, out)
	}

	// Secrets never reach the audit trail.
	check(`{"tool":"Bash","args":{"command":"GITHUB_TOKEN=ghp_secretsecretsecretsecret1234 git status"}}`)

	// The audit trail.
	code, out, _ = stRun(t, "", append([]string{"audit", "--session", "S", "--jsonl"}, P...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 7 {
		t.Fatalf("audit of S: %d records, want 7:\n%s", len(lines), out)
	}
	if strings.Contains(out, "ghp_secret") {
		t.Errorf("secret in the audit export:\n%s", out)
	}
	var rec map[string]any
	json.Unmarshal([]byte(lines[0]), &rec)
	for _, k := range []string{"time", "session", "role", "tool", "args", "decision", "code", "rule", "mode", "latency_ns"} {
		if _, ok := rec[k]; !ok {
			t.Errorf("audit record lacks %q: %s", k, lines[0])
		}
	}
	count := func(args ...string) int {
		t.Helper()
		code, out, errs := stRun(t, "", append(append([]string{"audit", "--jsonl"}, P...), args...)...)
		if code != 0 {
			t.Fatalf("audit %v: %s", args, errs)
		}
		if strings.TrimSpace(out) == "" {
			return 0
		}
		return len(strings.Split(strings.TrimSpace(out), "\n"))
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--decision", "ask"}, 3},
		{[]string{"--decision", "deny"}, 1},
		{[]string{"--rule", "ask-push"}, 3},
		{[]string{"--rule", "grant:" + grant}, 1},
		{[]string{"--tool", "Task"}, 1},
		{[]string{"--session", "S", "--since", "1h"}, 7},
		{[]string{"--until", "2000-01-01"}, 0},
		{[]string{"--session", "S", "--limit", "2"}, 2},
	} {
		if got := count(c.args...); got != c.want {
			t.Errorf("audit %v: %d records, want %d", c.args, got, c.want)
		}
	}
	if code, _, errs := stRun(t, "", append([]string{"audit", "--decision", "maybe"}, P...)...); code != ExitError || !strings.Contains(errs, "--decision") {
		t.Errorf("bad --decision: %d %s", code, errs)
	}
	if code, out, _ := stRun(t, "", append([]string{"audit", "--session", "S"}, P...)...); code != 0 || !strings.Contains(out, "RULE_ASK") {
		t.Errorf("audit table: %s", out)
	}

	// The store can never be written through a tool call.
	code, out, _ = stRun(t, `{"tool":"Write","args":{"file_path":".warden/warden.db","content":"x"}}`, append([]string{"check", "--session", "S", "--store", DefaultStorePath(pol)}, P...)...)
	if code != ExitDeny || stDecision(t, out)["code"] != "PROTECTED_PATH" {
		t.Errorf("write to the store: %d %s", code, out)
	}
}

func toJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestStateAnchorPurgeCommands(t *testing.T) {
	t.Parallel()
	pol := stProject(t)
	P := []string{"--policy", pol}
	if code, _, errs := stRun(t, "", append([]string{"state", "phase", "build"}, P...)...); code != 0 {
		t.Fatal(errs)
	}
	code, out, _ := stRun(t, "", append([]string{"anchor", "add", "--priority", "critical", "Never", "touch", "billing."}, P...)...)
	if code != 0 || !strings.Contains(out, "[CRITICAL] Never touch billing.") {
		t.Fatalf("anchor add: %s", out)
	}
	id := strings.Fields(out)[0]
	if code, _, errs := stRun(t, "", append([]string{"anchor", "add", "--priority", "urgent", "x"}, P...)...); code != ExitError || !strings.Contains(errs, "priority") {
		t.Errorf("bad priority: %s", errs)
	}
	stRun(t, "", append([]string{"anchor", "add", "small commits"}, P...)...)
	code, out, _ = stRun(t, "", append([]string{"state"}, P...)...)
	if code != 0 || !strings.Contains(out, "Phase: build") || !strings.Contains(out, "[CRITICAL] Never touch billing.") ||
		!strings.Contains(out, "[NORMAL] small commits") || !strings.Contains(out, "phase:build") {
		t.Errorf("state:\n%s", out)
	}
	// After a compaction the reminder carries the critical anchor only.
	stRun(t, "", append([]string{"state", "event", "created", "--session", "R", "--role", "builder"}, P...)...)
	code, out, _ = stRun(t, "", append([]string{"state", "event", "compacted", "--session", "R"}, P...)...)
	if code != 0 || !strings.Contains(out, "REMINDER") || !strings.Contains(out, "[CRITICAL] Never touch billing.") ||
		strings.Contains(out, "small commits") || !strings.Contains(out, "Current phase: build") {
		t.Errorf("reminder:\n%s", out)
	}
	if code, out, _ = stRun(t, "", append([]string{"state", "governance", "--session", "R"}, P...)...); code != 0 || out != "" {
		t.Errorf("nothing due after the reminder: %q", out)
	}
	if code, out, _ = stRun(t, "", append([]string{"state", "event", "resumed", "--session", "R"}, P...)...); code != 0 || !strings.Contains(out, "SESSION RESUMED") {
		t.Errorf("resume note:\n%s", out)
	}
	if code, out, _ = stRun(t, "", append([]string{"state", "event", "ended", "--session", "R"}, P...)...); code != 0 || !strings.Contains(out, "session R ended") {
		t.Errorf("ended: %s", out)
	}
	if code, _, errs := stRun(t, "", append([]string{"state", "event", "exploded", "--session", "R"}, P...)...); code != ExitError || !strings.Contains(errs, "unknown event") {
		t.Errorf("bad event: %s", errs)
	}
	if code, _, _ := stRun(t, "", append([]string{"anchor", "rm", id}, P...)...); code != 0 {
		t.Error("anchor rm failed")
	}
	if code, _, errs := stRun(t, "", append([]string{"anchor", "rm", id}, P...)...); code != ExitError || !strings.Contains(errs, "not found") {
		t.Errorf("anchor rm twice: %s", errs)
	}
	code, out, _ = stRun(t, "", append([]string{"purge", "--json"}, P...)...)
	var rep map[string]int
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("purge: %d %s", code, out)
	}
	if code, out, _ = stRun(t, "", append([]string{"purge"}, P...)...); code != 0 || !strings.Contains(out, "older than 720h0m0s") {
		t.Errorf("purge text: %s", out)
	}
}

// TestPostgresStore runs a short session against PostgreSQL through
// --store postgres://... (skipped when PostgreSQL is unreachable, except in
// CI).
func TestPostgresStore(t *testing.T) {
	url := pgtest.Schema(t)
	pol := stProject(t)
	args := []string{"--policy", pol, "--store", url}
	code, out, errs := stRun(t, `{"tool":"Bash","role":"builder","args":{"command":"git push origin main"}}`, append([]string{"check", "--session", "PG"}, args...)...)
	if code != ExitAsk {
		t.Fatalf("check on postgres: %d %s %s", code, out, errs)
	}
	code, out, _ = stRun(t, "", append([]string{"approvals", "ls", "--json"}, args...)...)
	var list []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
		t.Fatalf("approvals on postgres: %s", out)
	}
	if code, _, errs := stRun(t, "", append([]string{"approvals", "approve", list[0]["id"].(string), "--session"}, args...)...); code != 0 {
		t.Fatal(errs)
	}
	code, out, _ = stRun(t, `{"tool":"Bash","role":"builder","args":{"command":"git push origin main"}}`, append([]string{"check", "--session", "PG"}, args...)...)
	if code != ExitOK || !strings.Contains(out, "grant:") {
		t.Errorf("grant on postgres: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(pol), ".warden")); err == nil {
		t.Error("a postgres store created a SQLite file")
	}
}

func TestStoreFailsClosed(t *testing.T) {
	pol := stProject(t)
	code, out, errs := stRun(t, `{"tool":"Read","args":{"file_path":"a"}}`, "check", "--policy", pol, "--session", "S",
		"--store", "postgres://nobody:pw-secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if code != ExitError || stDecision(t, out)["decision"] != "deny" {
		t.Errorf("unreachable store: %d %s %s", code, out, errs)
	}
	if strings.Contains(errs+out, "pw-secret") {
		t.Errorf("store password printed: %s %s", out, errs)
	}
	if code, _, errs := stRun(t, "", "grants", "ls", "--policy", pol, "--store", "mysql://x"); code != ExitError || !strings.Contains(errs, "postgres://") {
		t.Errorf("unknown store scheme: %d %s", code, errs)
	}
	if code, _, errs := stRun(t, "", "grants", "ls", "--policy", filepath.Join(t.TempDir(), "nope.yaml")); code != ExitError || !strings.Contains(errs, "nope.yaml") {
		t.Errorf("missing policy: %d %s", code, errs)
	}
}
