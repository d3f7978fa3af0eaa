package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	hostlist "github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/claude"
	"github.com/warden-run/warden/host/codex"
	"github.com/warden-run/warden/host/gemini"
	"github.com/warden-run/warden/host/opencode"
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

// isHookClient reports whether bin is warden-hook (the fast hook client)
// rather than warden.
func isHookClient(bin string) bool {
	return strings.HasPrefix(filepath.Base(bin), "warden-hook")
}

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
	if _, ok := hostlist.Lookup(host); !ok {
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
		changes, err := unregisterMCP(host, root)
		if err != nil {
			return cmdError(env, "init "+host+" --remove", err)
		}
		hc, err := removeWiring(host, root)
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
		cmd += " " + shellQuote(f)
	}
	// A hook answers within its own deadline (hook.Deadline) plus any wait:
	// the host's timeout leaves room for that. Codex clamps SessionEnd
	// hooks to 3 s and reports an error for a longer one.
	secs := 30 + int(wait.Seconds())
	mcpFile, _ := mcpConfig(host, root)
	_, statErr := os.Stat(mcpFile)
	var changes []string
	switch host {
	case "claude":
		changes, err = initClaudeLike(filepath.Join(root, ".claude", "settings.json"), cmd, "claude", claude.Events,
			func(string) int { return secs })
	case "codex":
		changes, err = initClaudeLike(filepath.Join(root, ".codex", "hooks.json"), cmd, "codex", codex.Events,
			func(ev string) int {
				if ev == claude.SessionEnd {
					return 3
				}
				return secs
			})
	case "gemini":
		// Interactive Gemini CLI prompts itself; headless runs use the queue.
		changes, err = initGemini(filepath.Join(root, ".gemini", "settings.json"), cmd,
			func(string) int { return secs * 1000 })
	case "opencode":
		changes, err = writeManaged(filepath.Join(root, ".opencode", "plugin", "warden.js"),
			[]byte(opencode.PluginSource(binPath, *wait, flags...)))
	}
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
			c, err := registerMCP(host, root, mcpBin, errors.Is(statErr, fs.ErrNotExist))
			changes = append(changes, c...)
			if err != nil {
				return cmdError(env, "init "+host, err)
			}
		}
	}
	if host == "codex" {
		c, err := trustCodex(ctx, *codexBin, root, cmd)
		changes = append(changes, c...)
		if err != nil {
			for _, c := range changes {
				fmt.Fprintf(env.Stdout, "warden init %s: %s\n", host, c)
			}
			return cmdError(env, "init codex", err)
		}
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
	if host == "opencode" {
		fmt.Fprintln(env.Stdout, "warden init opencode: OpenCode loads the plugin at its next start; set WARDEN_BIN to use another warden binary.")
	}
	if host == "gemini" {
		if _, err := geminiTrusted(root); err != nil {
			fmt.Fprintf(env.Stdout, "warden init gemini: %v\n", err)
		}
	}
	fmt.Fprintf(env.Stdout, "warden init %s: check the wiring with: warden doctor %s\n", host, host)
	return ExitOK
}

