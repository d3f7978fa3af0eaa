package policy

import (
	"fmt"
	"slices"
	"strings"
)

// BuiltinKinds maps the tool names of the common hosts to tool kinds
// (docs/policy.md, "Tool kinds and classes"). A policy's `tools:` section adds to it and
// overrides it. A tool in neither is of kind "other" and destructive.
var BuiltinKinds = map[string]string{
	// Claude Code
	"Bash": "shell", "Read": "read", "Write": "write", "Edit": "edit", "MultiEdit": "edit",
	"NotebookEdit": "edit", "NotebookRead": "read", "Glob": "list", "Grep": "read", "LS": "list",
	"WebFetch": "fetch", "WebSearch": "fetch", "Task": "delegate", "Agent": "delegate",
	"TodoWrite": "todo", "BashOutput": "read",
	// Skill loaders and MCP resource tools (Claude Code's Skill,
	// ListMcpResourcesTool, ReadMcpResourceTool; Gemini CLI's
	// activate_skill; OpenCode's skill) only read. (Claude Code's
	// Workflow runs a script: it stays of kind other, its scriptPath a
	// path, and it counts as a write for intents.require.)
	"Skill": "read", "ListMcpResourcesTool": "list", "ReadMcpResourceTool": "read", "activate_skill": "read",
	"skill": "read",
	// The Anthropic text editor tool (view, create, str_replace, insert,
	// undo_edit on its path) and the editors of other agent stacks.
	"str_replace_based_edit_tool": "edit", "str_replace_editor": "edit", "create_file": "write",
	// OpenCode
	"bash": "shell", "read": "read", "write": "write", "edit": "edit", "patch": "edit",
	"multiedit": "edit", "glob": "list", "grep": "read", "list": "list", "webfetch": "fetch",
	"websearch": "fetch", "task": "delegate", "todoread": "todo", "todowrite": "todo",
	// Gemini CLI
	"run_shell_command": "shell", "read_file": "read", "read_many_files": "read",
	"write_file": "write", "replace": "edit", "search_file_content": "read",
	"list_directory": "list", "web_fetch": "fetch", "google_web_search": "fetch",
	"write_todos": "todo",
	// Codex
	"shell": "shell", "exec_command": "shell", "apply_patch": "edit", "update_plan": "todo",
	"local_shell": "shell",
	"list_dir":    "list", "grep_files": "read",
	// Roo Code / Cline, and IDE agents (read_directory)
	"execute_command": "shell", "write_to_file": "write", "apply_diff": "edit",
	"delete_file": "delete", "list_files": "list", "search_files": "read",
	"select_active_intent": "intent", "insert_content": "edit", "search_and_replace": "edit",
	"replace_in_file": "edit", "new_task": "delegate", "codebase_search": "read",
	// Codex: write_stdin sends text to a running process (a shell).
	"write_stdin": "shell", "view_image": "read", "request_user_input": "todo",
	"create_goal": "todo", "get_goal": "todo", "update_goal": "todo", "multi_agent_v1": "delegate",
	// Claude Code 2.1 and Gemini CLI 0.61 (captured in policy/testdata/hosttools).
	"ListAgents": "list", "ReportFindings": "todo", "ScheduleWakeup": "todo", "ToolSearch": "read",
	"grep_search": "read", "invoke_agent": "delegate", "enter_plan_mode": "todo", "update_topic": "todo",
	"list_background_processes": "list", "read_background_output": "read",
	"read_directory": "list", "list_code_definition_names": "list",
	// the MCP filesystem server
	"filesystem.write": "write", "filesystem.edit": "edit", "edit_file": "edit",
	"writeFile": "write", "fs.writeFile": "write",
	"read_text_file": "read", "read_media_file": "read", "read_multiple_files": "read",
	"create_directory": "write", "list_directory_with_sizes": "list", "directory_tree": "list",
	"move_file": "write", "get_file_info": "read", "list_allowed_directories": "list",
	// Codex, with an MCP server configured: the servers' resources.
	"list_mcp_resources": "list", "list_mcp_resource_templates": "list", "read_mcp_resource": "read",
	// warden's own MCP server (warden mcp serve, registered as "warden" by
	// warden init) as Claude Code and Codex, Gemini CLI and OpenCode name
	// its tools. add_anchor is left to the default for destructive calls.
	"mcp__warden__select_active_intent": "intent", "mcp_warden_select_active_intent": "intent", "warden_select_active_intent": "intent",
	"mcp__warden__check_call": "read", "mcp_warden_check_call": "read", "warden_check_call": "read",
	"mcp__warden__list_anchors": "read", "mcp_warden_list_anchors": "read", "warden_list_anchors": "read",
	"mcp__warden__request_approval": "todo", "mcp_warden_request_approval": "todo", "warden_request_approval": "todo",
}

