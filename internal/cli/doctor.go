package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/warden-run/warden/engine"
	hostlist "github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
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

// doctorCheck is one finding.
type doctorCheck struct {
	name string
	ok   bool
	text string
}

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
		checks := doctorHost(ctx, h, root, *codexBin)
		for _, c := range checks {
			mark := "ok  "
			if !c.ok {
				mark, failed = "FAIL", true
			}
			fmt.Fprintf(env.Stdout, "%s %-8s %-7s %s\n", mark, h.Name(), c.name, c.text)
		}
	}
	if failed {
		fmt.Fprintln(env.Stdout, "warden doctor: a check failed: the host is not governed as it should be. Fix what FAIL says, or run `warden init HOST` again.")
		return ExitError
	}
	fmt.Fprintln(env.Stdout, "warden doctor: every check passed.")
	return ExitOK
}

// doctorHost runs the checks for one host; a check that cannot run
// because an earlier one failed is not reported.
func doctorHost(ctx context.Context, h kit.Host, root, codexBin string) []doctorCheck {
	var out []doctorCheck
	add := func(name string, err error, okText string) bool {
		if err != nil {
			out = append(out, doctorCheck{name, false, err.Error()})
			return false
		}
		out = append(out, doctorCheck{name, true, okText})
		return true
	}
	// hook: the wired command.
	file := h.HookFile(root)
	command, argv, err := h.Wired(root)
	if !add("hook", err, fmt.Sprintf("%s runs `%s`", file, command)) {
		return out
	}
	// binary
	bin, err := resolveWired(argv[0])
	if err == nil && isHookClient(bin) {
		// warden-hook runs warden from its own folder or PATH.
		if _, e := os.Stat(filepath.Join(filepath.Dir(bin), "warden")); e != nil {
			if _, e := exec.LookPath("warden"); e != nil {
				err = fmt.Errorf("%s is there, but the warden it runs is neither next to it (%s) nor on PATH: install both (go install ./cmd/warden ./cmd/warden-hook)",
					bin, filepath.Join(filepath.Dir(bin), "warden"))
			}
		}
	}
	binOK := add("binary", err, bin+" is an executable")
	if url := wiredServe(argv); url != "" {
		// A team's service decides: no policy or store here.
		svcOK := add("service", serviceAnswers(ctx, url), url+" answers (its policy loads)")
		tokOK := svcOK && add("token", agentTokenAccepted(ctx, url), "the service takes this machine's agent token")
		hostCheck(ctx, h, root, codexBin, command, add)
		if binOK && tokOK {
			add("deny", syntheticDeny(ctx, h, root, filepath.Join(root, policy.FileName), argv),
				"a write to "+policy.FileName+" run through the wired hook was denied by the service")
		}
		return out
	}
	// policy
	var pol *policy.Policy
	var warns []policy.Finding
	f, err := policy.Find(root)
	if err == nil {
		if pol, warns, err = policy.LoadWarnings(f); err == nil {
			_, err = engine.Compile(pol, workspace.Live())
		}
	}
	polText := fmt.Sprintf("%s loads (%d rules)", f, rulesOf(pol))
	if err == nil && len(warns) > 0 {
		// A warning does not fail the check, but a rule that matches
		// nothing (a mistyped tool name) is said here, not only by lint.
		polText += fmt.Sprintf("; `warden lint` warns %d time(s), first: %s", len(warns), warns[0])
	}
	if err == nil {
		var note string
		note, err = roleCheck(pol, argv)
		polText += note
	}
	polOK := add("policy", err, polText)
	// store
	if polOK {
		add("store", storeWritable(ctx, pol), "the store next to the policy opens and is writable")
	}
	hostCheck(ctx, h, root, codexBin, command, add)
	// deny
	if binOK && polOK {
		add("deny", syntheticDeny(ctx, h, root, pol.File, argv), "a write to "+filepath.Base(pol.File)+" run through the wired hook was denied")
		endProbeSession(ctx, pol)
	}
	return out
}

// probeSession is the session of doctor's synthetic calls (kit.Host.Probe).
const probeSession = "warden-doctor"

// endProbeSession ends the session of doctor's synthetic call, so that it
// does not stay active: its deny stays in the audit trail, under that
// session, as the proof that the hook records what it decides. A store that
// does not open leaves it as it is (the store check says why).
func endProbeSession(ctx context.Context, pol *policy.Policy) {
	st, err := openStore(ctx, pol.File, "")
	if err != nil {
		return
	}
	defer st.Close()
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		return
	}
	session.New(eng, st).End(ctx, probeSession, session.Ended)
}

// hostCheck checks that the host will run the hook (kit.Host.Check).
func hostCheck(ctx context.Context, h kit.Host, root, codexBin, command string, add func(string, error, string) bool) {
	text, err := h.Check(ctx, kit.Check{Root: root, Command: command, Program: codexBin})
	add("host", err, text)
}

// wiredServe is the service a wired hook command sends its events to
// (its --serve, else WARDEN_SERVE_URL), or "".
func wiredServe(argv []string) string {
	if v := wiredFlag(argv, "serve"); v != "" {
		return v
	}
	return os.Getenv(hookd.ServeURLEnv)
}

