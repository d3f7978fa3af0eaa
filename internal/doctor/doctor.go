// Package doctor holds the checks of `warden doctor`: that a host is
// wired and runs warden's hook, that the policy loads and the store is
// writable, that a synthetic call is denied through the wired command, and
// what the sandbox enforces on this machine, with a live proof. The CLI
// (internal/cli) parses the flags and prints the checks.
package doctor

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

	"github.com/warden-run/warden/client"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

// Check is one line of doctor's report: a named check, whether it passed,
// and what it found.
type Check struct {
	Name string
	OK   bool
	Text string
}

// Host runs the checks for one host (kit.Host) wired in the project at
// root; a check that cannot run because an earlier one failed is not
// reported. codexBin is the Codex binary to ask about hook trust ("":
// codex on PATH).
func Host(ctx context.Context, h kit.Host, root, codexBin string) []Check {
	var out []Check
	add := func(name string, err error, okText string) bool {
		if err != nil {
			out = append(out, Check{name, false, err.Error()})
			return false
		}
		out = append(out, Check{name, true, okText})
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
	if err == nil && kit.IsHookClient(bin) {
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
		note, err = RoleCheck(pol, argv)
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

// ProbeSession is the session of doctor's synthetic calls (kit.Host.Probe):
// `warden audit` leaves their denies out of its table by default.
const ProbeSession = "warden-doctor"

// endProbeSession ends the session of doctor's synthetic call, so that it
// does not stay active: its deny stays in the audit trail, under that
// session, as the proof that the hook records what it decides. A store that
// does not open leaves it as it is (the store check says why).
func endProbeSession(ctx context.Context, pol *policy.Policy) {
	st, err := client.OpenStore(ctx, pol.File, "")
	if err != nil {
		return
	}
	defer st.Close()
	eng, err := engine.Compile(pol, workspace.Live())
	if err != nil {
		return
	}
	session.New(eng, st).End(ctx, ProbeSession, session.Ended)
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

// RoleCheck says what the wired hook's --role means under the policy: an
// error when the policy has roles and not this one (every call is denied
// ROLE_UNKNOWN), a note when the policy has no roles (calls are decided
// without role restrictions), else "".
func RoleCheck(pol *policy.Policy, argv []string) (note string, err error) {
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
	st, err := client.OpenStore(ctx, pol.File, "")
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
