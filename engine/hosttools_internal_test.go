package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

// otherTools are host tools that act on no file warden must see: they stay
// of kind other (destructive: the default for destructive calls decides).
var otherTools = map[string]string{
	"Skill":                   "runs a skill: its instructions and scripts are the host's",
	"skill":                   "OpenCode's skill tool: likewise",
	"activate_skill":          "Gemini CLI's skill tool: likewise",
	"Workflow":                "runs a workflow script; its scriptPath is checked as a path",
	"DeferredToolPlaceholder": "a placeholder the host never runs",
	// warden's own MCP server (warden init registers it) as each host
	// names its add_anchor: left to the default for destructive calls.
	"mcp__warden__add_anchor": "warden's add_anchor: anchors reach every later session",
	"mcp_warden_add_anchor":   "warden's add_anchor (Gemini CLI)",
	"warden_add_anchor":       "warden's add_anchor (OpenCode)",
	"mcp__warden":             "Codex's namespace of warden's MCP tools, which the model calls by their own names",
}

// TestToolTableCoversHostTools walks the tool definitions the real hosts
// send their model (captured by the e2e runs into
// policy/testdata/hosttools): every tool has a kind in the table, and every
// argument that names a file or folder is one the engine reads.
func TestToolTableCoversHostTools(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "policy", "testdata", "hosttools", "*.json"))
	if len(files) < 4 {
		t.Fatalf("captured host tools: %v (run the e2e tests with WARDEN_UPDATE_TOOLS=1)", files)
	}
	read := slices.Concat(pathKeys, patchKeys, workdirKeys[:], []string{"paths", "source", "destination", "command", "cmd", "chars", "args", "files", "file"})
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var defs map[string][]string
		if err := json.Unmarshal(data, &defs); err != nil {
			t.Fatal(err)
		}
		host := strings.TrimSuffix(filepath.Base(f), ".json")
		for tool, args := range defs {
			kind, ok := policy.BuiltinKinds[tool]
			if !ok && otherTools[tool] == "" {
				t.Errorf("%s: tool %s has no kind in policy.BuiltinKinds", host, tool)
			}
			for _, a := range args {
				l := strings.ToLower(a)
				pathish := strings.Contains(l, "path") || strings.Contains(l, "dir") || strings.Contains(l, "file") || l == "cwd" || l == "workdir"
				if pathish && !slices.Contains(read, a) && !notPaths[a] {
					t.Errorf("%s: %s (%s) takes %q, which names a file or folder, but warden does not read it", host, tool, kind, a)
				}
			}
		}
	}
}

// notPaths are argument names that mention files without naming one.
var notPaths = map[string]bool{"file_filtering_options": true, "max_matches_per_file": true, "names_only": true}
