package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/warden-run/warden/claudecode"
	"github.com/warden-run/warden/codex"
	"github.com/warden-run/warden/geminicli"
	"github.com/warden-run/warden/opencode"
	"github.com/warden-run/warden/policy"
)

func init() {
	register("init", "wire warden into an agent host's configuration: warden init claude|codex|gemini|opencode", runInit)
}

// starterPolicy is written when the project has no policy yet. It loads
// with policy.Load (tested).
const starterPolicy = `# warden policy: every tool call the agents in this project make is decided here.
# Reference: POLICY.md. Check it with ` + "`warden lint`" + `.
version: 1
mode: enforce
default:
  safe: allow          # read, list, todo
  destructive: ask     # shell, write, edit, delete, fetch, ... unless a rule allows it
workspace:
  root: .
  outside: deny
protected:
  - ".git/**"
  - "**/.env"
rules:
  - id: no-rm-rf
    effect: deny
    tool: shell
    command: ["rm -rf *"]
    message: Recursive forced deletion is blocked.
    suggestion: Delete specific files, or ask the user to do it.
  - id: allow-git-read
    effect: allow
    tool: shell
    command: ["git status *", "git diff *", "git log *", "git show *"]
  - id: allow-edit-workspace
    effect: allow
    tool: [write, edit]
    path: ["**"]
`

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

// defaultHookBin is what the hosts run when init is not told: warden-hook
// when it is installed (next to this warden, or on PATH), else warden.
func defaultHookBin() string {
	if self, err := os.Executable(); err == nil {
		b := filepath.Join(filepath.Dir(self), "warden-hook")
		if st, err := os.Stat(b); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			if p, err := exec.LookPath("warden-hook"); err == nil && sameFile(p, b) {
				return "warden-hook"
			}
			return b
		}
	}
	if _, err := exec.LookPath("warden-hook"); err == nil {
		return "warden-hook"
	}
	return "warden"
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

