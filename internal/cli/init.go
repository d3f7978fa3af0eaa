package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	hostlist "github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/policy"
)

// hookCommand is the command line a host runs for warden's hook: BIN
// hook HOST, or BIN HOST when bin is warden-hook.
func hookCommand(bin, host string) string {
	sub := " hook "
	if isHookClient(bin) {
		sub = " "
	}
	if strings.ContainsAny(bin, " \t'\"$\\") {
		bin = "'" + strings.ReplaceAll(bin, "'", `'\''`) + "'"
	}
	return bin + sub + host
}

func isHookClient(bin string) bool { return kit.IsHookClient(bin) }

// resolveHookBin finds the binary the hosts run, as an absolute path: a
// host runs hooks with its own PATH, which need not have warden on it, and
// a hook command that does not resolve leaves the host ungoverned (Claude
// Code then runs every tool unchecked). bin is what the user gave (--bin:
// a path, or a name looked up on PATH); empty means warden-hook next to
// this warden, else warden-hook on PATH, else this warden, else warden on
// PATH. Finding none is an error.
func resolveHookBin(bin string) (string, error) {
	check := func(p string) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return "", fmt.Errorf("--bin %s: %w", p, err)
		}
		if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("--bin %s: not an executable file", abs)
		}
		return abs, nil
	}
	if bin != "" {
		if strings.ContainsRune(bin, filepath.Separator) {
			return check(bin)
		}
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Errorf("--bin %s: not found on PATH (give its path)", bin)
		}
		return check(p)
	}
	self, err := os.Executable()
	if err != nil || isTempBuild(self) {
		self = "" // go run: the binary is gone after this run
	}
	if self != "" {
		if p, err := check(filepath.Join(filepath.Dir(self), "warden-hook")); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("warden-hook"); err == nil {
		return check(p)
	}
	if self != "" {
		return check(self)
	}
	if p, err := exec.LookPath("warden"); err == nil {
		return check(p)
	}
	return "", errors.New("found no warden-hook or warden binary to wire (this warden runs from a temporary " +
		"`go run` build): install them with `go install ./cmd/warden ./cmd/warden-hook`, or pass --bin PATH")
}

// isTempBuild reports whether a binary is a `go run` or `go test` build in
// the temporary folder, which is removed when it exits.
func isTempBuild(p string) bool {
	return strings.Contains(p, string(filepath.Separator)+"go-build")
}

const initUsage = `claude|codex|gemini|opencode [--dir DIR] [--bin PATH] [--role ROLE] [--wait D] [--no-policy] [--serve URL]
       warden init HOST --remove [--dir DIR]

Wires warden's hook into the host's configuration in the project folder, merging with
existing settings (a changed file is backed up first; running it again changes nothing),
with the absolute path of warden-hook (or warden), so the host finds it whatever its PATH.
Writes a starter warden.yaml when the project has no policy. For Codex it also trusts the
project and warden's hooks in Codex's own config (Codex skips untrusted hooks).
It also registers warden's MCP server (warden mcp serve: select_active_intent and more) in
the host's MCP config (.mcp.json, .codex/config.toml, .gemini/settings.json, opencode.json).
--remove takes warden's hooks and server out again and keeps every other setting and hook.
--serve URL sends every event to a team's warden serve, which decides with its policy and
keeps the audit trail; the agent token comes from $WARDEN_SERVE_TOKEN or
~/.config/warden/serve-token, never from the configuration.
Run ` + "`warden doctor HOST`" + ` afterwards: it proves the wiring.`

