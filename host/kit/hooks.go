package kit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warden-run/warden/internal/cfgfile"
)

// The hook lists of Claude Code, Codex and Gemini CLI share one shape, in
// a settings file's "hooks" object:
//
//	{"Event": [{"matcher": "*", "hooks": [{"type": "command", "command": ..., "timeout": N}]}]}

// HookSettings is how a host's settings file lists hooks.
type HookSettings struct {
	File   string   // the settings file
	Host   string   // the host's name, the argument of warden's hook command
	Events []string // the events warden's hook runs at
	// Matcher is the matcher of an event's entry ("" for none).
	Matcher func(event string) string
	// Timeout is an event's timeout in the host's unit (0 for none).
	Timeout func(event string) int
}

// Merge wires command into the settings file for every event, backing up
// a file it changes. An event that already runs exactly this command is
// left alone; one that runs warden's hook for the host in another form
// (warden hook HOST, warden-hook HOST, other flags or path) is updated in
// place, so that warden never runs twice for one event. warden's hook is
// removed from events it no longer uses. It returns what it changed.
func (s HookSettings) Merge(command string) ([]string, error) {
	data, err := os.ReadFile(s.File)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	exists := err == nil
	settings, err := cfgfile.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it or move it away, warden will not overwrite it", s.File, err)
	}
	hooks := cfgfile.NewObject()
	if raw, ok := settings.Get("hooks"); ok {
		if hooks, err = cfgfile.ParseObject(raw); err != nil {
			return nil, fmt.Errorf(`%s: "hooks" is not a JSON object (%v); warden will not overwrite it`, s.File, err)
		}
	}
	added, err := s.mergeHooks(hooks, command)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	if len(added) == 0 {
		return nil, nil
	}
	settings.Set("hooks", hooks)
	out, err := settings.Indent()
	if err != nil {
		return nil, err
	}
	changes, err := cfgfile.Rewrite(s.File, data, out, exists)
	if err != nil {
		return changes, err
	}
	return append(changes, fmt.Sprintf("wired %q into %s for %s", command, s.File, strings.Join(added, ", "))), nil
}

func (s HookSettings) mergeHooks(hooks *cfgfile.Object, command string) ([]string, error) {
	var added []string
	for _, ev := range s.Events {
		var entries []any
		if raw, ok := hooks.Get(ev); ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf(`"hooks.%s" is not a list: %w`, ev, err)
			}
		}
		timeout := s.Timeout(ev)
		switch updateCommand(entries, command, s.Host, timeout) {
		case cmdSame:
			continue
		case cmdUpdated:
			if err := hooks.Set(ev, entries); err != nil {
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
		if m := s.Matcher(ev); m != "" {
			entry = map[string]any{"matcher": m, "hooks": []any{hook}}
		}
		entries = append(entries, entry)
		if err := hooks.Set(ev, entries); err != nil {
			return nil, err
		}
		added = append(added, ev)
	}
	for _, ev := range hooks.Keys() {
		if slices.Contains(s.Events, ev) {
			continue
		}
		var entries []any
		raw, _ := hooks.Get(ev)
		if json.Unmarshal(raw, &entries) != nil {
			continue // not warden's business
		}
		if kept, removed := removeCommand(entries, s.Host); removed {
			if err := hooks.Set(ev, kept); err != nil {
				return nil, err
			}
			added = append(added, ev+" (removed: warden no longer uses it)")
		}
	}
	return added, nil
}

// Remove takes warden's hooks out of the settings file. Every other
// setting and hook stays; a file that held nothing but warden's hooks, and
// was not there before warden (no backup of it), is removed. A changed
// file is backed up first.
func (s HookSettings) Remove() ([]string, error) {
	file := s.File
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	settings, err := cfgfile.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix it first", file, err)
	}
	raw, ok := settings.Get("hooks")
	if !ok {
		return nil, nil
	}
	hooks, err := cfgfile.ParseObject(raw)
	if err != nil {
		return nil, fmt.Errorf(`%s: "hooks" is not a JSON object (%v)`, file, err)
	}
	var events []string
	for _, ev := range hooks.Keys() {
		var entries []any
		raw, _ := hooks.Get(ev)
		if json.Unmarshal(raw, &entries) != nil {
			continue
		}
		kept, removed := removeCommand(entries, s.Host)
		if !removed {
			continue
		}
		events = append(events, ev)
		if len(kept) == 0 {
			hooks.Delete(ev)
		} else if err := hooks.Set(ev, kept); err != nil {
			return nil, err
		}
	}
	if len(events) == 0 {
		return nil, nil
	}
	if hooks.Len() == 0 {
		settings.Delete("hooks")
	} else {
		settings.Set("hooks", hooks)
	}
	if settings.Len() == 0 && !cfgfile.HasBackup(file) {
		// Only warden's hooks were in it, and warden made the file (init
		// backs up a file it changes).
		if err := os.Remove(file); err != nil {
			return nil, err
		}
		return []string{"removed " + file + " (it held only warden's hooks)"}, nil
	}
	out, err := settings.Indent()
	if err != nil {
		return nil, err
	}
	changes, err := cfgfile.Rewrite(file, data, out, true)
	if err != nil {
		return changes, err
	}
	return append(changes, "took warden's hooks out of "+file+" ("+strings.Join(events, ", ")+"); your other settings and hooks are kept"), nil
}

// Wired finds warden's hook command at event in the settings file, and
// its words.
func (s HookSettings) Wired(event string) (string, []string, error) {
	data, err := os.ReadFile(s.File)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s does not exist: run `warden init %s`", s.File, s.Host)
	}
	if err != nil {
		return "", nil, err
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		return "", nil, fmt.Errorf("%s is not valid JSON: %v", s.File, err)
	}
	for _, e := range settings.Hooks[event] {
		for _, h := range e.Hooks {
			if c := strings.TrimSpace(h.Command); IsWardenHook(c, s.Host) {
				argv, err := SplitCommand(c)
				if err != nil {
					return "", nil, fmt.Errorf("%s: %s hook %q: %v", s.File, event, c, err)
				}
				return c, argv, nil
			}
		}
	}
	return "", nil, fmt.Errorf("%s has no warden hook at %s, so tool calls are not governed: run `warden init %s`", s.File, event, s.Host)
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
			if c == command || IsWardenHook(c, host) {
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
			if c, _ := hm["command"].(string); IsWardenHook(strings.TrimSpace(c), host) {
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

// IsHookClient reports whether bin is warden-hook (the fast hook client)
// rather than warden.
func IsHookClient(bin string) bool {
	return strings.HasPrefix(filepath.Base(bin), "warden-hook")
}

// IsWardenHook reports whether a hook command line runs warden's hook for
// host: "BIN hook HOST ..." with BIN warden, or "BIN HOST ..." with BIN
// warden-hook (a name or a path, quoted when it has spaces).
func IsWardenHook(c, host string) bool {
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
	case IsHookClient(bin):
		return len(args) > 0 && args[0] == host
	case base == "warden" || strings.HasPrefix(base, "warden."):
		return len(args) > 1 && args[0] == "hook" && args[1] == host
	}
	return false
}

// ShellQuote quotes a word for a hook command line when it needs it.
func ShellQuote(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t'\"$\\`;&|<>*?()[]{}~#!") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// SplitCommand splits a hook command as warden init writes it: words
// separated by spaces, a word in single quotes when it needs them.
func SplitCommand(c string) ([]string, error) {
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
