package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
	"github.com/warden-run/warden/sandbox/confine"
)

const sandboxUsage = "[--policy FILE] [--policy-sha256 HEX] [--cwd DIR] [--required] [--explain] -- PROGRAM ARGS..."

// runSandbox runs a program confined by the policy's sandbox settings
// (docs/sandbox.md), and is also the confining child warden re-executes
// itself as.
func runSandbox(ctx context.Context, env *Env) int {
	if sandbox.IsChild(env.Args) {
		return sandbox.ChildMain(env.Args)
	}
	fs := newFlags(env, "sandbox", sandboxUsage)
	policyPath := fs.String("policy", "", "policy file (default: warden.yaml in the working folder or the nearest parent folder)")
	cwd := fs.String("cwd", "", "folder to run the program in (default: the current folder)")
	required := fs.Bool("required", false, "never run unconfined, whatever sandbox.shell says")
	digest := fs.String("policy-sha256", "", "the SHA-256 (hex) the policy file had when the command was allowed: a policy changed since makes the run refuse (a hook's rewrite passes it)")
	explain := fs.Bool("explain", false, "print the kernel's mechanisms and the confinement as JSON instead of running")
	if code := parseFlags(fs, env.Args); code >= 0 {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "warden sandbox: "+format+"\n", a...)
		return sandbox.ExitSetup
	}
	argv := fs.Args()
	if len(argv) == 0 && !*explain {
		fs.Usage()
		return ExitError
	}
	dir := *cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fail("the current folder: %v; nothing was run", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		var st os.FileInfo
		if st, err = os.Stat(dir); err == nil && !st.IsDir() {
			err = fmt.Errorf("%s is not a folder", dir)
		}
	}
	if err != nil {
		return fail("--cwd: %v; nothing was run", err)
	}
	path := *policyPath
	if path == "" {
		if path, err = policy.Find(dir); err != nil {
			return fail("%v; nothing was run", err)
		}
	}
	p, err := policy.Load(path)
	if err != nil {
		return fail("%v\nNothing was run: fix the policy (warden lint).", err)
	}
	spec, err := sandbox.FromPolicy(p, "")
	if err != nil {
		return fail("%v; nothing was run", err)
	}
	spec.Required = spec.Required || *required
	if *digest != "" && !strings.EqualFold(*digest, spec.PolicyDigest) {
		return fail("the policy %s changed after this command was allowed (the decision was made under another version of it); nothing was run. Run the command again so that warden decides it under the policy in force", p.File)
	}
	if *explain {
		k := sandbox.Probe()
		plan, perr := spec.Plan(k)
		out := map[string]any{"kernel": k, "spec": spec, "plan": plan}
		if perr != nil {
			out["error"] = perr.Error()
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		if perr != nil {
			return sandbox.ExitSetup
		}
		return ExitOK
	}
	if err := os.Chdir(dir); err != nil {
		return fail("enter %s: %v; nothing was run", dir, err)
	}
	// The small helper next to warden, when installed, is the confining
	// child: it starts faster than warden itself.
	code, plan, err := spec.Run(ctx, confine.Helper(), argv)
	for _, w := range plan.Warnings {
		fmt.Fprintf(env.Stderr, "warden sandbox: warning: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden sandbox: %v\n", err)
	}
	return code
}
