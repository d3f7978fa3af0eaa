package replay

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Source is one place recorded calls are read from.
type Source struct {
	Host string `json:"host"`
	Path string `json:"path"`
	// Project, for a database of many projects (OpenCode's), keeps only
	// the sessions in that folder.
	Project string `json:"project,omitempty"`
}

// Discover finds the transcripts the hosts keep of sessions in the project
// folder (or below it), under home (the user's home folder) and the
// folders env names (CODEX_HOME, XDG_DATA_HOME; env may be nil):
//   - Claude Code: ~/.claude/projects/<the folder, every character but
//     letters and digits as '-'>/*.jsonl
//   - Codex: $CODEX_HOME (default ~/.codex)/sessions/**/rollout-*.jsonl
//     whose session_meta names a folder in the project
//   - Gemini CLI: ~/.gemini/tmp/*/chats/session-*.json[l] whose
//     .project_root names a folder in the project
//   - OpenCode: $XDG_DATA_HOME (default ~/.local/share)/opencode/opencode.db,
//     its sessions in the project
func Discover(project, home string, env func(string) string) []Source {
	if env == nil {
		env = func(string) string { return "" }
	}
	var out []Source
	// Claude Code.
	esc := make([]byte, len(project))
	for i := 0; i < len(project); i++ {
		c := project[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			esc[i] = c
		} else {
			esc[i] = '-'
		}
	}
	for _, dir := range globDirs(filepath.Join(home, ".claude", "projects"), string(esc)) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range files {
			out = append(out, Source{Host: "claude", Path: f})
		}
	}
	// Codex.
	codexHome := env("CODEX_HOME")
	if codexHome == "" {
		codexHome = filepath.Join(home, ".codex")
	}
	filepath.WalkDir(filepath.Join(codexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		if within(rolloutCwd(p), project) {
			out = append(out, Source{Host: "codex", Path: p})
		}
		return nil
	})
	// Gemini CLI.
	roots, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", ".project_root"))
	for _, r := range roots {
		data, err := os.ReadFile(r)
		if err != nil || !within(strings.TrimSpace(string(data)), project) {
			continue
		}
		for _, pat := range []string{"session-*.jsonl", "session-*.json"} {
			files, _ := filepath.Glob(filepath.Join(filepath.Dir(r), "chats", pat))
			for _, f := range files {
				out = append(out, Source{Host: "gemini", Path: f})
			}
		}
	}
	// OpenCode.
	data := env("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(home, ".local", "share")
	}
	if db := filepath.Join(data, "opencode", "opencode.db"); exists(db) {
		out = append(out, Source{Host: "opencode", Path: db, Project: project})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// globDirs is the folder base/name when it exists (Claude Code's name for
// the project folder), else none.
func globDirs(base, name string) []string {
	d := filepath.Join(base, name)
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return []string{d}
	}
	return nil
}

// rolloutCwd is the folder a Codex rollout's session_meta names.
func rolloutCwd(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	if !sc.Scan() {
		return ""
	}
	line := sc.Bytes()
	var first struct {
		Type    string `json:"type"`
		Payload struct {
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &first) != nil || first.Type != "session_meta" {
		return ""
	}
	return first.Payload.Cwd
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Read reads a source.
func (s Source) Read() (Transcript, error) {
	if s.Host == "opencode" || strings.HasSuffix(s.Path, ".db") {
		return readOpenCode(s.Path, s.Project)
	}
	return ReadFile(s.Path)
}