// SafeKinds are the kinds that cannot change anything. Every other kind,
// and every unknown tool, is destructive.
var SafeKinds = map[string]bool{"read": true, "list": true, "todo": true, "intent": true}

// KindOf returns the kind of a tool name under the policy: the policy's
// `tools:` section first, then the built-in table, else "other".
func (p *Policy) KindOf(tool string) string {
	if k, ok := p.Tools[tool]; ok {
		return k
	}
	if k, ok := BuiltinKinds[tool]; ok {
		return k
	}
	// An MCP tool as Claude Code names it (mcp__SERVER__TOOL): the tools of
	// the servers warden knows take their kind.
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if i := strings.Index(rest, "__"); i > 0 {
			if k, ok := MCPKinds[rest[i+2:]]; ok {
				return k
			}
		}
	}
	return "other"
}

// MCPKinds maps the tool names of the MCP servers warden knows (the
// reference filesystem server, @modelcontextprotocol/server-filesystem
// 2026.8.31) to kinds, for calls named mcp__SERVER__TOOL.
var MCPKinds = map[string]string{
	"read_file": "read", "read_text_file": "read", "read_media_file": "read", "read_multiple_files": "read",
	"write_file": "write", "edit_file": "edit", "create_directory": "write", "list_directory": "list",
	"list_directory_with_sizes": "list", "directory_tree": "list", "move_file": "write",
	"search_files": "list", "get_file_info": "read", "list_allowed_directories": "list",
}

// ToolName checks a tool name that a human gives warden (a grant, an
// approval for always): a kind (shell, write, ...), which stands for the
// tool of every host with that kind; a tool the policy or the built-in
// table names; a tool a rule or role names exactly; or an MCP tool as the
// hosts name them (mcp__SERVER__TOOL, mcp_SERVER_TOOL). Anything else is an
// error that says what to give instead, so that a slip (Bassh) is not
// stored as a grant that matches nothing.
func (p *Policy) ToolName(t string) error {
	if t == "" {
		return fmt.Errorf("no tool named: give the host's tool name (Bash, run_shell_command, Write, ...) or a kind (%s)", strings.Join(Kinds, ", "))
	}
	if IsKind(t) || strings.HasPrefix(t, "mcp_") {
		return nil
	}
	if _, ok := p.Tools[t]; ok {
		return nil
	}
	if _, ok := BuiltinKinds[t]; ok {
		return nil
	}
	for _, r := range p.Rules {
		if slices.Contains(r.Tool, t) {
			return nil
		}
	}
	for _, r := range p.Roles {
		if slices.Contains(r.Tools, t) {
			return nil
		}
	}
	msg := fmt.Sprintf("%s is neither a tool warden knows nor a kind", t)
	if near := nearTool(t); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Errorf("%s: give a kind (%s) to cover the tool of that kind on every host, or name your agent's own tool under tools: in the policy, with its kind", msg, strings.Join(Kinds, ", "))
}
