package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// mcpServePolicy requires an intent for writes and denies a write outside
// its scope; everything else is allowed, so that only the intents decide.
const mcpServePolicy = `version: 1
default: allow
intents:
  require: [write, edit]
  out_of_scope: deny
`

const mcpServeIntents = `active_intents:
  - id: INT-1
    name: Documentation
    status: IN_PROGRESS
    owned_scope: ["docs/**"]
    constraints: ["Plain English, no marketing"]
    acceptance_criteria: [Every command in the docs runs as written]
`

// handshakeHost is a host with hooks whose model selects an intent through
// warden's MCP server (registered by warden init) and then writes.
type handshakeHost struct {
	name   string
	spec   hostSpec
	intent string // warden's select_active_intent as the host names it
	write  func(path string) scripted.ToolCall
	// writeTool is the write's tool as the host's hook reports it (""
	// for write(...).Name).
	writeTool string
	setup     func(e *env, bin string)
	run       func(e *env, bin, prompt string) result
}

var handshakeHosts = []handshakeHost{
	{
		name: "claude", spec: claudeSpec, intent: "mcp__warden__select_active_intent",
		write: func(path string) scripted.ToolCall {
			return scripted.ToolCall{Name: "Write", Args: map[string]any{"file_path": path, "content": "# notes\n"}}
		},
		setup: func(e *env, bin string) {},
		// claude -p starts the servers of the project's .mcp.json, where
		// warden init registered warden's.
		run: func(e *env, bin, prompt string) result { return e.runClaude(bin, prompt) },
	},
	{
		name: "gemini", spec: geminiSpec, intent: "mcp_warden_select_active_intent",
		write: func(path string) scripted.ToolCall {
			return scripted.ToolCall{Name: "write_file", Args: map[string]any{"file_path": path, "content": "# notes\n"}}
		},
		setup: func(e *env, bin string) { e.setupGemini() },
		run:   func(e *env, bin, prompt string) result { return e.runGemini(bin, prompt) },
	},
	{
		name: "opencode", spec: opencodeSpec, intent: "warden_select_active_intent",
		write: func(path string) scripted.ToolCall {
			return scripted.ToolCall{Name: "write", Args: map[string]any{"filePath": path, "content": "# notes\n"}}
		},
		setup: func(e *env, bin string) { e.setupOpenCode() },
		run:   func(e *env, bin, prompt string) result { return e.runOpenCode(bin, prompt) },
	},
	{
		// Set up as a user has it: warden init codex alone registers the
		// server in the project's .codex/config.toml and trusts the
		// project's hooks (no hook-trust bypass). Codex offers the server's
		// tools to the model in a namespace (codexNamespaces).
		name: "codex", spec: codexSpec, intent: "mcp__warden__select_active_intent",
		write: func(path string) scripted.ToolCall {
			return governedHosts[1].shell("printf '# notes\\n' > " + path)
		},
		writeTool: "Bash",
		setup: func(e *env, bin string) {
			e.setupCodexAsUser()
			e.codexNamespaces()
			e.pathWith("codex", bin)
		},
		run: func(e *env, bin, prompt string) result { return e.runCodexAsUser(bin, prompt) },
	},
}

// TestMCPServeHandshake: seed 002's handshake on real hosts. After
// `warden init HOST` (hooks and warden's MCP server), the model calls
// select_active_intent through warden's MCP server and gets the intent's
// context; the host's hook saw the call in the host's session and made
// the intent that session's, so a write inside the intent's owned scope is
// allowed and one outside it is denied with SCOPE_VIOLATION.
func TestMCPServeHandshake(t *testing.T) {
	t.Parallel()
	for _, h := range handshakeHosts {
		t.Run(h.name, func(t *testing.T) {
			bin := requireHost(t, h.spec)
			e := newEnv(t)
			inScope, outOfScope := filepath.Join(e.project, "docs", "notes.md"), filepath.Join(e.project, "src", "main.go")
			e.model.Add(
				scripted.Turn{Name: "select", Match: scripted.All(scripted.HasTools, scripted.MinToolResults(0), scripted.Not(scripted.HasToolResult)),
					Text: "Selecting the intent first.", ToolCalls: []scripted.ToolCall{{Name: h.intent, Args: map[string]any{"intent_id": "INT-1"}}}},
				scripted.Turn{Name: "write-in-scope", Match: scripted.MinToolResults(1), ToolCalls: []scripted.ToolCall{h.write(inScope)}},
				scripted.Turn{Name: "write-out-of-scope", Match: scripted.MinToolResults(2), ToolCalls: []scripted.ToolCall{h.write(outOfScope)}},
				scripted.Turn{Name: "final", Match: scripted.MinToolResults(3), Text: "Done."},
			)
			h.setup(e, bin)
			e.write("warden.yaml", mcpServePolicy)
			e.write(".orchestration/active_intents.yaml", mcpServeIntents)
			mustMkdir(t, filepath.Join(e.project, "docs"))
			mustMkdir(t, filepath.Join(e.project, "src"))
			out, err := e.warden("init", h.name, "--bin", wardenBin)
			if err != nil || !strings.Contains(out, "registered warden's MCP server") {
				t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
			}
			r := h.run(e, bin, "Write the notes.")
			fail := func(format string, args ...any) {
				t.Helper()
				e.dump(r)
				t.Fatalf(format, args...)
			}
			if r.err != nil || len(e.model.Unplayed()) > 0 {
				fail("%s: %v; unplayed turns %v", h.name, r.err, e.model.Unplayed())
			}
			res := e.lastResults()
			if len(res) < 3 {
				fail("the model got %d tool results, want 3", len(res))
			}
			if sel := res[0]; sel.IsError || !strings.Contains(sel.Text, "Intent INT-1 is now the active intent") ||
				!strings.Contains(sel.Text, "owned scope: docs/**") || !strings.Contains(sel.Text, "Every command in the docs runs as written") {
				fail("select_active_intent's result: %+v", sel)
			}
			if !e.exists("docs/notes.md") {
				fail("the write inside the intent's scope did not happen; its result: %+v", res[1])
			}
			if e.exists("src/main.go") || !strings.Contains(res[2].Text, "SCOPE_VIOLATION") {
				fail("the write outside the scope: exists %v, result %+v", e.exists("src/main.go"), res[2])
			}
			// The hook decided every call in the host's session; the
			// server decided its own tool in its session.
			var hostSession string
			var got []string
			for _, a := range e.audit() {
				if a.Host == "mcp" {
					got = append(got, "server "+a.Tool+" "+string(a.Decision))
					continue
				}
				if a.Tool == h.intent {
					hostSession = a.Session
				}
				if a.Session == hostSession && hostSession != "" {
					got = append(got, a.Tool+" "+string(a.Decision)+" "+string(a.Code))
				}
			}
			writeTool := h.writeTool
			if writeTool == "" {
				writeTool = h.write("").Name
			}
			want := []string{h.intent + " allow DEFAULT", "server mcp__warden__select_active_intent allow",
				writeTool + " allow DEFAULT", writeTool + " deny SCOPE_VIOLATION"}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				fail("audit:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			s, err := e.store().Session(t.Context(), hostSession)
			if err != nil || s.IntentID != "INT-1" {
				fail("the host's session %q: intent %q, %v", hostSession, s.IntentID, err)
			}
		})
	}
}
