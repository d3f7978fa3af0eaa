package engine

import "path/filepath"

// repoControl are protected globs every policy has: the workspace's
// repository. git runs in it without asking (gitHere), and its config,
// hooks and commondir (where git finds the config) choose programs that
// an allowed `git status` runs; `git config` with a value is never
// allowed for the same reason. Unlike hostControl, these are the
// policy's own protected paths: audit mode records their writes.
var repoControl = []string{".git/**"}

// hostControl are the files and folders, relative to a project root, from
// which the agent hosts load their hooks, plugins, permissions and MCP
// servers: what `warden init` writes to put a host under warden, and what
// would take it out again. An agent that may edit the project may not
// edit these (docs/policy.md, `protected`): rewritten, its next session
// runs without warden's hooks, with wider permissions, or with a server
// or plugin of its choosing.
var hostControl = []string{
	// Claude Code: hooks, permissions, disableAllHooks; project MCP servers.
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
	// Codex: hooks.json and config.toml.
	".codex",
	// Gemini CLI: hooks and MCP servers; .gemini/.env sets its environment
	// (another settings file, for one).
	".gemini/settings.json", ".gemini/.env",
	// OpenCode: plugins (warden's among them) and config.
	".opencode", "opencode.json", "opencode.jsonc",
}

// homeControl are the same for the user's own configuration, relative to
// the home folder, and warden's own (the service token).
var homeControl = []string{
	".claude/settings.json", ".claude/settings.local.json", ".claude.json",
	".codex", ".gemini/settings.json", ".gemini/.env",
	".config/opencode", ".config/warden",
}

// hostControlPaths returns the absolute host configuration paths for the
// project roots and the home folder.
func hostControlPaths(roots []string, home string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(base string, rels []string) {
		if base == "" {
			return
		}
		for _, r := range rels {
			if p := filepath.Join(base, filepath.FromSlash(r)); !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	for _, r := range roots {
		add(r, hostControl)
	}
	add(home, homeControl)
	return out
}
