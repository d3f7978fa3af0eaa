package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// TestExplore runs each host with a hook that only records what it is
// given. It documents the hook payloads; run with WARDEN_E2E_EXPLORE=1 -v.
func TestExplore(t *testing.T) {
	t.Parallel()
	if os.Getenv("WARDEN_E2E_EXPLORE") == "" {
		t.Skip("set WARDEN_E2E_EXPLORE=1 to print the hosts' hook payloads")
	}
	which := os.Getenv("WARDEN_E2E_EXPLORE")
	turns := func(tool string, args map[string]any) []scripted.Turn {
		return []scripted.Turn{
			{Name: "call", Match: scripted.HasTools, Text: "I will run it.", ToolCalls: []scripted.ToolCall{{Name: tool, Args: args}}},
			{Name: "end", Match: scripted.MinToolResults(1), Text: "Finished."},
		}
	}
	capture := func(e *env) string {
		dir := filepath.Join(e.root, "captured")
		mustMkdir(t, dir)
		script := e.write(filepath.Join(e.root, "capture.sh"), "#!/bin/sh\ncat > \""+dir+"/$(date +%s%N).json\"\nexit 0\n")
		os.Chmod(script, 0o755)
		return script
	}
	show := func(e *env, r result) {
		e.dump(r)
		dir := filepath.Join(e.root, "captured")
		names, _ := filepath.Glob(dir + "/*")
		sort.Strings(names)
		for _, n := range names {
			b, _ := os.ReadFile(n)
			t.Logf("HOOK %s", b)
		}
		for i, q := range e.model.Requests() {
			if os.Getenv("WARDEN_E2E_BODIES") != "" {
				t.Logf("BODY %d: %s", i, tail(string(q.Body), 20000))
			}
		}
	}
	if which == "claude" || which == "all" {
		t.Run("claude", func(t *testing.T) {
			bin := requireHost(t, claudeSpec)
			e := newEnv(t, turns("Bash", map[string]any{"command": "rm -rf target", "description": "remove"})...)
			mustMkdir(t, filepath.Join(e.project, "target"))
			e.writeJSON(".claude/settings.json", map[string]any{"hooks": claudeHooks(capture(e), claudeEvents)})
			show(e, e.runClaude(bin, "remove the target folder"))
		})
	}
	if which == "codex" || which == "all" {
		t.Run("codex", func(t *testing.T) {
			bin := requireHost(t, codexSpec)
			e := newEnv(t, turns("exec_command", map[string]any{"cmd": "rm -rf target"})...)
			mustMkdir(t, filepath.Join(e.project, "target"))
			e.setupCodex()
			hooksFile := filepath.Join(e.codexHome(), "hooks.json")
			if os.Getenv("WARDEN_E2E_CODEX_PROJECT") != "" {
				hooksFile = filepath.Join(e.project, ".codex", "hooks.json")
				b, _ := os.ReadFile(filepath.Join(e.codexHome(), "config.toml"))
				e.write(filepath.Join(e.codexHome(), "config.toml"), string(b)+"\n[projects.\""+e.project+"\"]\ntrust_level = \"trusted\"\n")
			}
			e.writeJSON(hooksFile, map[string]any{"hooks": claudeHooks(capture(e), claudeEvents)})
			show(e, e.runCodex(bin, "remove the target folder"))
		})
	}
	if which == "gemini" || which == "all" {
		t.Run("gemini", func(t *testing.T) {
			bin := requireHost(t, geminiSpec)
			e := newEnv(t, turns("run_shell_command", map[string]any{"command": "rm -rf target", "description": "remove"})...)
			mustMkdir(t, filepath.Join(e.project, "target"))
			e.setupGemini()
			hooks := map[string]any{}
			for _, ev := range []string{"SessionStart", "BeforeAgent", "BeforeModel", "BeforeTool", "AfterTool", "PreCompress", "SessionEnd", "AfterAgent", "Notification", "BeforeToolSelection", "AfterModel"} {
				hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": capture(e)}}}}
			}
			e.writeJSON(".gemini/settings.json", map[string]any{"hooks": hooks})
			show(e, e.runGemini(bin, "remove the target folder"))
		})
	}
	if which == "opencode" || which == "all" {
		t.Run("opencode", func(t *testing.T) {
			bin := requireHost(t, opencodeSpec)
			e := newEnv(t, turns("bash", map[string]any{"command": "rm -rf target", "description": "remove"})...)
			mustMkdir(t, filepath.Join(e.project, "target"))
			e.setupOpenCode()
			dir := filepath.Join(e.root, "captured")
			mustMkdir(t, dir)
			e.write(".opencode/plugin/capture.js", `import fs from "node:fs";
let n = 0;
const log = (name, input, output) => fs.writeFileSync("`+dir+`/" + String(Date.now()) + "-" + String(n++).padStart(4,"0") + ".json",
  JSON.stringify({name, input, output}, (k, v) => (typeof v === "function" ? "[fn]" : v)).slice(0, 3000));
export const Capture = async (ctx) => { log("init", {directory: ctx.directory, worktree: ctx.worktree, keys: Object.keys(ctx)}, {}); return {
  "tool.execute.before": async (i, o) => log("tool.execute.before", i, o),
  "tool.execute.after": async (i, o) => log("tool.execute.after", i, o),
  "chat.message": async (i, o) => log("chat.message", i, o),
  "chat.params": async (i, o) => log("chat.params", i, {}),
  "permission.ask": async (i, o) => log("permission.ask", i, o),
  "experimental.chat.system.transform": async (i, o) => log("system.transform", i, o),
  "experimental.chat.messages.transform": async (i, o) => log("messages.transform", i, {n: o.messages.length}),
  "experimental.session.compacting": async (i, o) => log("session.compacting", i, o),
  event: async ({event}) => log("event", event, {}),
}};
`)
			show(e, e.runOpenCode(bin, "remove the target folder"))
		})
	}
}