// wiredFlag is the value of a flag of the wired hook command, or "".
func wiredFlag(argv []string, name string) string {
	for i, a := range argv {
		if (a == "--"+name || a == "-"+name) && i+1 < len(argv) {
			return argv[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// roleCheck says what the wired hook's --role means under the policy: an
// error when the policy has roles and not this one (every call is denied
// ROLE_UNKNOWN), a note when the policy has no roles (calls are decided
// without role restrictions), else "".
func roleCheck(pol *policy.Policy, argv []string) (note string, err error) {
	role := wiredFlag(argv, "role")
	switch {
	case role == "" || pol.Roles[role] != nil:
		return "", nil
	case len(pol.Roles) > 0:
		return "", fmt.Errorf("the hook runs with --role %s, which %s does not define (its roles: %s): every call is denied ROLE_UNKNOWN; fix --role (warden init HOST --role NAME) or add the role under roles:",
			role, filepath.Base(pol.File), strings.Join(sortedRoleNames(pol), ", "))
	}
	return fmt.Sprintf("; the hook runs with --role %s, but the policy defines no roles, so calls are decided without role restrictions", role), nil
}

func sortedRoleNames(pol *policy.Policy) []string {
	names := make([]string, 0, len(pol.Roles))
	for n := range pol.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// serviceAnswers checks that the service at url answers its health check.
func serviceAnswers(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/")+"/healthz", nil)
	if err != nil {
		return fmt.Errorf("the service URL %q: %v", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the warden service at %s does not answer (%v): every call is denied until it does", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return fmt.Errorf("the warden service at %s is not well (HTTP %d: %s): every call is denied until it is", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// agentTokenAccepted checks that this machine has an agent token and that
// the service at url takes it as one.
func agentTokenAccepted(ctx context.Context, url string) error {
	tok, err := hookd.ServeToken()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/")+"/v1/whoami", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the warden service at %s does not answer: %v", url, err)
	}
	defer resp.Body.Close()
	var who struct {
		Name, Kind, Error string
	}
	json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&who)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the warden service at %s refused this machine's agent token (HTTP %d: %s): make one with `warden serve token add --kind agent NAME` and set %s", url, resp.StatusCode, who.Error, hookd.ServeTokenEnv)
	}
	if who.Kind != "agent" {
		return fmt.Errorf("this machine's token is %q's %s token: hooks need an agent token (`warden serve token add --kind agent NAME`)", who.Name, who.Kind)
	}
	return nil
}

func rulesOf(p *policy.Policy) int {
	if p == nil {
		return 0
	}
	return len(p.Rules)
}

// resolveWired finds the executable a hook command names. A bare name
// depends on the host's PATH, which need not be this shell's.
func resolveWired(name string) (string, error) {
	if !strings.ContainsRune(name, filepath.Separator) {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("the hook runs %q, which is not on this PATH, so the host cannot run it either: run `warden init` again (it wires an absolute path)", name)
		}
		return p, fmt.Errorf("the hook runs %q by name: it works only where the host's PATH has %s; run `warden init` again to wire the absolute path", name, p)
	}
	st, err := os.Stat(name)
	if err != nil {
		return "", fmt.Errorf("the hook runs %s, which does not exist, so the host cannot run it (Claude Code then runs every tool unchecked): install warden again or run `warden init` with --bin", name)
	}
	if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("the hook runs %s, which is not an executable file", name)
	}
	return name, nil
}

// storeWritable opens the policy's default store and checks that it and
// its folder can be written.
func storeWritable(ctx context.Context, pol *policy.Policy) error {
	st, err := openStore(ctx, pol.File, "")
	if err != nil {
		return fmt.Errorf("open the store: %v", err)
	}
	st.Close()
	dir := filepath.Join(pol.Dir, ".warden")
	for _, p := range []string{dir, filepath.Join(dir, "warden.db")} {
		if err := syscall.Access(p, 2 /* W_OK */); err != nil {
			return fmt.Errorf("%s is not writable: %v", p, err)
		}
	}
	return nil
}

// syntheticDeny runs the wired hook command on a PreToolUse-like event
// for a write to the policy file (always protected) and checks that the
// answer is a deny.
func syntheticDeny(ctx context.Context, h kit.Host, root, target string, argv []string) error {
	in := h.Probe(root, target)
	ctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var ans any
	if err := json.Unmarshal(stdout.Bytes(), &ans); err != nil {
		return fmt.Errorf("the hook answered no JSON (%v, exit %v): %s", err, runErr, firstLines(strings.TrimSpace(stdout.String()+stderr.String()), 4))
	}
	got := h.Verdict(stdout.Bytes())
	if got != "deny" {
		return fmt.Errorf("a write to the protected policy file was answered %q, not deny: %s", got, firstLines(stdout.String(), 4))
	}
	if strings.Contains(stdout.String(), "POLICY_ERROR") || strings.Contains(stdout.String(), "could not decide") {
		return fmt.Errorf("the hook denied, but because it failed, not by the policy: %s", firstLines(stdout.String(), 4))
	}
	return nil
}

// firstLines is s cut to its first n lines.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
