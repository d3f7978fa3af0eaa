package report_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/exectest"
	"github.com/warden-run/warden/report"
)

func TestLoadPlugins(t *testing.T) {
	t.Parallel()
	files, err := report.LoadPlugins("testdata", []string{"plugins/support.yaml", "plugins/sub/score.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "support" || files[1].Name != "score" {
		t.Fatalf("loaded %+v", files)
	}
	sup := files[0]
	if !strings.Contains(sup.Requirements.Instruction, "ISO\n639-1") || !strings.HasPrefix(sup.Requirements.ShortInstruction, "JSON object with language") {
		t.Errorf("instructions: %q / %q", sup.Requirements.Instruction, sup.Requirements.ShortInstruction)
	}
	if string(sup.Requirements.Example) != `{"language":"en","categories":["billing"]}` {
		t.Errorf("example = %s", sup.Requirements.Example)
	}
	if sup.File != filepath.Join("testdata", "plugins", "support.yaml") || sup.Path != "plugins/support.yaml" {
		t.Errorf("paths: %s %s", sup.File, sup.Path)
	}
	s, err := report.NewSession(&report.Config{Nonce: "abc123", Plugins: files.Factories()})
	if err != nil {
		t.Fatal(err)
	}
	turn := s.Turn([]byte(final("x") + meta("support", `{"language": "en", "categories": []}`) + meta("score", `{"accuracy": 101}`)))
	if turn.Done || turn.Metas[0].Status != report.MetaSchemaInvalid || turn.Metas[1].Status != report.MetaSchemaInvalid {
		t.Fatalf("turn = %+v", turn.Metas)
	}
	if !strings.Contains(turn.Feedback, "at /categories: minItems: got 0, want 1") || !strings.Contains(turn.Feedback, "at /accuracy: maximum: got 101, want 100") {
		t.Errorf("feedback:\n%s", turn.Feedback)
	}
	turn = s.Turn([]byte(meta("support", validSupport) + meta("score", validScore)))
	if !turn.Done {
		t.Fatalf("not done:\n%s", turn.Feedback)
	}
}

// writePlugin writes a plugin file under a fresh folder and returns the folder.
func writePlugin(t *testing.T, name, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const minimalPlugin = `name: p
schema: {type: object}
long_instruction: long
short_instruction: short
`

func TestLoadPluginsErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string // file name
		content string
		path    string // as configured; "" means file
		want    string
	}{
		{"path traversal", "x.yaml", minimalPlugin, "../x.yaml", `plugin path ../x.yaml contains ".."`},
		{"path traversal inside", "x.yaml", minimalPlugin, "sub/../../x.yaml", `contains ".."`},
		{"backslash traversal", "x.yaml", minimalPlugin, `sub\..\x.yaml`, `contains ".."`},
		{"absolute path", "x.yaml", minimalPlugin, "/etc/x.yaml", "plugin path /etc/x.yaml is absolute"},
		{"empty path", "x.yaml", minimalPlugin, " ", "plugin path is empty"},
		{"missing file", "x.yaml", minimalPlugin, "nothere.yaml", "plugin file nothere.yaml: file not found"},
		{"unsupported type", "x.js", minimalPlugin, "", `plugin file x.js: unsupported file type ".js"`},
		{"bad YAML", "x.yaml", "name: [p\n", "", "plugin file x.yaml: line 1: invalid YAML: did not find expected"},
		{"bad JSON", "x.json", "{\n  \"name\": \"p\",\n  \"schema\": {,}\n}", "", "plugin file x.json: line 3: column 14: invalid JSON"},
		{"empty file", "x.yaml", "", "", "plugin file x.yaml: the file is empty"},
		{"not a mapping", "x.yaml", "- a\n", "", "plugin file x.yaml: line 1: want a mapping"},
		{"unknown field", "x.yaml", minimalPlugin + "extra: 1\n", "", `plugin file x.yaml: line 5: unknown field "extra"`},
		{"duplicate field", "x.yaml", minimalPlugin + "name: q\n", "", `plugin file x.yaml: line 5: field "name" is given twice`},
		{"duplicate on_complete field", "x.yaml", minimalPlugin + "on_complete:\n  command: [\"true\"]\n  command: [rm, -rf, x]\n", "", `line 7: field "on_complete.command" is given twice`},
		{"duplicate schema key", "x.yaml", strings.Replace(minimalPlugin, "{type: object}", "{type: object, type: string}", 1), "", `field "schema": line 2: key "type" is given twice (first at line 2)`},
		{"missing schema", "x.yaml", "name: p\nlong_instruction: l\nshort_instruction: s\n", "", `plugin file x.yaml: line 1: field "schema" is required`},
		{"missing short instruction", "x.yaml", "name: p\nschema: {}\nlong_instruction: l\n", "", `field "short_instruction" is required`},
		{"empty instruction", "x.yaml", "name: p\nschema: {}\nlong_instruction: \"  \"\nshort_instruction: s\n", "", `plugin file x.yaml: line 3: field "long_instruction": must not be empty`},
		{"name not a string", "x.yaml", strings.Replace(minimalPlugin, "name: p", "name: [p]", 1), "", `line 1: field "name": want a string`},
		{"bad name", "x.yaml", strings.Replace(minimalPlugin, "name: p", "name: \"my plugin\"", 1), "", `line 1: field "name": "my plugin" is not a valid plugin name`},
		{"schema not a mapping", "x.yaml", strings.Replace(minimalPlugin, "{type: object}", "object", 1), "", `line 2: field "schema": want a JSON Schema object`},
		{"schema invalid", "x.yaml", strings.Replace(minimalPlugin, "{type: object}", "{type: objekt}", 1), "", `line 2: field "schema": not a valid JSON Schema: at /type: value must be one of`},
		{"schema non-string key", "x.yaml", strings.Replace(minimalPlugin, "{type: object}", "{1: object}", 1), "", `line 2: field "schema"`},
		{"example fails schema", "x.yaml", minimalPlugin + "example: [1]\n", "", `line 5: field "example": does not satisfy the schema: at the top level: got array, want object`},
		{"on_complete without command", "x.yaml", minimalPlugin + "on_complete: {timeout: 1s}\n", "", `line 5: field "on_complete.command" is required`},
		{"on_complete bad timeout", "x.yaml", minimalPlugin + "on_complete: {command: true, timeout: soon}\n", "", `line 5: field "on_complete.timeout": "soon" is not a positive duration`},
		{"on_complete unknown field", "x.yaml", minimalPlugin + "on_complete:\n  command: [true]\n  retries: 3\n", "", `line 7: unknown field "on_complete.retries"`},
		{"on_complete program missing", "x.yaml", minimalPlugin + "on_complete: {command: [./nothere.sh]}\n", "", `line 5: field "on_complete.command": program ./nothere.sh not found`},
		{"on_complete program not in PATH", "x.yaml", minimalPlugin + "on_complete: {command: [no-such-program-warden]}\n", "", `program "no-such-program-warden" not found in PATH`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writePlugin(t, tc.file, tc.content)
			path := tc.path
			if path == "" {
				path = tc.file
			}
			_, err := report.LoadPlugins(dir, []string{path})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadPlugins error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("duplicate names", func(t *testing.T) {
		t.Parallel()
		dir := writePlugin(t, "a.yaml", minimalPlugin)
		os.WriteFile(filepath.Join(dir, "b.yml"), []byte(minimalPlugin), 0o644)
		_, err := report.LoadPlugins(dir, []string{"a.yaml", "b.yml"})
		if err == nil || !strings.Contains(err.Error(), `plugin file b.yml: plugin name "p" is already used by a.yaml`) {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestPluginHash(t *testing.T) {
	t.Parallel()
	dir := writePlugin(t, "a.yaml", minimalPlugin)
	os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(strings.Replace(minimalPlugin, "name: p", "name: q", 1)), 0o644)
	hash := func(paths ...string) string {
		t.Helper()
		fs, err := report.LoadPlugins(dir, paths)
		if err != nil {
			t.Fatal(err)
		}
		return fs.Hash()
	}
	h1 := hash("a.yaml", "b.yaml")
	if !strings.HasPrefix(h1, "sha256:") || len(h1) != len("sha256:")+64 {
		t.Fatalf("hash = %q", h1)
	}
	if h1 != hash("a.yaml", "b.yaml") {
		t.Fatal("hash is not stable")
	}
	if h1 == hash("b.yaml", "a.yaml") {
		t.Error("hash ignores the order of plugins")
	}
	if h1 == hash("a.yaml") {
		t.Error("hash ignores a plugin")
	}
	// A schema change (even one that loads fine) invalidates the hash.
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(strings.Replace(minimalPlugin, "{type: object}", "{type: object, required: [x]}", 1)), 0o644)
	if h1 == hash("a.yaml", "b.yaml") {
		t.Error("hash did not change with the content of a plugin file")
	}
	if hash() == "" {
		t.Error("empty set has no hash")
	}
}

func TestPluginFileFreshInstance(t *testing.T) {
	t.Parallel()
	fs, err := report.LoadPlugins("testdata", []string{"plugins/support.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	f := fs[0].Factory()
	if a, b := f(), f(); a == b {
		t.Error("a plugin file's factory returned the same instance twice")
	}
}

// TestOnCompleteCommand runs the on-complete commands of plugin files: one
// records its standard input, one fails, one outlives its timeout.
func TestOnCompleteCommand(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		if err := exectest.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("record.sh", "#!/bin/sh\ncat > \"$1\"\n", 0o755)
	write("rec.yaml", strings.Replace(minimalPlugin, "name: p", "name: rec", 1)+"on_complete:\n  command: [./record.sh, out.json]\n  timeout: 5s\n", 0o644)
	write("fail.yaml", strings.Replace(minimalPlugin, "name: p", "name: fail", 1)+"on_complete: {command: \"echo cannot reach the database >&2; exit 3\"}\n", 0o644)
	write("slow.yaml", strings.Replace(minimalPlugin, "name: p", "name: slow", 1)+"on_complete: {command: \"sleep 30\", timeout: 100ms}\n", 0o644)
	write("none.yaml", strings.Replace(minimalPlugin, "name: p", "name: none", 1), 0o644)
	fs, err := report.LoadPlugins(dir, []string{"rec.yaml", "fail.yaml", "slow.yaml", "none.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if fs[1].Requirements.CompleteTimeout != 30*time.Second || fs[2].Requirements.CompleteTimeout != 100*time.Millisecond {
		t.Errorf("timeouts = %v, %v", fs[1].Requirements.CompleteTimeout, fs[2].Requirements.CompleteTimeout)
	}
	var logs logBuffer
	s, err := report.NewSession(&report.Config{Nonce: "abc123", SessionID: "cmd-1", Plugins: fs.Factories(), Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	resp := final("All good.")
	for _, n := range []string{"rec", "fail", "slow", "none"} {
		resp += meta(n, `{"n": "`+n+`"}`)
	}
	if turn := s.Turn([]byte(resp)); !turn.Done {
		t.Fatalf("not done:\n%s", turn.Feedback)
	}
	pend, err := s.Complete(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	errs := pend.Wait()
	if len(errs) != 2 {
		t.Fatalf("errors = %v, want 2 (fail, slow)", errs)
	}
	if msg := errs[0].Error(); !strings.Contains(msg, `plugin "fail"`) || !strings.Contains(msg, "exit status 3") || !strings.Contains(msg, "cannot reach the database") {
		t.Errorf("fail error = %s", msg)
	}
	if msg := errs[1].Error(); !strings.Contains(msg, `plugin "slow"`) || !strings.Contains(msg, "did not finish within 100ms") {
		t.Errorf("slow error = %s", msg)
	}
	if n := strings.Count(logs.String(), `"level":"WARN"`); n != 2 {
		t.Errorf("%d warnings logged, want 2:\n%s", n, logs.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatalf("the command did not run in the plugin's folder: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("stdin was not JSON: %q", data)
	}
	want := map[string]any{"plugin": "rec", "session_id": "cmd-1", "final_report": "\nAll good.\n", "meta": map[string]any{"n": "rec"}, "from_cache": true}
	if gj, wj := mustJSON(got), mustJSON(want); gj != wj {
		t.Errorf("stdin = %s, want %s", gj, wj)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestPluginFilesChanged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.yaml")
	src := "name: p\nschema: {type: object}\nlong_instruction: x\nshort_instruction: y\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := report.LoadPlugins(dir, []string{"p.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if fs.Changed() {
		t.Fatal("changed right after loading")
	}
	os.WriteFile(p, []byte(src+"example: {}\n"), 0o644)
	if !fs.Changed() {
		t.Error("an edit is not a change")
	}
	os.Remove(p)
	if !fs.Changed() {
		t.Error("a removed file is not a change")
	}
}
