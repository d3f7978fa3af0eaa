package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// The tool definitions each real host sends its model are the truth the
// tool table (policy.BuiltinKinds and the argument names the engine reads)
// must follow. The governed runs capture them; with WARDEN_UPDATE_TOOLS=1
// they are written to policy/testdata/hosttools/HOST.json, which
// policy's TestToolTableCoversHostTools checks the table against. Without
// it, a host that offers a tool the file does not list fails here: a new
// or renamed tool is noticed. A host's tools can differ with what is
// installed beside it (Gemini CLI's grep_search takes six more arguments
// when ripgrep is on the PATH): the file holds every variant seen.

// toolDefs is a host's tools and each tool's argument names.
type toolDefs map[string][]string

func captureTools(t *testing.T, host string, reqs []*scripted.Request) {
	t.Helper()
	got := toolDefs{}
	for _, r := range reqs {
		var body map[string]any
		if json.Unmarshal(r.Body, &body) != nil {
			continue
		}
		tools, _ := body["tools"].([]any)
		for _, x := range tools {
			m, _ := x.(map[string]any)
			if m == nil {
				continue
			}
			// Anthropic: {name, input_schema}; OpenAI chat: {function:
			// {name, parameters}}; Responses: {name, parameters}; Gemini:
			// {functionDeclarations: [{name, parameters|parametersJsonSchema}]}.
			if fn, ok := m["function"].(map[string]any); ok {
				addTool(got, fn["name"], fn["parameters"])
			} else if decls, ok := m["functionDeclarations"].([]any); ok {
				for _, d := range decls {
					dm, _ := d.(map[string]any)
					if dm != nil {
						schema := dm["parameters"]
						if schema == nil {
							schema = dm["parametersJsonSchema"]
						}
						addTool(got, dm["name"], schema)
					}
				}
			} else if m["input_schema"] != nil {
				addTool(got, m["name"], m["input_schema"])
			} else {
				addTool(got, m["name"], m["parameters"])
			}
		}
	}
	if len(got) == 0 {
		t.Errorf("%s sent no tool definitions to the model", host)
		return
	}
	file := filepath.Join("..", "policy", "testdata", "hosttools", host+".json")
	if os.Getenv("WARDEN_UPDATE_TOOLS") != "" {
		data, _ := json.MarshalIndent(got, "", "  ")
		os.MkdirAll(filepath.Dir(file), 0o755)
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run the e2e tests with WARDEN_UPDATE_TOOLS=1 to capture it)", err)
	}
	var want toolDefs
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for name, args := range got {
		w, ok := want[name]
		if !ok {
			t.Errorf("%s now offers the tool %s %v, which %s does not list: add it to the tool table (policy.BuiltinKinds, and its path arguments to the engine) and capture again", host, name, args, file)
			continue
		}
		for _, a := range args {
			if !slices.Contains(w, a) {
				t.Errorf("%s's tool %s now takes the argument %q: check whether it names a path, and capture again", host, name, a)
			}
		}
	}
}

func addTool(defs toolDefs, name, schema any) {
	n, _ := name.(string)
	if n == "" {
		return
	}
	var args []string
	if s, ok := schema.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for k := range props {
			args = append(args, k)
		}
	}
	sort.Strings(args)
	defs[n] = args
}