func runInit(ctx context.Context, env *Env) int {
	fset := newFlags(env, "init", initUsage)
	dir := fset.String("dir", ".", "project `folder` to configure")
	bin := fset.String("bin", "", "`binary` the host runs: warden-hook (the fast client, the default when installed) or warden, a path or a name on PATH; wired by its absolute path")
	noPolicy := fset.Bool("no-policy", false, "do not write a starter warden.yaml when the project has none")
	wait := fset.Duration("wait", 0, "when the host cannot ask the user (codex exec, opencode run, claude -p, gemini -p): let the hook wait this `long` for a human to answer an approval (warden approvals)")
	role := fset.String("role", "", "`role` of the top-level agent (a role of the policy; subagents take their own type)")
	serveURL := fset.String("serve", "", "send every event to the warden service at this `URL` (warden serve): it decides and audits; no local policy is written")
	remove := fset.Bool("remove", false, "take warden's hooks out of the host's configuration, keeping everything else")
	codexBin := fset.String("codex", "", "codex: the Codex `binary` whose app server records the trust (default: codex on PATH)")
	noMCP := fset.Bool("no-mcp", false, "do not register warden's MCP server (warden mcp serve) in the host's MCP config")
	if len(env.Args) > 0 && (env.Args[0] == "-h" || env.Args[0] == "--help") {
		fset.Usage()
		return ExitOK
	}
	if len(env.Args) == 0 || strings.HasPrefix(env.Args[0], "-") {
		fset.Usage()
		return ExitError
	}
	host := env.Args[0]
	pos, code := parseArgs(fset, env.Args[1:])
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return cmdError(env, "init", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	h, ok := hostlist.Lookup(host)
	if !ok {
		return cmdError(env, "init", fmt.Errorf("unknown host %q (want %s)", host, hostlist.Want()))
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		return cmdError(env, "init", err)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return cmdError(env, "init", fmt.Errorf("%s is not a folder", root))
	}
	if *remove {
		// The MCP server first: Gemini CLI's settings.json holds both, and
		// a file warden made and that holds nothing else goes.
		changes, err := kit.UnregisterMCP(h.MCP(root))
		if err != nil {
			return cmdError(env, "init "+host+" --remove", err)
		}
		hc, err := h.Unwire(root)
		changes = append(changes, hc...)
		if err != nil {
			return cmdError(env, "init "+host+" --remove", err)
		}
		if len(changes) == 0 {
			fmt.Fprintf(env.Stdout, "warden init %s --remove: warden was not wired in %s; nothing changed\n", host, root)
		}
		for _, c := range changes {
			fmt.Fprintf(env.Stdout, "warden init %s --remove: %s\n", host, c)
		}
		fmt.Fprintf(env.Stdout, "warden init %s --remove: kept warden.yaml and .warden/ (the audit trail); delete them yourself if you want them gone\n", host)
		return ExitOK
	}
	if *wait < 0 || *wait > time.Hour {
		return cmdError(env, "init", fmt.Errorf("--wait %s: want between 0 and 1h", *wait))
	}
	binPath, err := resolveHookBin(*bin)
	if err != nil {
		return cmdError(env, "init "+host, err)
	}
	if *serveURL != "" && !strings.HasPrefix(*serveURL, "http://") && !strings.HasPrefix(*serveURL, "https://") {
		return cmdError(env, "init", fmt.Errorf("--serve %q: want http://HOST:PORT or https://HOST", *serveURL))
	}
	if !*noPolicy && *serveURL == "" {
		if _, ferr := policy.Find(root); ferr != nil {
			p := filepath.Join(root, policy.FileName)
			langs := detectLanguages(root)
			if err := os.WriteFile(p, []byte(StarterPolicy(langs)), 0o644); err != nil {
				return cmdError(env, "init", fmt.Errorf("write %s: %w", p, err))
			}
			what := "no language detected"
			if len(langs) > 0 {
				what = "for " + strings.Join(langs, ", ")
			}
			fmt.Fprintf(env.Stdout, "warden init %s: wrote a starter policy %s (%s; edit it: `warden lint` checks it, `warden test` runs its tests)\n", host, p, what)
		}
	}
	if *role != "" && *serveURL == "" {
		f, ferr := policy.Find(root)
		if ferr != nil {
			return cmdError(env, "init", fmt.Errorf("--role %s: %v", *role, ferr))
		}
		pol, perr := policy.Load(f)
		if perr != nil {
			return cmdError(env, "init", perr)
		}
		if pol.Roles[*role] == nil {
			return cmdError(env, "init", fmt.Errorf("--role %s: %s has no such role (add it under roles:)", *role, f))
		}
	}
	var flags []string
	if *role != "" {
		flags = append(flags, "--role", *role)
	}
	if *wait > 0 {
		flags = append(flags, "--wait", wait.String())
	}
	if *serveURL != "" {
		flags = append(flags, "--serve", *serveURL)
	}
	cmd := hookCommand(binPath, host)
	for _, f := range flags {
		cmd += " " + kit.ShellQuote(f)
	}
	// A hook answers within its own deadline (hook.Deadline) plus any wait:
	// the host's timeout leaves room for that.
	w := kit.Wiring{Root: root, Bin: binPath, Command: cmd, Flags: flags, Wait: *wait,
		Timeout: 30 + int(wait.Seconds()), Program: *codexBin}
	mcp := h.MCP(root)
	_, statErr := os.Stat(mcp.File())
	changes, err := h.Wire(w)
	if err != nil {
		return cmdError(env, "init "+host, err)
	}
	if !*noMCP && *serveURL != "" {
		// warden mcp serve decides with a policy in the project, which a
		// project the service decides for does not have: registered, it
		// would fail to start in the host.
		changes = append(changes, "warden's MCP server (warden mcp serve) is not registered: it needs a policy in the project, and here the service decides")
	}
	if !*noMCP && *serveURL == "" {
		mcpBin := binPath
		if isHookClient(binPath) {
			mcpBin, err = wardenBinary()
		}
		switch {
		case errors.Is(err, errTempBuild):
			changes = append(changes, err.Error())
		case err != nil:
			return cmdError(env, "init "+host, err)
		default:
			c, err := kit.RegisterMCP(mcp, mcpBin, errors.Is(statErr, fs.ErrNotExist))
			changes = append(changes, c...)
			if err != nil {
				return cmdError(env, "init "+host, err)
			}
		}
	}
	c, notes, err := h.Finish(ctx, w)
	changes = append(changes, c...)
	if err != nil {
		for _, c := range changes {
			fmt.Fprintf(env.Stdout, "warden init %s: %s\n", host, c)
		}
		return cmdError(env, "init "+host, err)
	}
	if len(changes) == 0 {
		fmt.Fprintf(env.Stdout, "warden init %s: already wired in %s; nothing changed\n", host, root)
	}
	if !isHookClient(binPath) {
		changes = append(changes, "the hook runs `"+cmd+"`, a full warden start per event; "+
			"install warden-hook (go install ./cmd/warden-hook) and run init again for hooks that answer in a few milliseconds")
	}
	for _, c := range changes {
		fmt.Fprintf(env.Stdout, "warden init %s: %s\n", host, c)
	}
	for _, n := range notes {
		fmt.Fprintf(env.Stdout, "warden init %s: %s\n", host, n)
	}
	fmt.Fprintf(env.Stdout, "warden init %s: check the wiring with: warden doctor %s\n", host, host)
	return ExitOK
}
