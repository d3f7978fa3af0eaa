package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/warden-run/warden/claudecode"
	"github.com/warden-run/warden/codex"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/geminicli"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/internal/hookd"
	"github.com/warden-run/warden/opencode"
	"github.com/warden-run/warden/policy"
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
            denied (it is recorded in the audit trail under session warden-doctor)
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
	var hosts []string
	switch len(pos) {
	case 0:
		for _, h := range hook.Names() {
			if _, err := os.Stat(hostConfigFile(h, root)); err == nil {
				hosts = append(hosts, h)
			}
		}
		if len(hosts) == 0 {
			return cmdError(env, "doctor", fmt.Errorf("no host is wired in %s: run `warden init claude|codex|gemini|opencode` first", root))
		}
	case 1:
		if _, ok := hook.Lookup(pos[0]); !ok {
			return cmdError(env, "doctor", fmt.Errorf("unknown host %q (want %s)", pos[0], hook.Want()))
		}
		hosts = pos
	default:
		return cmdError(env, "doctor", fmt.Errorf("unexpected argument %q", pos[1]))
	}
	failed := false
	for _, h := range hosts {
		checks := doctorHost(ctx, h, root, *codexBin)
		checks = append(checks, doctorSandbox(ctx, root)...)
		for _, c := range checks {
			mark := "ok  "
			if !c.ok {
				mark, failed = "FAIL", true
			}
			fmt.Fprintf(env.Stdout, "%s %-8s %-7s %s\n", mark, h, c.name, c.text)
		}
	}
	if failed {
		fmt.Fprintln(env.Stdout, "warden doctor: a check failed: the host is not governed as it should be. Fix what FAIL says, or run `warden init HOST` again.")
		return ExitError
	}
	fmt.Fprintln(env.Stdout, "warden doctor: every check passed.")
	return ExitOK
}

// hostConfigFile is where warden init wires a host.
func hostConfigFile(host, root string) string {
	switch host {
	case "claude":
		return filepath.Join(root, ".claude", "settings.json")
	case "codex":
		return filepath.Join(root, ".codex", "hooks.json")
	case "gemini":
		return filepath.Join(root, ".gemini", "settings.json")
	}
	return filepath.Join(root, ".opencode", "plugin", "warden.js")
}

// hostPreTool is the host's event before a tool, which must be wired.
var hostPreTool = map[string]string{"claude": claudecode.PreToolUse, "codex": claudecode.PreToolUse, "gemini": geminicli.BeforeTool}