// shellQuote quotes a word for a hook command line when it needs it.
func shellQuote(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t'\"$\\`;&|<>*?()[]{}~#!") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// codexManual is what a user does by hand for Codex to run warden's hooks.
func codexManual(project string) string {
	return "Codex runs a project's hooks only once the project and each hook are trusted. In " + project +
		" run `codex` once, answer \"Trust this folder\" and, when it lists warden's hooks, \"Trust all and continue\"; " +
		"or run `warden init codex --codex PATH-TO-CODEX` to record the trust. `warden doctor codex` checks it."
}

// codexHooks lists warden's hooks (those that run command) as Codex sees
// them in project.
func codexHooks(srv *codex.AppServer, project, command string) ([]codex.HookEntry, error) {
	hooks, err := srv.Hooks(project)
	if err != nil {
		return nil, err
	}
	var out []codex.HookEntry
	for _, h := range hooks {
		if strings.TrimSpace(h.Command) == command {
			out = append(out, h)
		}
	}
	return out, nil
}

// trustCodex makes Codex run warden's hooks in project: it trusts the
// project and warden's hooks in the user's Codex config through Codex's
// app server, and checks that every warden hook now runs. Without a codex
// binary it says exactly what the user must do.
func trustCodex(ctx context.Context, bin, project, command string) ([]string, error) {
	manual := codexManual(project)
	if bin == "" {
		p, err := exec.LookPath("codex")
		if err != nil {
			return []string{"found no codex on PATH, so Codex does not trust warden's hooks yet. " + manual}, nil
		}
		bin = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	srv, err := codex.StartAppServer(ctx, bin, project, nil)
	if err != nil {
		return nil, fmt.Errorf("%v. %s", err, manual)
	}
	defer srv.Close()
	var changes []string
	hooks, err := codexHooks(srv, project, command)
	if err != nil {
		return nil, fmt.Errorf("%v. %s", err, manual)
	}
	if len(hooks) == 0 {
		// An untrusted project's .codex/ folder is not loaded at all.
		if err := srv.TrustProject(project); err != nil {
			return nil, fmt.Errorf("%v. %s", err, manual)
		}
		changes = append(changes, "trusted the project "+project+" in Codex's config (Codex loads .codex/hooks.json only in trusted projects)")
		if hooks, err = codexHooks(srv, project, command); err != nil {
			return changes, fmt.Errorf("%v. %s", err, manual)
		}
	}
	var untrusted []codex.HookEntry
	for _, h := range hooks {
		if !h.Runs() {
			untrusted = append(untrusted, h)
		}
	}
	if len(untrusted) > 0 {
		if err := srv.TrustHooks(untrusted); err != nil {
			return changes, fmt.Errorf("%v. %s", err, manual)
		}
		changes = append(changes, fmt.Sprintf("trusted warden's %d hooks in Codex's config (hooks.state, as Codex's own hook review does)", len(untrusted)))
		if hooks, err = codexHooks(srv, project, command); err != nil {
			return changes, fmt.Errorf("%v. %s", err, manual)
		}
	}
	if len(hooks) == 0 {
		return changes, errors.New("Codex lists none of warden's hooks for " + project + ". " + manual)
	}
	for _, h := range hooks {
		if !h.Runs() {
			return changes, fmt.Errorf("codex will not run warden's %s hook (%s, enabled=%v). %s", h.EventName, h.TrustStatus, h.Enabled, manual)
		}
	}
	return changes, nil
}

// jsonObject is a JSON object that keeps its keys in order, so that a
// merged settings file differs from the user's only where warden adds.
type jsonObject struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(data []byte) (*jsonObject, error) {
	o := &jsonObject{vals: map[string]json.RawMessage{}}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("value of %q: %w", key, err)
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	return o, nil
}

func (o *jsonObject) set(key string, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = js
	return nil
}

func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o *jsonObject) indent() ([]byte, error) {
	raw, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// mergeHooks adds command to the hooks object under each event, in the
// Claude Code / Codex / Gemini CLI shape:
//
//	{"Event": [{"matcher": "*", "hooks": [{"type": "command", "command": ...}]}]}
//
// An event that already runs exactly this command is left alone; one that
// runs warden's hook for the host in another form (warden hook HOST,
// warden-hook HOST, other flags or path) is updated in place, so that warden
// never runs twice for one event. warden's hook is removed from events it
// no longer uses. It reports the events it changed.
func mergeHooks(hooks *jsonObject, command, host string, events []string, matcher func(event string) string, timeoutFor func(event string) int) ([]string, error) {
	var added []string
	for _, ev := range events {
		var entries []any
		if raw, ok := hooks.vals[ev]; ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf(`"hooks.%s" is not a list: %w`, ev, err)
			}
		}
		timeout := timeoutFor(ev)
		switch updateCommand(entries, command, host, timeout) {
		case cmdSame:
			continue
		case cmdUpdated:
			if err := hooks.set(ev, entries); err != nil {
				return nil, err
			}
			added = append(added, ev)
			continue
		}
		hook := map[string]any{"type": "command", "command": command}
		if timeout > 0 {
			hook["timeout"] = timeout
		}
		entry := map[string]any{"hooks": []any{hook}}
		if m := matcher(ev); m != "" {
			entry = map[string]any{"matcher": m, "hooks": []any{hook}}
		}
		entries = append(entries, entry)
		if err := hooks.set(ev, entries); err != nil {
			return nil, err
		}
		added = append(added, ev)
	}
	for _, ev := range hooks.keys {
		if slices.Contains(events, ev) {
			continue
		}
		var entries []any
		if json.Unmarshal(hooks.vals[ev], &entries) != nil {
			continue // not warden's business
		}
		if kept, removed := removeCommand(entries, host); removed {
			if err := hooks.set(ev, kept); err != nil {
				return nil, err
			}
			added = append(added, ev+" (removed: warden no longer uses it)")
		}
	}
	return added, nil
}

