package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden/host/kit"
)

var _ kit.Host = Adapter{}

// HookFile is the project's .gemini/settings.json.
func (Adapter) HookFile(root string) string { return filepath.Join(root, ".gemini", "settings.json") }

// settings are the hooks in .gemini/settings.json; timeouts are
// milliseconds.
func (a Adapter) settings(root string, timeout int) kit.HookSettings {
	return kit.HookSettings{File: a.HookFile(root), Host: Host, Events: Events,
		Matcher: func(ev string) string {
			if ev == BeforeTool || ev == AfterTool {
				return "*"
			}
			return ""
		},
		Timeout: func(string) int { return timeout * 1000 }}
}

// Wire merges warden's hook into .gemini/settings.json. Interactive Gemini
// CLI prompts itself; headless runs use warden's queue.
func (a Adapter) Wire(w kit.Wiring) ([]string, error) {
	return a.settings(w.Root, w.Timeout).Merge(w.Command)
}

// Unwire takes warden's hook out of .gemini/settings.json.
func (a Adapter) Unwire(root string) ([]string, error) { return a.settings(root, 0).Remove() }

// MCP is the mcpServers of .gemini/settings.json (with the hooks).
func (Adapter) MCP(root string) kit.MCPConfig {
	return kit.JSONServers{Path: filepath.Join(root, ".gemini", "settings.json"), Key: "mcpServers", Entry: func(bin string) any {
		return map[string]any{"command": bin, "args": []string{"mcp", "serve"}}
	}}
}

// Finish fails when Gemini CLI does not trust the project: it then ignores
// the project's settings, warden's hooks included, so the project is not
// governed although the hooks are written. The error says how to trust it;
// `warden init gemini` exits non-zero.
func (Adapter) Finish(_ context.Context, w kit.Wiring) ([]string, []string, error) {
	if _, err := trusted(w.Root); err != nil {
		return nil, nil, fmt.Errorf("the hooks are written, but Gemini CLI will not run them yet: %w", err)
	}
	return nil, nil, nil
}

// Wired finds warden's BeforeTool hook.
func (a Adapter) Wired(root string) (string, []string, error) {
	return a.settings(root, 0).Wired(BeforeTool)
}

// Check checks that Gemini CLI trusts the project folder.
func (Adapter) Check(_ context.Context, c kit.Check) (string, error) { return trusted(c.Root) }

// Probe is a BeforeTool of Gemini CLI's write_file.
func (Adapter) Probe(root, file string) []byte {
	in, _ := json.Marshal(map[string]any{"session_id": "warden-doctor", "cwd": root, "hook_event_name": BeforeTool,
		"tool_name": "write_file", "tool_input": map[string]any{"file_path": file, "content": "x"}, "transcript_path": ""})
	return in
}

// Verdict reads "decision".
func (Adapter) Verdict(answer []byte) string {
	var o Output
	if json.Unmarshal(answer, &o) != nil {
		return ""
	}
	return o.Decision
}

// Protected: hooks and MCP servers (settings.json); .gemini/.env sets its
// environment (another settings file, for one); its sandbox files; the
// user's lists of trusted folders and hooks, which decide whether a
// project's own settings and hooks load; and the commands (which run
// !{cmd} as they expand), agents, skills, policies (which tools run
// without asking) and extensions (hooks, MCP servers) it runs by itself,
// at any depth (read off Gemini CLI 0.61.0). Its worktrees under .gemini
// stay writable.
func (Adapter) Protected() kit.Files {
	return kit.Files{
		Project: []string{".gemini/settings.json", ".gemini/.env", ".gemini/sandbox.bashrc", ".gemini/sandbox.Dockerfile"},
		Home:    []string{".gemini/settings.json", ".gemini/.env", ".gemini/trustedFolders.json", ".gemini/trusted_hooks.json"},
		RunFolders: []string{".gemini/commands", ".gemini/agents", ".gemini/skills", ".gemini/policies",
			".gemini/extensions"},
	}
}

// trusted checks that Gemini CLI trusts the project folder: it ignores an
// untrusted folder's .gemini/settings.json, warden's hooks included. It
// mirrors Gemini CLI 0.61's checkPathTrust: the GEMINI_CLI_TRUST_WORKSPACE
// variable, security.folderTrust.enabled in the user's settings (default
// true), then ~/.gemini/trustedFolders.json (TRUST_FOLDER: that folder and
// below; TRUST_PARENT: its parent and below; DO_NOT_TRUST), the most
// specific entry winning.
func trusted(root string) (string, error) {
	switch os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") {
	case "true":
		return "GEMINI_CLI_TRUST_WORKSPACE=true: Gemini CLI trusts the folder", nil
	case "false":
		return "", errors.New("GEMINI_CLI_TRUST_WORKSPACE=false: Gemini CLI ignores the project's settings, warden's hooks included")
	}
	home := os.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	var us struct {
		Security struct {
			FolderTrust struct {
				Enabled *bool `json:"enabled"`
			} `json:"folderTrust"`
		} `json:"security"`
	}
	if data, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json")); err == nil {
		json.Unmarshal(data, &us)
	}
	if e := us.Security.FolderTrust.Enabled; e != nil && !*e {
		return "folder trust is off in ~/.gemini/settings.json: Gemini CLI reads the project's hooks", nil
	}
	fix := fmt.Sprintf("Gemini CLI ignores an untrusted folder's .gemini/settings.json, warden's hooks included: run `gemini` in %s and trust the folder, "+
		"or add \"%s\": \"TRUST_FOLDER\" to %s (headless runs may set GEMINI_CLI_TRUST_WORKSPACE=true)", root, root, filepath.Join(home, ".gemini", "trustedFolders.json"))
	file := filepath.Join(home, ".gemini", "trustedFolders.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return "", errors.New("the folder is not trusted. " + fix)
	}
	var rules map[string]string
	if err := json.Unmarshal(data, &rules); err != nil {
		return "", fmt.Errorf("%s is not valid JSON (%v); Gemini CLI refuses to start with it", file, err)
	}
	best, level := -1, ""
	for p, l := range rules {
		base := filepath.Clean(p)
		if l == "TRUST_PARENT" {
			base = filepath.Dir(base)
		}
		if root == base || strings.HasPrefix(root, base+string(filepath.Separator)) || base == "/" {
			if len(base) > best {
				best, level = len(base), l
			}
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return "Gemini CLI trusts the folder (" + file + ")", nil
	case "DO_NOT_TRUST":
		return "", errors.New(file + " says DO_NOT_TRUST for this folder. " + fix)
	}
	return "", errors.New("the folder is not trusted. " + fix)
}
