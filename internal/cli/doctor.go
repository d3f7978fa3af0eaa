package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	hostlist "github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/internal/doctor"
)

const doctorUsage = `[claude|codex|gemini|opencode] [--dir DIR] [--codex BIN]

Checks, for the host (or every host wired in the project):
  hook      warden's hook is wired into the host's project configuration
  binary    the command the host runs resolves to an executable (an absolute path
            does not depend on the host's PATH; warden-hook also needs warden)
  policy    the project's policy loads and compiles
  store     the store next to the policy opens and is writable
  host      the host will run the hook (Codex: the project and each hook trusted,
            read from Codex's own app server; Claude Code: hooks not disabled)
  deny      a synthetic event for a call the policy denies (a write to the policy
            file, which is always protected) run through the wired command comes back
            denied (it is recorded in the audit trail under session warden-doctor,
            which doctor then ends)
For hooks wired to a team's service (warden init HOST --serve URL), the service
decides, so policy and store give way to:
  service   the service answers its health check (its policy loads)
  token     this machine's agent token (WARDEN_SERVE_TOKEN, or
            ~/.config/warden/serve-token) is one the service takes, of kind agent
Exit 0 when every check passes, 1 otherwise.`

func runDoctor(ctx context.Context, env *Env) int {
	fset := newFlags(env, "doctor", doctorUsage)
	dir := fset.String("dir", ".", "project `folder`")
	codexBin := fset.String("codex", "", "the Codex `binary` to ask about hook trust (default: codex on PATH)")
	if len(env.Args) > 0 && isHelp(env.Args[0]) || len(env.Args) > 1 && isHelp(env.Args[1]) {
		fset.Usage()
		return ExitOK
	}
	pos, code := parseArgs(fset, env.Args)
	if code >= 0 {
		return code
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		return cmdError(env, "doctor", err)
	}
	var hosts []kit.Host
	switch len(pos) {
	case 0:
		for _, h := range hostlist.All() {
			if _, err := os.Stat(h.HookFile(root)); err == nil {
				hosts = append(hosts, h)
			}
		}
		if len(hosts) == 0 {
			return cmdError(env, "doctor", fmt.Errorf("no host is wired in %s: run `warden init claude|codex|gemini|opencode` first", root))
		}
	case 1:
		h, ok := hostlist.Lookup(pos[0])
		if !ok {
			return cmdError(env, "doctor", fmt.Errorf("unknown host %q (want %s)", pos[0], hostlist.Want()))
		}
		hosts = []kit.Host{h}
	default:
		return cmdError(env, "doctor", fmt.Errorf("unexpected argument %q", pos[1]))
	}
	failed := false
	for _, h := range hosts {
		checks := doctor.Host(ctx, h, root, *codexBin)
		checks = append(checks, doctor.Sandbox(ctx, root)...)
		for _, c := range checks {
			mark := "ok  "
			if !c.OK {
				mark, failed = "FAIL", true
			}
			fmt.Fprintf(env.Stdout, "%s %-8s %-7s %s\n", mark, h.Name(), c.Name, c.Text)
		}
	}
	if failed {
		fmt.Fprintln(env.Stdout, "warden doctor: a check failed: the host is not governed as it should be. Fix what FAIL says, or run `warden init HOST` again.")
		return ExitError
	}
	fmt.Fprintln(env.Stdout, "warden doctor: every check passed.")
	return ExitOK
}
