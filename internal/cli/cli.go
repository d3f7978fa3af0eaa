// Package cli holds warden's subcommands and is the one place where the
// packages are wired together.
package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit codes shared by every subcommand.
const (
	ExitOK    = 0 // success; for check: allow
	ExitError = 1 // bad input, bad policy, infrastructure failure
	ExitDeny  = 2 // check: deny
	ExitAsk   = 3 // check: ask
)

// Env is what a subcommand gets to run: its arguments (without the
// subcommand name) and the process's streams.
type Env struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

type command struct {
	summary string
	run     func(ctx context.Context, env *Env) int
}

// commands is every subcommand of warden, by name: the one place that
// lists them.
var commands = map[string]command{
	"anchor":    {"add, list and remove anchors: facts that survive context compaction", runAnchor},
	"approvals": {"list and answer the calls waiting for a human (ls, approve, reject)", runApprovals},
	"audit":     {"show or export the audit trail (one record per decision)", runAudit},
	"check":     {"decide tool calls (JSON on stdin) against the policy", runCheck},
	"compile":   {"compile plain-language rules (RULES.md) into policy rules with an LLM, tested", runCompile},
	"doctor":    {"prove that warden governs a host in this project: hook wired, binary found, policy loads, store writable, host runs the hook, a denied call is denied", runDoctor},
	"explain":   {"show how the policy decides a call (JSON on stdin), part by part", runExplain},
	"grants":    {"list, add and revoke the standing approvals humans gave (ls, add, revoke)", runGrants},
	"halt":      {"stop every call of a session, or of every session of the project, until resumed", runHalt},
	"hook":      {"answer an agent host's hook on stdin: warden hook claude|codex|gemini|opencode", runHook},
	"hookd":     {"the resident hook server behind warden-hook: warden hookd [stop|status]", runHookd},
	"import":    {"turn a host's permission settings into a warden policy: warden import claude|opencode|gemini|codex FILE", runImport},
	"init":      {"wire warden into an agent host's configuration: warden init claude|codex|gemini|opencode", runInit},
	"lint":      {"check a policy file; findings name file, line and column", runLint},
	"mcp":       {"MCP: warden's own server (warden mcp serve), or govern one (warden mcp proxy -- CMD ARGS... | --upstream URL)", runMCP},
	"purge":     {"apply the retention limits: demote and delete anchors, archive history and sessions, drop expired approvals and old audit", runPurge},
	"replay":    {"decide the tool calls agents already made (the hosts' transcripts, the audit trail) against a policy, and suggest rules for the asks", runReplay},
	"report":    {"final reports: the sessions' reports, their instructions, and checks of saved responses", runReport},
	"resume":    {"lift a halt (warden halt)", runResume},
	"sandbox":   {"run a program confined by the policy: writes only in the workspace, no protected path, no private read, no network but the allowed ports", runSandbox},
	"serve":     {"serve decisions, approvals, the audit trail and the approvals page over HTTP for a team", runServe},
	"state":     {"show the project state and sessions; set the phase; session events and governance text", runState},
	"test":      {"run a policy's test cases (in the policy under tests:, or in CASES files)", runTest},
	"version":   {"print warden's version, the commit it was built from and the Go version", runVersion},
}

// Run runs warden with the given arguments (without the program name) and
// returns the process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return ExitError
		}
		return ExitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "warden: unknown command %q\n\n", args[0])
		usage(stderr)
		return ExitError
	}
	return cmd.run(ctx, &Env{Args: args[1:], Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// isHelp reports whether an argument asks for a command's usage.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("warden: a governance engine for AI agents\n\nUsage: warden <command> [flags]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun `warden <command> -h` for a command's flags.\n")
	io.WriteString(w, b.String())
}