// doctorHost runs the checks for one host; a check that cannot run
// because an earlier one failed is not reported.
func doctorHost(ctx context.Context, host, root, codexBin string) []doctorCheck {
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
	file := hostConfigFile(host, root)
	command, argv, err := wiredCommand(host, file)
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
		hostCheck(ctx, host, root, codexBin, command, add)
		if binOK && tokOK {
			add("deny", syntheticDeny(ctx, host, root, filepath.Join(root, policy.FileName), argv),
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
	hostCheck(ctx, host, root, codexBin, command, add)
	// deny
	if binOK && polOK {
		add("deny", syntheticDeny(ctx, host, root, pol.File, argv), "a write to "+filepath.Base(pol.File)+" run through the wired hook was denied")
	}
	return out
}

// hostCheck checks that the host will run the hook.
func hostCheck(ctx context.Context, host, root, codexBin, command string, add func(string, error, string) bool) {
	switch host {
	case "codex":
		add("host", codexTrusted(ctx, codexBin, root, command), "Codex trusts the project and every warden hook")
	case "claude":
		add("host", claudeHooksEnabled(root), "Claude Code's hooks are not disabled")
	case "gemini":
		how, err := geminiTrusted(root)
		add("host", err, how)
	case "opencode":
		add("host", nil, "OpenCode loads .opencode/plugin/*.js at start")
	}
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

// wiredCommand finds warden's hook command for host in the host's
// configuration file, and its words.
func wiredCommand(host, file string) (string, []string, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s does not exist: run `warden init %s`", file, host)
	}
	if err != nil {
		return "", nil, err
	}
	if host == "opencode" {
		m := regexp.MustCompile(`process\.env\.WARDEN_BIN \|\| ("(?:[^"\\]|\\.)*")`).FindSubmatch(data)
		a := regexp.MustCompile(`\.concat\((\[[^\]]*\])\)`).FindSubmatch(data)
		var bin string
		var args []string
		if m == nil || a == nil || json.Unmarshal(m[1], &bin) != nil || json.Unmarshal(a[1], &args) != nil {
			return "", nil, fmt.Errorf("%s is not warden's plugin (or an older one): run `warden init opencode`", file)
		}
		if w := os.Getenv("WARDEN_BIN"); w != "" {
			bin = w
		}
		argv := []string{bin}
		if !isHookClient(bin) {
			argv = append(argv, "hook")
		}
		argv = append(argv, args...)
		return strings.Join(argv, " "), argv, nil
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		return "", nil, fmt.Errorf("%s is not valid JSON: %v", file, err)
	}
	ev := hostPreTool[host]
	for _, e := range settings.Hooks[ev] {
		for _, h := range e.Hooks {
			if c := strings.TrimSpace(h.Command); isWardenHook(c, host) {
				argv, err := splitCommand(c)
				if err != nil {
					return "", nil, fmt.Errorf("%s: %s hook %q: %v", file, ev, c, err)
				}
				return c, argv, nil
			}
		}
	}
	return "", nil, fmt.Errorf("%s has no warden hook at %s, so tool calls are not governed: run `warden init %s`", file, ev, host)
}

// splitCommand splits a hook command as warden init writes it: words
// separated by spaces, a word in single quotes when it needs them.
func splitCommand(c string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(c); i++ {
		ch := c[i]
		switch {
		case quoted && ch == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(ch)
		case ch == '\'':
			quoted, inWord = true, true
		case ch == '\\' && i+1 < len(c):
			i++
			cur.WriteByte(c[i])
			inWord = true
		case ch == ' ' || ch == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote")
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, errors.New("empty command")
	}
	return out, nil
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

// codexTrusted asks Codex's app server whether it will run warden's hooks.
func codexTrusted(ctx context.Context, bin, root, command string) error {
	if bin == "" {
		p, err := exec.LookPath("codex")
		if err != nil {
			return errors.New("cannot check Codex's hook trust: no codex on PATH (pass --codex BIN). " + codexManual(root))
		}
		bin = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	srv, err := codex.StartAppServer(ctx, bin, root, nil)
	if err != nil {
		return err
	}
	defer srv.Close()
	hooks, err := codexHooks(srv, root, command)
	if err != nil {
		return err
	}
	if len(hooks) == 0 {
		return errors.New("Codex does not load .codex/hooks.json here: the project is not trusted. Run `warden init codex` (with codex on PATH) to trust it. " + codexManual(root))
	}
	var bad []string
	for _, h := range hooks {
		if !h.Runs() {
			bad = append(bad, h.EventName+" ("+h.TrustStatus+")")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the hooks Codex skips: %s. Run `warden init codex` again to trust them. %s", strings.Join(bad, ", "), codexManual(root))
	}
	return nil
}

// claudeHooksEnabled checks that no Claude Code settings file of the
// project or the user disables hooks.
func claudeHooksEnabled(root string) error {
	home, _ := os.UserHomeDir()
	for _, f := range []string{filepath.Join(root, ".claude", "settings.json"), filepath.Join(root, ".claude", "settings.local.json"),
		filepath.Join(home, ".claude", "settings.json")} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s struct {
			DisableAllHooks bool `json:"disableAllHooks"`
		}
		if json.Unmarshal(data, &s) == nil && s.DisableAllHooks {
			return fmt.Errorf("%s sets disableAllHooks: Claude Code runs no hook, warden's included", f)
		}
	}
	return nil
}

// syntheticDeny runs the wired hook command on a PreToolUse-like event
// for a write to the policy file (always protected) and checks that the
// answer is a deny.
func syntheticDeny(ctx context.Context, host, root, target string, argv []string) error {
	sid := "warden-doctor"
	var event any
	switch host {
	case "claude", "codex":
		tool, args := "Write", map[string]any{"file_path": target, "content": "x"}
		if host == "codex" {
			tool, args = "Bash", map[string]any{"command": "echo x >> " + shellQuote(target)}
		}
		event = map[string]any{"session_id": sid, "cwd": root, "hook_event_name": claudecode.PreToolUse,
			"tool_name": tool, "tool_input": args, "transcript_path": ""}
	case "gemini":
		event = map[string]any{"session_id": sid, "cwd": root, "hook_event_name": geminicli.BeforeTool,
			"tool_name": "write_file", "tool_input": map[string]any{"file_path": target, "content": "x"}, "transcript_path": ""}
	case "opencode":
		event = opencode.Input{Event: opencode.ToolBefore, SessionID: sid, Directory: root, Tool: "write",
			Args: map[string]any{"filePath": target, "content": "x"}}
	}
	in, _ := json.Marshal(event)
	ctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var ans struct {
		Decision string `json:"decision"`
		Hook     struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &ans); err != nil {
		return fmt.Errorf("the hook answered no JSON (%v, exit %v): %s", err, runErr, firstLines(strings.TrimSpace(stdout.String()+stderr.String()), 4))
	}
	got := ans.Decision
	if host == "claude" || host == "codex" {
		got = ans.Hook.PermissionDecision
	}
	if got != "deny" {
		return fmt.Errorf("a write to the protected policy file was answered %q, not deny: %s", got, firstLines(stdout.String(), 4))
	}
	if strings.Contains(stdout.String(), "POLICY_ERROR") || strings.Contains(stdout.String(), "could not decide") {
		return fmt.Errorf("the hook denied, but because it failed, not by the policy: %s", firstLines(stdout.String(), 4))
	}
	return nil
}

// geminiTrusted checks that Gemini CLI trusts the project folder: it
// ignores an untrusted folder's .gemini/settings.json, warden's hooks
// included. It mirrors Gemini CLI 0.61's checkPathTrust: the
// GEMINI_CLI_TRUST_WORKSPACE variable, security.folderTrust.enabled in the
// user's settings (default true), then ~/.gemini/trustedFolders.json
// (TRUST_FOLDER: that folder and below; TRUST_PARENT: its parent and
// below; DO_NOT_TRUST), the most specific entry winning.
func geminiTrusted(root string) (string, error) {
	switch os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") {
	case "true":
		return "GEMINI_CLI_TRUST_WORKSPACE=true: Gemini CLI trusts the folder", nil
	case "false":
		return "", errors.New("GEMINI_CLI_TRUST_WORKSPACE=false: Gemini CLI ignores the project's settings, warden's hooks included")
	}
	home := os.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	var us struct {
		Security struct {
			FolderTrust struct {
				Enabled *bool `json:"enabled"`
			} `json:"folderTrust"`
		} `json:"security"`
	}
	if data, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json")); err == nil {
		json.Unmarshal(data, &us)
	}
	if e := us.Security.FolderTrust.Enabled; e != nil && !*e {
		return "folder trust is off in ~/.gemini/settings.json: Gemini CLI reads the project's hooks", nil
	}
	fix := fmt.Sprintf("Gemini CLI ignores an untrusted folder's .gemini/settings.json, warden's hooks included: run `gemini` in %s and trust the folder, "+
		"or add \"%s\": \"TRUST_FOLDER\" to %s (headless runs may set GEMINI_CLI_TRUST_WORKSPACE=true)", root, root, filepath.Join(home, ".gemini", "trustedFolders.json"))
	file := filepath.Join(home, ".gemini", "trustedFolders.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return "", errors.New("the folder is not trusted. " + fix)
	}
	var rules map[string]string
	if err := json.Unmarshal(data, &rules); err != nil {
		return "", fmt.Errorf("%s is not valid JSON (%v); Gemini CLI refuses to start with it", file, err)
	}
	best, level := -1, ""
	for p, l := range rules {
		base := filepath.Clean(p)
		if l == "TRUST_PARENT" {
			base = filepath.Dir(base)
		}
		if root == base || strings.HasPrefix(root, base+string(filepath.Separator)) || base == "/" {
			if len(base) > best {
				best, level = len(base), l
			}
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return "Gemini CLI trusts the folder (" + file + ")", nil
	case "DO_NOT_TRUST":
		return "", errors.New(file + " says DO_NOT_TRUST for this folder. " + fix)
	}
	return "", errors.New("the folder is not trusted. " + fix)
}

// firstLines is s cut to its first n lines.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
