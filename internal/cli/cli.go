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

var commands = map[string]command{}

// register adds a subcommand. Each command file registers its own commands
// from an init function, so files for different commands never collide.
func register(name, summary string, run func(ctx context.Context, env *Env) int) {
	if _, dup := commands[name]; dup {
		panic("cli: duplicate command " + name)
	}
	commands[name] = command{summary: summary, run: run}
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
