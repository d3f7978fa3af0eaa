package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// replayPolicy lets every call through: the runs that record transcripts
// make every call happen, as a user's session without warden would.
const replayPolicy = `version: 1
default: allow
`

// replayCommands are the shell calls of a recorded session (the ones
// replay/testdata was recorded with): reads, a write, a delete.
var replayCommands = []string{"ls", "git status", "cat README.md", "echo hi > out.txt", "rm -rf build", "git log --oneline -3"}

// TestReplayLiveTranscripts runs each real host for one session of
// replayCommands, then `warden replay --json` in the project under the
// coding example, finding the host's transcript where the host keeps it
// (the sandbox's HOME, CODEX_HOME and XDG_DATA_HOME): every call is read
// back with its command, rm -rf build is denied by no-rm-rf, git status and
// git log are allowed. This proves the transcript readers against what
// today's host versions write, beside the recorded copies in
// replay/testdata (WARDEN_RECORD_TRANSCRIPTS=DIR copies them there).
func TestReplayLiveTranscripts(t *testing.T) {
	t.Parallel()
	coding, err := os.ReadFile(filepath.Join(repoRoot, "examples", "coding", "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headlessHosts {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			bin := requireHost(t, h.spec)
			e := newEnv(t)
			e.useHookd()
			e.write("warden.yaml", replayPolicy)
			e.write("README.md", "# demo\n")
			if out, err := e.shellCmd("git init -q && git add README.md && git -c user.email=a@b -c user.name=a commit -qm init && mkdir build"); err != nil {
				t.Fatalf("git: %v %s", err, out)
			}
			h.setup(e, bin)
			if out, err := e.warden("init", h.name, "--bin", wardenHookBin); err != nil {
				t.Fatalf("warden init %s: %v\n%s", h.name, err, out)
			}
			e.runCalls(h, bin, replayCommands...)
			if dir := os.Getenv("WARDEN_RECORD_TRANSCRIPTS"); dir != "" {
				record(t, e, filepath.Join(dir, h.name))
			}
			// Replay under the coding example, from the project.
			e.write("coding.yaml", string(coding))
			cmd := exec.Command(wardenBin, "replay", "--json", "--policy", "coding.yaml", "--no-audit")
			cmd.Dir = e.project
			cmd.Env = append(append([]string{}, e.vars...), "CODEX_HOME="+e.codexHome())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("warden replay: %v\n%s", err, out)
			}
			var rep struct {
				Calls int            `json:"calls"`
				Hosts map[string]int `json:"hosts"`
				Rules []struct {
					Rule     string `json:"rule"`
					Decision string `json:"decision"`
					Count    int    `json:"count"`
				} `json:"rules"`
			}
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("replay --json: %v\n%s", err, out)
			}
			by := map[string]int{}
			for _, r := range rep.Rules {
				by[r.Decision+" "+r.Rule] += r.Count
			}
			if rep.Calls != len(replayCommands) || rep.Hosts[h.name] != len(replayCommands) ||
				by["deny no-rm-rf"] != 1 || by["allow allow-git-read"] != 2 {
				t.Errorf("replay of the %s session: %d calls %v, by rule %v\n%s", h.name, rep.Calls, rep.Hosts, by, out)
			}
		})
	}
}

// record copies the host's transcript into dir, the project's folder
// written @PROJECT@, as replay/testdata keeps them. OpenCode's database is
// not text: replay/testdata/README.md says how its copy was made.
func record(t *testing.T, e *env, dir string) {
	t.Helper()
	filepath.Walk(e.root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(e.root, p)
		if strings.Contains(rel, ".claude/projects/") || strings.Contains(rel, "/sessions/") || strings.Contains(rel, "/chats/") {
			data, _ := os.ReadFile(p)
			data = []byte(strings.ReplaceAll(string(data), e.project, "@PROJECT@"))
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o644)
			t.Logf("recorded %s", rel)
		}
		return nil
	})
}
