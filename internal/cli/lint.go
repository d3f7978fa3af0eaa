package cli

import (
	"context"
	"fmt"

	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

func runLint(ctx context.Context, env *Env) int {
	fs := newFlags(env, "lint", "[--policy FILE]")
	policyPath := fs.String("policy", "", "policy file (default: warden.yaml here or in the nearest parent folder)")
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	path := *policyPath
	if path == "" && fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	if path == "" {
		var err error
		if path, err = findPolicy(); err != nil {
			fmt.Fprintf(env.Stderr, "warden lint: %v\n", err)
			return ExitError
		}
	}
	p, findings, err := policy.Lint(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden lint: %v\n", err)
		return ExitError
	}
	errs, warns := 0, 0
	for _, f := range findings {
		fmt.Fprintln(env.Stdout, f.String())
		if f.Severity == policy.SevError {
			errs++
		} else {
			warns++
		}
	}
	if errs == 0 {
		if _, err := engine.Compile(p, workspace.Live()); err != nil {
			fmt.Fprintf(env.Stdout, "%s: error: %v\n", p.File, err)
			errs++
		}
	}
	fmt.Fprintf(env.Stdout, "%s: %s, %s\n", p.File, plural(errs, "error"), plural(warns, "warning"))
	if errs > 0 {
		return ExitError
	}
	return ExitOK
}

// plural is "1 error", "2 errors", "0 errors".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
