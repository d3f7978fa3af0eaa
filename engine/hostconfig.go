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
//
// The same holds for the files whose contents the host runs by itself,
// beside the tool calls warden decides: Claude Code's subagents, skills
// and commands take hooks, mcpServers (a command started when the agent
// or skill runs) and inline shell (!`cmd`, run as the skill loads) in
// their frontmatter (read off Claude Code 2.1.328), and .claude/hooks is
// where settings conventionally point hook commands; Gemini CLI's
// commands run !{cmd} as they expand, and its agents, skills, policies
// (which tools run without asking), extensions (hooks, MCP servers) and
// sandbox files are its configuration too (read off Gemini CLI 0.61.0).
// Its worktrees under .gemini, like Claude Code's under .claude, stay
// writable.
var hostControl = []string{
	// Claude Code: hooks, permissions, disableAllHooks; project MCP servers;
	// what runs commands of its own.
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
	".claude/agents", ".claude/skills", ".claude/commands", ".claude/hooks",
	// Codex: hooks.json and config.toml.
	".codex",
	// Gemini CLI: hooks and MCP servers; .gemini/.env sets its environment
	// (another settings file, for one); what runs commands of its own.
	".gemini/settings.json", ".gemini/.env",
	".gemini/commands", ".gemini/agents", ".gemini/skills", ".gemini/policies", ".gemini/extensions",
	".gemini/sandbox.bashrc", ".gemini/sandbox.Dockerfile",
	// OpenCode: plugins (warden's among them) and config.
	".opencode", "opencode.json", "opencode.jsonc",
}

// homeControl are the same for the user's own configuration, relative to
// the home folder (with Claude Code's installed plugins, which carry hooks
// and servers, and Gemini CLI's lists of trusted folders and hooks, which
// decide whether a project's own settings and hooks load), and warden's
// own (the service token).
var homeControl = []string{
	".claude/settings.json", ".claude/settings.local.json", ".claude.json",
	".claude/agents", ".claude/skills", ".claude/commands", ".claude/hooks", ".claude/plugins",
	".codex", ".gemini/settings.json", ".gemini/.env",
	".gemini/commands", ".gemini/agents", ".gemini/skills", ".gemini/policies", ".gemini/extensions",
	".gemini/trustedFolders.json", ".gemini/trusted_hooks.json",
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
