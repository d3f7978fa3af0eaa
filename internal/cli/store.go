package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/policy"
)

// openStore opens the store that storeURL names (client.OpenStore).
func openStore(ctx context.Context, policyPath, storeURL string) (warden.Store, error) {
	return client.OpenStore(ctx, policyPath, storeURL)
}

// DefaultStorePath is the default store file for a policy
// (client.DefaultStorePath).
func DefaultStorePath(policyPath string) string { return client.DefaultStorePath(policyPath) }

// storeFlags are the --policy and --store flags every state command takes.
type storeFlags struct {
	policy *string
	store  *string
}

func addStoreFlags(fs *flag.FlagSet) storeFlags {
	return storeFlags{
		policy: fs.String("policy", "", "policy file (default: warden.yaml here or in the nearest parent folder)"),
		store:  fs.String("store", "", "store: a SQLite file path or postgres://... (default: .warden/warden.db next to the policy)"),
	}
}

// open loads the policy (for its limits and its folder) and opens the store.
func (f storeFlags) open(ctx context.Context) (*policy.Policy, warden.Store, error) {
	path := *f.policy
	if path == "" {
		var err error
		if path, err = findPolicyHere(); err != nil {
			return nil, nil, err
		}
	}
	pol, err := policy.LoadStable(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := openStore(ctx, pol.File, *f.store)
	if err != nil {
		return nil, nil, err
	}
	return pol, st, nil
}

// parseOpen parses a subcommand's arguments and opens the policy and the
// store; cmd names the command in errors. It returns a code >= 0 when the
// command should stop; else the caller closes st.
func (f storeFlags) parseOpen(ctx context.Context, env *Env, cmd string, fs *flag.FlagSet, args []string) (pos []string, pol *policy.Policy, st warden.Store, code int) {
	pos, code = parseArgs(fs, args)
	if code >= 0 {
		return nil, nil, nil, code
	}
	pol, st, err := f.open(ctx)
	if err != nil {
		return nil, nil, nil, cmdError(env, cmd, err)
	}
	return pos, pol, st, -1
}

// subcommandFunc runs a subcommand with its own flag set.
type subcommandFunc func(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) int

// runSubcommand runs the subcommand of cmd that env.Args names, with a
// flag set of its own; want lists the subcommands for an error.
func runSubcommand(ctx context.Context, env *Env, cmd, usage, want string, subs map[string]subcommandFunc) int {
	sub, args, code := subcommand(env, cmd, usage)
	if code >= 0 {
		return code
	}
	run, ok := subs[sub]
	if !ok {
		return cmdError(env, cmd, fmt.Errorf("unknown subcommand %q (want %s)", sub, want))
	}
	return run(ctx, env, newFlags(env, cmd+" "+sub, subUsage(cmd, sub, usage)), args)
}

// subUsage is the part of a command's usage (its first paragraph, with
// forms split by " | " or by lines) for one subcommand, without the
// subcommand's name: what `warden CMD SUB -h` prints after its name.
func subUsage(cmd, sub, usage string) string {
	head, _, _ := strings.Cut(usage, "\n\n")
	for _, line := range strings.Split(head, "\n") {
		for _, form := range splitForms(line) {
			form = strings.TrimPrefix(strings.TrimSpace(form), "warden "+cmd+" ")
			if rest, ok := strings.CutPrefix(form, sub); ok && (rest == "" || rest[0] == ' ') {
				return strings.TrimSpace(rest)
			}
		}
	}
	return "[flags]"
}

// splitForms splits a usage line at each " | " outside brackets.
func splitForms(line string) []string {
	var forms []string
	depth, start := 0, 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '|':
			if depth == 0 && i > 0 && line[i-1] == ' ' && i+1 < len(line) && line[i+1] == ' ' {
				forms = append(forms, line[start:i-1])
				start = i + 2
			}
		}
	}
	return append(forms, line[start:])
}

// parseArgs parses flags that may come before, between or after the
// positional arguments (`approve ID --always`), and returns the positional
// ones. It returns a code >= 0 when the command should stop.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, int) {
	var pos []string
	for {
		if code := parseFlags(fs, args); code >= 0 {
			return nil, code
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, -1
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), -1
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// whoami names the human answering an approval.
func whoami() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if s := os.Getenv("USER"); s != "" {
		return s
	}
	return "cli"
}

// cmdError prints an error for a command and returns ExitError.
func cmdError(env *Env, cmd string, err error) int {
	fmt.Fprintf(env.Stderr, "warden %s: %v\n", cmd, err)
	return ExitError
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// subcommand splits "warden CMD SUB args..." for commands with
// subcommands. It prints the usage and returns an exit code >= 0 when there
// is no subcommand (or help was asked for), and -1 when the command should
// go on.
func subcommand(env *Env, cmd, usage string) (sub string, args []string, code int) {
	if len(env.Args) == 0 || strings.HasPrefix(env.Args[0], "-") {
		fmt.Fprintf(env.Stderr, "Usage: warden %s %s\n", cmd, usage)
		if len(env.Args) > 0 && (env.Args[0] == "-h" || env.Args[0] == "--help") {
			return "", nil, ExitOK
		}
		return "", nil, ExitError
	}
	return env.Args[0], env.Args[1:], -1
}