func runInit(ctx context.Context, env *Env) int {
	fset := flag.NewFlagSet("init", flag.ContinueOnError)
	fset.SetOutput(env.Stderr)
	dir := fset.String("dir", ".", "project `folder` to configure")
	bin := fset.String("bin", "", "`command` the host runs: warden-hook (the fast client, the default when installed) or warden, a name on PATH or a path")
	noPolicy := fset.Bool("no-policy", false, "do not write a starter warden.yaml when the project has none")
	wait := fset.Duration("wait", 0, "codex, opencode, headless gemini (no prompt of their own): let the hook wait this `long` for a human to answer an approval (warden approvals)")
	fset.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: warden init claude|codex|gemini|opencode [--dir DIR] [--bin warden-hook]\n\n"+
			"Wires `warden-hook HOST` (or `warden hook HOST`) into the host's configuration in the project folder, merging\n"+
			"with existing settings (a changed file is backed up first; running it again changes nothing).\n"+
			"Writes a starter warden.yaml when the project has no policy.")
		fset.PrintDefaults()
	}
	if len(env.Args) == 0 || strings.HasPrefix(env.Args[0], "-") {
		fset.Usage()
		return ExitError
	}
	host := env.Args[0]
	if err := fset.Parse(env.Args[1:]); err != nil {
		return ExitError
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden init: %v\n", err)
		return ExitError
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		fmt.Fprintf(env.Stderr, "warden init: %s is not a folder\n", root)
		return ExitError
	}
	if *bin == "" {
		*bin = defaultHookBin()
	}
	if *wait < 0 || *wait > time.Hour {
		fmt.Fprintf(env.Stderr, "warden init: --wait %s: want between 0 and 1h\n", *wait)
		return ExitError
	}
	var changes []string
	switch host {
	case "claude":
		changes, err = initClaudeLike(filepath.Join(root, ".claude", "settings.json"), hookCommand(*bin, "claude"), "claude", claudecode.Events, 30)
	case "codex":
		cmd, timeout := hookCommand(*bin, "codex"), 30
		if *wait > 0 {
			cmd += " --wait " + wait.String()
			timeout += int(wait.Seconds())
		}
		changes, err = initClaudeLike(filepath.Join(root, ".codex", "hooks.json"), cmd, "codex", codex.Events, timeout)
	case "gemini":
		// Interactive Gemini CLI prompts itself; headless runs use the queue.
		cmd, timeout := hookCommand(*bin, "gemini"), 30000
		if *wait > 0 {
			cmd += " --wait " + wait.String()
			timeout += int(wait.Milliseconds())
		}
		changes, err = initGemini(filepath.Join(root, ".gemini", "settings.json"), cmd, timeout)
	case "opencode":
		changes, err = writeManaged(filepath.Join(root, ".opencode", "plugin", "warden.js"), []byte(opencode.PluginSource(*bin, *wait)))
	default:
		fmt.Fprintf(env.Stderr, "warden init: unknown host %q (want claude, codex, gemini or opencode)\n", host)
		return ExitError
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden init %s: %v\n", host, err)
		return ExitError
	}
	if !*noPolicy {
		if _, ferr := policy.Find(root); ferr != nil {
			p := filepath.Join(root, policy.FileName)
			if err := os.WriteFile(p, []byte(starterPolicy), 0o644); err != nil {
				fmt.Fprintf(env.Stderr, "warden init: write %s: %v\n", p, err)
				return ExitError
			}
			changes = append(changes, "wrote a starter policy "+p+" (edit it; `warden lint` checks it)")
		}
	}
	if len(changes) == 0 {
		fmt.Fprintf(env.Stdout, "warden init %s: already wired in %s; nothing changed\n", host, root)
	}
	if !isHookClient(*bin) {
		changes = append(changes, "the hook runs `"+hookCommand(*bin, host)+"`, a full warden start per event; "+
			"install warden-hook (go install ./cmd/warden-hook) and run init again for hooks that answer in a few milliseconds")
	}
	for _, c := range changes {
		fmt.Fprintf(env.Stdout, "warden init %s: %s\n", host, c)
	}
	switch host {
	case "codex":
		fmt.Fprintf(env.Stdout, "warden init codex: Codex runs project hooks only in trusted projects: trust %s when Codex asks,\n"+
			"  or add to ~/.codex/config.toml:  [projects.%q]  trust_level = \"trusted\"\n", root, root)
	case "opencode":
		fmt.Fprintln(env.Stdout, "warden init opencode: OpenCode loads the plugin at its next start; set WARDEN_BIN to use another warden binary.")
	}
	return ExitOK
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
func mergeHooks(hooks *jsonObject, command, host string, events []string, matcher func(event string) string, timeout int) ([]string, error) {
	var added []string
	for _, ev := range events {
		var entries []any
		if raw, ok := hooks.vals[ev]; ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf(`"hooks.%s" is not a list: %w`, ev, err)
			}
		}
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
			if c == command {
				return cmdSame
			}
			if isWardenHook(c, host) {
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
// Codex hooks.json (same shape: {"hooks": {...}}).
func initClaudeLike(file, command, host string, events []string, timeout int) ([]string, error) {
	matcher := func(ev string) string {
		switch ev {
		case claudecode.PreToolUse, claudecode.PostToolUse, claudecode.PostToolUseFailure:
			return "*"
		}
		return ""
	}
	// Claude Code gives a hook 60 s by default; warden answers within its
	// own 10 s deadline (plus any --wait), so 30 s is ample.
	return mergeSettings(file, command, host, events, matcher, timeout)
}

// initGemini wires the hook into <project>/.gemini/settings.json.
func initGemini(file, command string, timeout int) ([]string, error) {
	matcher := func(ev string) string {
		if ev == geminicli.BeforeTool || ev == geminicli.AfterTool {
			return "*"
		}
		return ""
	}
	// Gemini CLI hook timeouts are in milliseconds.
	return mergeSettings(file, command, "gemini", geminicli.Events, matcher, timeout)
}

// mergeSettings merges the hooks into file, backing up a file it changes.
func mergeSettings(file, command, host string, events []string, matcher func(string) string, timeout int) ([]string, error) {
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
	added, err := mergeHooks(hooks, command, host, events, matcher, timeout)
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