func jsonInt(v any) int {
	f, _ := v.(float64)
	return int(f)
}

const (
	cmdMissing = iota
	cmdSame
	cmdUpdated
)

// updateCommand looks for warden's hook for host among entries and makes
// it run command.
func updateCommand(entries []any, command, host string, timeout int) int {
	for _, e := range entries {
		m, _ := e.(map[string]any)
		hs, _ := m["hooks"].([]any)
		for _, h := range hs {
			hm, _ := h.(map[string]any)
			c, _ := hm["command"].(string)
			c = strings.TrimSpace(c)
			if c == command && (timeout <= 0 || jsonInt(hm["timeout"]) == timeout) {
				return cmdSame
			}
			if c == command || isWardenHook(c, host) {
				hm["command"] = command
				if timeout > 0 {
					hm["timeout"] = timeout
				}
				return cmdUpdated
			}
		}
	}
	return cmdMissing
}

// removeCommand drops warden's hook for host from entries (and entries
// left with no hook), reporting whether there was one.
func removeCommand(entries []any, host string) ([]any, bool) {
	removed := false
	kept := entries[:0:0]
	for _, e := range entries {
		m, ok := e.(map[string]any)
		hs, _ := m["hooks"].([]any)
		if !ok || hs == nil {
			kept = append(kept, e)
			continue
		}
		var rest []any
		for _, h := range hs {
			hm, _ := h.(map[string]any)
			if c, _ := hm["command"].(string); isWardenHook(strings.TrimSpace(c), host) {
				removed = true
				continue
			}
			rest = append(rest, h)
		}
		if len(rest) == 0 {
			continue
		}
		m["hooks"] = rest
		kept = append(kept, m)
	}
	return kept, removed
}

// isWardenHook reports whether a hook command line runs warden's hook for
// host: "BIN hook HOST ..." with BIN warden, or "BIN HOST ..." with BIN
// warden-hook (a name or a path, quoted when it has spaces).
func isWardenHook(c, host string) bool {
	bin, rest := c, ""
	if strings.HasPrefix(c, "'") {
		end := strings.Index(c[1:], "' ")
		if end < 0 {
			return false
		}
		bin, rest = c[1:end+1], c[end+2:]
	} else if i := strings.IndexAny(c, " \t"); i >= 0 {
		bin, rest = c[:i], c[i+1:]
	}
	args := strings.Fields(rest)
	base := filepath.Base(bin)
	switch {
	case isHookClient(bin):
		return len(args) > 0 && args[0] == host
	case base == "warden" || strings.HasPrefix(base, "warden."):
		return len(args) > 1 && args[0] == "hook" && args[1] == host
	}
	return false
}

// initClaudeLike wires the hook into a Claude Code settings file or a
// Codex hooks.json (same shape: {"hooks": {...}}). Timeouts are seconds.
func initClaudeLike(file, command, host string, events []string, timeoutFor func(string) int) ([]string, error) {
	matcher := func(ev string) string {
		switch ev {
		case claude.PreToolUse, claude.PostToolUse, claude.PostToolUseFailure:
			return "*"
		}
		return ""
	}
	return mergeSettings(file, command, host, events, matcher, timeoutFor)
}

// initGemini wires the hook into <project>/.gemini/settings.json.
// Timeouts are milliseconds.
func initGemini(file, command string, timeoutFor func(string) int) ([]string, error) {
	matcher := func(ev string) string {
		if ev == gemini.BeforeTool || ev == gemini.AfterTool {
			return "*"
		}
		return ""
	}
	return mergeSettings(file, command, "gemini", gemini.Events, matcher, timeoutFor)
}

// mergeSettings merges the hooks into file, backing up a file it changes.
func mergeSettings(file, command, host string, events []string, matcher func(string) string, timeoutFor func(string) int) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	exists := err == nil
	settings, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it or move it away, warden will not overwrite it", file, err)
	}
	hooks := &jsonObject{vals: map[string]json.RawMessage{}}
	if raw, ok := settings.vals["hooks"]; ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf(`%s: "hooks" is not a JSON object (%v); warden will not overwrite it`, file, err)
		}
	}
	added, err := mergeHooks(hooks, command, host, events, matcher, timeoutFor)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(added) == 0 {
		return nil, nil
	}
	hj, _ := hooks.MarshalJSON()
	settings.set("hooks", json.RawMessage(hj))
	out, err := settings.indent()
	if err != nil {
		return nil, err
	}
	var changes []string
	if exists {
		bak, err := backup(file, data)
		if err != nil {
			return nil, err
		}
		changes = append(changes, "backed up "+file+" to "+bak)
	}
	if err := writeFileAtomic(file, out); err != nil {
		return nil, err
	}
	return append(changes, fmt.Sprintf("wired %q into %s for %s", command, file, strings.Join(added, ", "))), nil
}

