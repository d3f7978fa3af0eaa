package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
	spawnlist "github.com/warden-run/warden/spawn"
)

// spawnPolicy holds sessions to a final report with the plugin "support",
// whose on-complete command asks for two follow-up sessions: one on the
// host under test, one on Gemini CLI, which report.spawn.hosts does not
// allow.
const spawnPolicy = `version: 1
report:
  plugins: [report/follow.yaml]
  spawn:
    max_depth: 1
    hosts: [claude, codex]
    timeout: 3m
`

const followPlugin = `name: support
schema:
  type: object
  properties:
    language: {type: string}
    solved: {type: boolean}
  required: [language, solved]
long_instruction: Say which language the user wrote in and whether the request was solved.
short_instruction: the user's language and whether the request was solved
on_complete:
  command: [./follow.sh]
`

// followMarker is in the follow-up's prompt, so the model server can tell
// the follow-up session's requests from the first session's.
const followMarker = "FOLLOWUP-7f3a"

const followScript = `#!/bin/sh
cat > "$(dirname "$0")/../completion.json"
echo '{"spawn": [{"host": "HOST", "prompt": "` + followMarker + `: check that the refund reached the customer."}, {"host": "gemini", "prompt": "translate the answer"}]}'
`

// followHost is a host a follow-up runs on, with its shell tool's call.
type followHost struct {
	name  string
	spec  hostSpec
	setup func(e *env)
	call  scripted.ToolCall
}

// TestSpawnFollowUp runs Claude Code, wired by `warden init claude`, with a
// report plugin whose on-complete command asks for a follow-up session on
// a host (Claude Code itself, then Codex). The first session ends with a
// valid report; warden hands it to the plugin, starts the host's headless
// mode (`claude -p`, `codex exec`: a real host, against the same model
// server) with the plugin's prompt, and refuses the request for a host the
// policy does not allow. The follow-up's session is linked to its parent
// (depth 1) by its session-start hook, its tool call is decided and
// recorded like any other (a read, which the default allows), and it
// exits 0. warden report spawns, warden report show and warden state show
// the follow-up with its parent and outcome, and the refusal with its
// reason.
func TestSpawnFollowUp(t *testing.T) {
	t.Parallel()
	for _, h := range []followHost{
		{name: "claude", spec: claudeSpec, setup: func(e *env) {},
			call: scripted.ToolCall{Name: "Bash", Args: map[string]any{"command": "ls report", "description": "list the plugin folder"}}},
		{name: "codex", spec: codexSpec, setup: func(e *env) { e.setupCodexAsUser() },
			call: scripted.ToolCall{Name: "exec_command", Args: map[string]any{"cmd": "ls report"}}},
	} {
		t.Run(h.name, func(t *testing.T) { testSpawnFollowUp(t, h) })
	}
}

