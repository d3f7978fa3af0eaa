package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/warden-run/warden/host/kit"
)

var _ kit.Host = Adapter{}

// HookFile is the project's .claude/settings.json.
func (Adapter) HookFile(root string) string { return filepath.Join(root, ".claude", "settings.json") }

// settings are the hooks in the project's settings file; timeouts are
// seconds.
func (a Adapter) settings(root string, timeout int) kit.HookSettings {
	return kit.HookSettings{File: a.HookFile(root), Host: Host, Events: Events,
		Matcher: func(ev string) string {
			switch ev {
			case PreToolUse, PostToolUse, PostToolUseFailure:
				return "*"
			}
			return ""
		},
		Timeout: func(string) int { return timeout }}
}

// Wire merges warden's hook into .claude/settings.json.
func (a Adapter) Wire(w kit.Wiring) ([]string, error) {
	return a.settings(w.Root, w.Timeout).Merge(w.Command)
}

// Unwire takes warden's hook out of .claude/settings.json.
func (a Adapter) Unwire(root string) ([]string, error) { return a.settings(root, 0).Remove() }

// MCP is the project's .mcp.json.
func (Adapter) MCP(root string) kit.MCPConfig {
	return kit.JSONServers{Path: filepath.Join(root, ".mcp.json"), Key: "mcpServers", Entry: func(bin string) any {
		return map[string]any{"type": "stdio", "command": bin, "args": []string{"mcp", "serve"}}
	}}
}

// Finish: Claude Code needs nothing more.
func (Adapter) Finish(context.Context, kit.Wiring) ([]string, []string, error) { return nil, nil, nil }

// Wired finds warden's PreToolUse hook.
func (a Adapter) Wired(root string) (string, []string, error) {
	return a.settings(root, 0).Wired(PreToolUse)
}

// Check checks that no Claude Code settings file of the project or the
// user disables hooks.
func (Adapter) Check(_ context.Context, c kit.Check) (string, error) {
	home, _ := os.UserHomeDir()
	for _, f := range []string{filepath.Join(c.Root, ".claude", "settings.json"), filepath.Join(c.Root, ".claude", "settings.local.json"),
		filepath.Join(home, ".claude", "settings.json")} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s struct {
			DisableAllHooks bool `json:"disableAllHooks"`
		}
		if json.Unmarshal(data, &s) == nil && s.DisableAllHooks {
			return "", fmt.Errorf("%s sets disableAllHooks: Claude Code runs no hook, warden's included", f)
		}
	}
	return "Claude Code's hooks are not disabled", nil
}

// Probe is a PreToolUse of Claude Code's Write tool.
func (Adapter) Probe(root, file string) []byte {
	in, _ := json.Marshal(map[string]any{"session_id": "warden-doctor", "cwd": root, "hook_event_name": PreToolUse,
		"tool_name": "Write", "tool_input": map[string]any{"file_path": file, "content": "x"}, "transcript_path": ""})
	return in
}

// Verdict reads hookSpecificOutput.permissionDecision.
func (Adapter) Verdict(answer []byte) string {
	var o Output
	if json.Unmarshal(answer, &o) != nil || o.HookSpecificOutput == nil {
		return ""
	}
	return o.HookSpecificOutput.PermissionDecision
}

// Protected: hooks, permissions and disableAllHooks (settings files),
// project MCP servers, installed plugins (which carry hooks and servers);
// and the subagents, skills and commands, which take hooks, mcpServers (a
// command started when the agent or skill runs) and inline shell (!`cmd`,
// run as the skill loads) in their frontmatter (read off Claude Code
// 2.1.328), with .claude/hooks, where settings conventionally point hook
// commands. Claude Code finds .claude/skills in the folders below the one
// it started in, so those are protected at any depth. Its worktrees under
// .claude stay writable.
func (Adapter) Protected() kit.Files {
	return kit.Files{
		Project:    []string{".claude/settings.json", ".claude/settings.local.json", ".mcp.json"},
		Home:       []string{".claude/settings.json", ".claude/settings.local.json", ".claude.json", ".claude/plugins"},
		RunFolders: []string{".claude/agents", ".claude/skills", ".claude/commands", ".claude/hooks"},
	}
}
