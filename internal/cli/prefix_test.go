package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// severity orders decisions: allow < ask < deny.
func severity(e warden.Effect) int {
	switch e {
	case warden.Allow:
		return 0
	case warden.Ask:
		return 1
	}
	return 2
}

// prefixCorpus is what every prefix of a shipped policy is asked besides
// the policy's own tests: lines and writes that are dangerous under any
// policy.
func prefixCorpus() []*policy.Case {
	bash := func(cmd string) warden.ToolCall {
		return warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": cmd}}
	}
	var cs []*policy.Case
	for _, call := range []warden.ToolCall{
		bash("python3 evil.py"),
		bash("rm -rf /"),
		bash("curl x | sh"),
		bash("git push --force origin main"),
		bash("sudo rm x"),
		bash("chmod 777 x"),
		bash("make"),
		{Tool: "Write", Args: map[string]any{"file_path": ".git/hooks/x", "content": "x"}},
		{Tool: "Write", Args: map[string]any{"file_path": "src/app.go", "content": "x"}},
		{Tool: "Edit", Args: map[string]any{"file_path": "warden.yaml", "old_string": "a", "new_string": "b"}},
		{Tool: "Read", Args: map[string]any{"file_path": ".env"}},
		{Tool: "Read", Args: map[string]any{"file_path": "key.pem"}},
		{Tool: "Read", Args: map[string]any{"file_path": "README.md"}},
		{Tool: "WebFetch", Args: map[string]any{"url": "https://example.com"}},
		{Tool: "Task", Args: map[string]any{"prompt": "x", "subagent_type": "general-purpose"}},
		{Tool: "mcp__github__delete_repo", Args: map[string]any{"repo": "x"}},
	} {
		cs = append(cs, &policy.Case{Name: fmt.Sprint(call.Tool, call.Args), Call: call})
	}
	return cs
}

// TestPolicyPrefixesNeverMorePermissive: a shipped policy cut short (by an
// editor that crashed while writing it, a copy that stopped, a save being
// written) either fails to load, or decides no call more permissively
// (allow < ask < deny) than the whole policy. Every shipped example and
// warden init's starter policies, cut at every line end and at every byte
// of the last line, asked every test case of the policy and a corpus of
// dangerous calls. Each prefix is compiled once.
func TestPolicyPrefixesNeverMorePermissive(t *testing.T) {
	t.Parallel()
	type source struct {
		name, file string
		data       []byte
		extra      []string // case files
	}
	var sources []source
	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "warden.yaml"))
	if len(examples) == 0 {
		t.Fatal("no examples found")
	}
	for _, f := range examples {
		abs, _ := filepath.Abs(f)
		data, err := os.ReadFile(abs)
		if err != nil {
			t.Fatal(err)
		}
		var extra []string
		if tf := filepath.Join(filepath.Dir(abs), "tests.yaml"); fileExists(tf) {
			extra = append(extra, tf)
		}
		sources = append(sources, source{name: f, file: abs, data: data, extra: extra})
	}
	for _, langs := range [][]string{nil, {"go", "node", "python", "rust"}} {
		dir := t.TempDir()
		file := filepath.Join(dir, "warden.yaml")
		sources = append(sources, source{name: fmt.Sprintf("starter %v", langs), file: file, data: []byte(StarterPolicy(langs))})
	}
	for _, src := range sources {
		t.Run(filepath.Base(filepath.Dir(src.name))+"/"+src.name, func(t *testing.T) {
			t.Parallel()
			whole, err := policy.LoadBytes(src.file, src.data)
			if err != nil {
				t.Fatalf("the whole policy does not load: %v", err)
			}
			wholeEng, err := engine.Compile(whole, workspace.Live())
			if err != nil {
				t.Fatal(err)
			}
			cases := append(append([]*policy.Case(nil), whole.Tests...), prefixCorpus()...)
			for _, f := range src.extra {
				cs, _, err := policy.LoadCases(f)
				if err != nil {
					t.Fatal(err)
				}
				cases = append(cases, cs...)
			}
			want := make([]warden.Decision, len(cases))
			for i, c := range cases {
				want[i] = wholeEng.Decide(c.Call, caseSession(c)).Decision
			}
			// The cuts: after every newline, and at every byte of the last
			// line (a file cut mid-line).
			var cuts []int
			for i, b := range src.data {
				if b == '\n' && i+1 < len(src.data) {
					cuts = append(cuts, i+1)
				}
			}
			last := bytes.LastIndexByte(bytes.TrimRight(src.data, "\n"), '\n') + 1
			for i := last + 1; i < len(src.data); i++ {
				cuts = append(cuts, i)
			}
			loaded, worse := 0, 0
			for _, n := range cuts {
				prefix := src.data[:n]
				p, err := policy.LoadBytes(src.file, prefix)
				if err != nil {
					continue
				}
				eng, err := engine.Compile(p, workspace.Live())
				if err != nil {
					continue
				}
				loaded++
				for i, c := range cases {
					got := eng.Decide(c.Call, caseSession(c)).Decision
					if severity(got.Decision) < severity(want[i].Decision) {
						worse++
						line := bytes.Count(prefix, []byte("\n"))
						lastLine := prefix[bytes.LastIndexByte(bytes.TrimRight(prefix, "\n"), '\n')+1:]
						t.Errorf("cut after line %d (byte %d, ending %q): %s: %s (%s), the whole policy: %s (%s)",
							line, n, strings.TrimSpace(string(lastLine)), c.Name, got.Decision, got.Code, want[i].Decision, want[i].Code)
					}
				}
			}
			t.Logf("%d cuts, %d load, %d decisions more permissive", len(cuts), loaded, worse)
		})
	}
}

// TestCutAfterToolLineRefused: the coding example unsealed and cut just
// after the tool line of an allow rule (the cut that once allowed python3
// evil.py, which the whole policy asks about) does not load, and the error
// names the line and says to write command: "*".
func TestCutAfterToolLineRefused(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "coding", "warden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file, _ := filepath.Abs(filepath.Join("..", "..", "examples", "coding", "warden.yaml"))
	var unsealed []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(l, "sealed:") && !strings.HasPrefix(l, "end:") {
			unsealed = append(unsealed, l)
		}
	}
	cuts := 0
	for i, l := range unsealed {
		if strings.TrimSpace(l) != "tool: shell" || i < 2 || !strings.Contains(unsealed[i-1], "effect: allow") {
			continue
		}
		cuts++
		prefix := strings.Join(unsealed[:i+1], "")
		_, err := policy.LoadBytes(file, []byte(prefix))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(":%d:", i-1)) || !strings.Contains(err.Error(), `command: "*"`) {
			t.Errorf("cut after line %d (tool: shell of an allow rule): %v; want an error at the rule saying command: \"*\"", i+1, err)
		}
	}
	if cuts < 3 {
		t.Errorf("only %d allow rules of the shell found in the coding example", cuts)
	}
}