func testSpawnFollowUp(t *testing.T, h followHost) {
	bin := requireHost(t, claudeSpec)
	followBin := requireHost(t, h.spec)
	isFollow := scripted.Contains(followMarker)
	e := newEnv(t,
		scripted.Turn{Name: "report", Match: scripted.All(scripted.HasTools, scripted.Not(isFollow)),
			Reply: func(q *scripted.Request) string {
				n := nonceOf(q)
				return "<warden-" + n + "-FINAL>\nThe duplicate charge is refunded.\n</warden-" + n + "-FINAL>\n" +
					"<warden-" + n + `-META plugin="support">{"language": "en", "solved": true}</warden-` + n + "-META>"
			}},
		scripted.Turn{Name: "follow-up call", Match: scripted.All(scripted.HasTools, isFollow, scripted.Not(scripted.HasToolResult)),
			ToolCalls: []scripted.ToolCall{h.call}},
		scripted.Turn{Name: "follow-up end", Match: scripted.All(scripted.HasTools, isFollow, scripted.HasToolResult),
			Text: "The refund reached the customer."},
	)
	e.write("warden.yaml", spawnPolicy)
	e.write("report/follow.yaml", followPlugin)
	e.write("report/follow.sh", strings.ReplaceAll(followScript, "HOST", h.name))
	if err := os.Chmod(filepath.Join(e.project, "report", "follow.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The follow-up runs the host's program from PATH, as on a user's
	// machine.
	h.setup(e)
	e.pathWith(h.name, followBin)
	e.initHost("claude")
	if h.name != "claude" {
		e.initHost(h.name)
	}

	r := e.runClaude(bin, "Why was I charged twice?")
	failed := false
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			failed = true
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if failed || testing.Verbose() {
			e.dump(r)
			for _, f := range []string{"report.log", "spawn"} {
				p := filepath.Join(e.project, ".warden", f)
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					logs, _ := filepath.Glob(filepath.Join(p, "*.log"))
					for _, l := range logs {
						data, _ := os.ReadFile(l)
						t.Logf("%s:\n%s", l, tail(string(data), 4000))
					}
				} else {
					data, _ := os.ReadFile(p)
					t.Logf("%s:\n%s", f, tail(string(data), 4000))
				}
			}
		}
	}()
	if r.err != nil {
		failed = true
		t.Fatalf("claude: %v", r.err)
	}

	// The follow-up runs in a process of its own, started after the first
	// session ended: wait for its end (generously, the machine may be
	// loaded).
	st := e.store()
	ctx := context.Background()
	var list []spawnlist.Spawn
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		list, _ = spawnlist.List(ctx, st, "")
		if len(list) == 2 && list[0].Status == spawnlist.Exited || len(list) == 2 && list[1].Status == spawnlist.Exited {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	rs, err := st.Reports(ctx, warden.ReportFilter{})
	if err != nil || len(rs) != 1 || rs[0].Status != warden.ReportFinal {
		failed = true
		t.Fatalf("reports: %+v %v", rs, err)
	}
	parent := rs[0].Session
	var follow, refused spawnlist.Spawn
	for _, s := range list {
		if s.Host == h.name {
			follow = s
		} else {
			refused = s
		}
	}
	check(len(list) == 2, "spawns: %+v", list)
	check(follow.Parent == parent && follow.Status == spawnlist.Exited && follow.ExitCode != nil && *follow.ExitCode == 0 &&
		follow.Child != "" && follow.Child != parent && follow.Depth == 1 && follow.Plugin == "support",
		"the follow-up: %+v", follow)
	check(refused.Host == "gemini" && refused.Status == spawnlist.Refused && refused.Parent == parent &&
		strings.Contains(refused.Reason, "host gemini is not in report.spawn.hosts"), "the refused request: %+v", refused)

	// The model got the follow-up's prompt, and the follow-up ran its turns.
	check(len(e.model.Unplayed()) == 0, "turns never played: %v", e.model.Unplayed())
	res := e.lastResults()
	check(len(res) >= 1 && strings.Contains(res[len(res)-1].Text, "follow.sh"), "the follow-up's tool call did not run: %+v", res)

	// The follow-up's session: the host's own id, linked to its parent,
	// one level deeper, governed: its call was decided and recorded.
	child, err := st.Session(ctx, follow.Child)
	check(err == nil && child.Parent == parent && child.Depth == 1 && child.Host == h.name && child.Calls >= 1,
		"the follow-up's session: %+v %v", child, err)
	calls := 0
	for _, a := range e.audit() {
		if a.Session == follow.Child && (a.Tool == "Bash" || a.Tool == "exec_command") && a.Depth == 1 && a.Decision == warden.Allow {
			calls++
		}
	}
	check(calls == 1, "%d audit records of the follow-up's shell call at depth 1, want 1", calls)

	// The plugin got the completion of the first session.
	var got map[string]any
	data, _ := os.ReadFile(filepath.Join(e.project, "completion.json"))
	check(json.Unmarshal(data, &got) == nil && got["session_id"] == parent, "on-complete input: %s", data)

	// What people see.
	out, err := e.warden("report", "spawns")
	check(err == nil && strings.Contains(out, follow.ID) && strings.Contains(out, follow.Child) && strings.Contains(out, "exited 0") &&
		strings.Contains(out, "host gemini is not in report.spawn.hosts"), "warden report spawns: %v\n%s", err, out)
	out, err = e.warden("report", "show", parent)
	check(err == nil && strings.Contains(out, "follow-up sessions:") && strings.Contains(out, follow.Child), "warden report show: %v\n%s", err, out)
	out, err = e.warden("state")
	check(err == nil && strings.Contains(out, "Follow-up sessions (started by report plugins):") && strings.Contains(out, follow.Child+" (") &&
		strings.Contains(out, parent), "warden state: %v\n%s", err, out)
	var state struct {
		Spawns []spawnlist.Spawn `json:"spawns"`
	}
	out, err = e.warden("state", "--json")
	check(err == nil && json.Unmarshal([]byte(out), &state) == nil && len(state.Spawns) == 2 && state.Spawns[0].Parent == parent,
		"warden state --json: %v\n%s", err, out)
	out, err = e.warden("state", "sessions")
	check(err == nil && strings.Contains(out, follow.Child), "warden state sessions: %v\n%s", err, out)
	var js []spawnlist.Spawn
	out, err = e.warden("report", "spawns", "--session", parent, "--json")
	check(err == nil && json.Unmarshal([]byte(out), &js) == nil && len(js) == 2, "warden report spawns --json: %v\n%s", err, out)
}
