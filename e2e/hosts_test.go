package e2e

import (
	"path/filepath"
	"strings"
	"time"
)

// hostTimeout bounds one host run; the scripts here take a few seconds.
const hostTimeout = 5 * time.Minute // a bound for a hung host, with room for a loaded machine

// claudeEvents are the Claude Code hook events warden wires.
var claudeEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
	"SubagentStart", "SubagentStop", "PreCompact", "SessionEnd"}

// claudeHooks is the hooks object of .claude/settings.json (and Codex's
// hooks.json) running command for every event.
func claudeHooks(command string, events []string) map[string]any {
	hooks := map[string]any{}
	for _, ev := range events {
		entry := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 30}}}
		if ev == "PreToolUse" || ev == "PostToolUse" {
			entry["matcher"] = "*"
		}
		hooks[ev] = []any{entry}
	}
	return hooks
}

// runClaude runs Claude Code headless in the project. The project's
// .claude/settings.json must already wire the hooks.
func (e *env) runClaude(bin, prompt string) result {
	return e.run(hostTimeout, e.claudeVars(), bin, claudeArgs(prompt)...)
}

// claudeVars is the environment Claude Code runs with against the model
// server, and claudeArgs its headless arguments.
func (e *env) claudeVars() []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + e.model.URL,
		"ANTHROPIC_API_KEY=test",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}

func claudeArgs(prompt string) []string { return []string{"-p", prompt, "--output-format", "json"} }

// codexHome is the CODEX_HOME folder of the sandbox.
func (e *env) codexHome() string { return filepath.Join(e.root, "codex-home") }

// setupCodex writes CODEX_HOME/config.toml pointing at the model server.
func (e *env) setupCodex() {
	e.write(filepath.Join(e.codexHome(), "config.toml"), strings.Join([]string{
		`model = "gpt-5"`,
		`model_provider = "fake"`,
		`approval_policy = "never"`,
		`sandbox_mode = "danger-full-access"`,
		``,
		`[model_providers.fake]`,
		`name = "fake"`,
		`base_url = "` + e.model.URL + `/v1"`,
		`env_key = "FAKE_API_KEY"`,
		`wire_api = "responses"`,
		``,
		// Codex runs project hooks (.codex/hooks.json) only in trusted projects.
		`[projects."` + e.project + `"]`,
		`trust_level = "trusted"`,
		``,
	}, "\n"))
}

// setupCodexAsUser writes CODEX_HOME/config.toml as a new user has it:
// the model server, and no trust of the project or its hooks (warden init
// codex records those). CODEX_HOME goes into the sandbox's environment, so
// `warden init codex` writes the same config.
func (e *env) setupCodexAsUser() {
	e.write(filepath.Join(e.codexHome(), "config.toml"), strings.Join([]string{
		`model = "gpt-5"`,
		`model_provider = "fake"`,
		`approval_policy = "never"`,
		`sandbox_mode = "danger-full-access"`,
		``,
		`[model_providers.fake]`,
		`name = "fake"`,
		`base_url = "` + e.model.URL + `/v1"`,
		`env_key = "FAKE_API_KEY"`,
		`wire_api = "responses"`,
		``,
	}, "\n"))
	e.vars = append(e.vars, "CODEX_HOME="+e.codexHome(), "FAKE_API_KEY=test")
}

// runCodexAsUser runs codex exec as a user does: no hook-trust bypass.
func (e *env) runCodexAsUser(bin, prompt string) result {
	return e.run(hostTimeout, nil, bin, "exec", "--json", "--skip-git-repo-check", prompt)
}

func (e *env) runCodex(bin, prompt string) result {
	return e.run(hostTimeout, []string{
		"CODEX_HOME=" + e.codexHome(),
		"FAKE_API_KEY=test",
	}, bin, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", prompt)
}

// setupGemini writes the user settings Gemini CLI needs to run offline.
func (e *env) setupGemini() {
	e.writeJSON(filepath.Join(e.home, ".gemini", "settings.json"), map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
	})
}

func (e *env) runGemini(entry, prompt string) result {
	return e.run(hostTimeout, []string{
		"GOOGLE_GEMINI_BASE_URL=" + e.model.URL,
		"GEMINI_API_KEY=test",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}, "node", entry, "-m", "gemini-2.5-flash", "-p", prompt, "--output-format", "json", "--yolo")
}

// setupOpenCode writes opencode.json (a provider on the model server) and
// seeds the plugin folders so OpenCode does not stall trying to npm-install
// @opencode-ai/plugin offline.
func (e *env) setupOpenCode() {
	e.writeJSON("opencode.json", map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{
			"scripted": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "scripted",
				"options": map[string]any{"baseURL": e.model.URL + "/v1", "apiKey": "test"},
				"models":  map[string]any{"model": map[string]any{"name": "model"}},
			},
		},
		"model":       "scripted/model",
		"small_model": "scripted/model",
		"autoupdate":  false,
		"share":       "disabled",
	})
	for _, dir := range []string{filepath.Join(e.project, ".opencode"), filepath.Join(e.home, ".config", "opencode")} {
		mustMkdir(e.t, filepath.Join(dir, "node_modules"))
		e.write(filepath.Join(dir, "package.json"), `{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}`+"\n")
		e.write(filepath.Join(dir, "package-lock.json"), `{"lockfileVersion":3,"packages":{"":{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}}}`+"\n")
	}
}

func (e *env) runOpenCode(bin, prompt string) result {
	return e.run(hostTimeout, []string{
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1",
	}, bin, "run", "--format", "json", prompt)
}