// writeManaged writes a file warden owns (the OpenCode plugin). A file
// with other content is backed up first; the same content is left alone.
func writeManaged(file string, content []byte) ([]string, error) {
	old, err := os.ReadFile(file)
	if err == nil && bytes.Equal(old, content) {
		return nil, nil
	}
	var changes []string
	if err == nil {
		bak, err := backup(file, old)
		if err != nil {
			return nil, err
		}
		changes = append(changes, "backed up "+file+" to "+bak)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := writeFileAtomic(file, content); err != nil {
		return nil, err
	}
	return append(changes, "wrote "+file), nil
}

// backup copies data to file.warden-backup, or to a timestamped name when
// that exists already, and returns the name.
func backup(file string, data []byte) (string, error) {
	bak := file + ".warden-backup"
	if _, err := os.Stat(bak); err == nil {
		bak = file + ".warden-backup-" + time.Now().UTC().Format("20060102T150405.000000000")
	}
	if err := os.WriteFile(bak, data, 0o600); err != nil {
		return "", fmt.Errorf("back up %s: %w", file, err)
	}
	return bak, nil
}

func writeFileAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	os.Chmod(tmp.Name(), mode)
	return os.Rename(tmp.Name(), file)
}

// removeWiring takes warden's hooks out of a host's project configuration
// (`warden init HOST --remove`). Every other setting and hook stays; a
// file that held nothing but warden's hooks, and was not there before
// warden (no backup of it), is removed. A changed file is backed up first.
func removeWiring(host, root string) ([]string, error) {
	if host == "opencode" {
		file := filepath.Join(root, ".opencode", "plugin", "warden.js")
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(data, []byte("WARDEN_BIN")) {
			return nil, fmt.Errorf("%s is not warden's plugin; warden leaves it alone", file)
		}
		if err := os.Remove(file); err != nil {
			return nil, err
		}
		return []string{"removed " + file}, nil
	}
	file := map[string]string{
		"claude": filepath.Join(root, ".claude", "settings.json"),
		"codex":  filepath.Join(root, ".codex", "hooks.json"),
		"gemini": filepath.Join(root, ".gemini", "settings.json"),
	}[host]
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	settings, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it first", file, err)
	}
	raw, ok := settings.vals["hooks"]
	if !ok {
		return nil, nil
	}
	hooks, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf(`%s: "hooks" is not a JSON object (%v)`, file, err)
	}
	var events []string
	for _, ev := range slices.Clone(hooks.keys) {
		var entries []any
		if json.Unmarshal(hooks.vals[ev], &entries) != nil {
			continue
		}
		kept, removed := removeCommand(entries, host)
		if !removed {
			continue
		}
		events = append(events, ev)
		if len(kept) == 0 {
			hooks.delete(ev)
		} else if err := hooks.set(ev, kept); err != nil {
			return nil, err
		}
	}
	if len(events) == 0 {
		return nil, nil
	}
	if len(hooks.keys) == 0 {
		settings.delete("hooks")
	} else {
		hj, _ := hooks.MarshalJSON()
		settings.set("hooks", json.RawMessage(hj))
	}
	if _, err := os.Stat(file + ".warden-backup"); len(settings.keys) == 0 && errors.Is(err, fs.ErrNotExist) {
		// Only warden's hooks were in it, and warden made the file (init
		// backs up a file it changes).
		if err := os.Remove(file); err != nil {
			return nil, err
		}
		return []string{"removed " + file + " (it held only warden's hooks)"}, nil
	}
	bak, err := backup(file, data)
	if err != nil {
		return nil, err
	}
	changes := []string{"backed up " + file + " to " + bak}
	out, err := settings.indent()
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(file, out); err != nil {
		return nil, err
	}
	return append(changes, "took warden's hooks out of "+file+" ("+strings.Join(events, ", ")+"); your other settings and hooks are kept"), nil
}

func (o *jsonObject) delete(key string) {
	delete(o.vals, key)
	o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == key })
}
