package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/sqlite"
)

// openStore opens the store that storeURL names: "" is the SQLite file
// .warden/warden.db next to the policy file policyPath (created on first
// use); postgres:// or postgresql:// selects PostgreSQL; sqlite:PATH,
// file:PATH or a plain path is a SQLite file there.
func openStore(ctx context.Context, policyPath, storeURL string) (warden.Store, error) {
	switch {
	case storeURL == "":
		if policyPath == "" {
			return nil, errors.New("open store: no policy file to put .warden/ next to; give --policy or --store")
		}
		path := DefaultStorePath(policyPath)
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		// Keep the store out of version control.
		ignore := filepath.Join(filepath.Dir(path), ".gitignore")
		if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
			os.WriteFile(ignore, []byte("# warden's store: sessions, approvals, grants, audit\n*\n"), 0o600)
		}
		return st, nil
	case strings.HasPrefix(storeURL, "postgres://"), strings.HasPrefix(storeURL, "postgresql://"):
		return postgres.Open(ctx, storeURL)
	}
	file := sqliteFile(storeURL)
	if file == "" {
		return nil, fmt.Errorf("open store: --store %q: want a SQLite file path or postgres://...", warden.RedactString(storeURL))
	}
	return sqlite.Open(ctx, file)
}

// sqliteFile is the SQLite file a --store value names (sqlite:PATH,
// file:PATH or a plain path), or "" when it names none.
func sqliteFile(storeURL string) string {
	for _, prefix := range []string{"sqlite:", "file:"} {
		if rest, ok := strings.CutPrefix(storeURL, prefix); ok {
			return strings.TrimPrefix(rest, "//")
		}
	}
	if strings.Contains(storeURL, "://") {
		return ""
	}
	return storeURL
}

// DefaultStorePath is the default store file for a policy: .warden/warden.db
// in the policy's folder, which the policy loader protects from tool calls.
func DefaultStorePath(policyPath string) string {
	abs, err := filepath.Abs(policyPath)
	if err != nil {
		abs = policyPath
	}
	return filepath.Join(filepath.Dir(abs), filepath.FromSlash(sqlite.DefaultFile))
}

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
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, err
		}
		if path, err = policy.Find(wd); err != nil {
			return nil, nil, err
		}
	}
	pol, err := policy.Load(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := openStore(ctx, pol.File, *f.store)
	if err != nil {
		return nil, nil, err
	}
	return pol, st, nil
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
