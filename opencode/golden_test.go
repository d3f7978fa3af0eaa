package opencode_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/opencode"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestGolden checks the transcripts in testdata/: sections "stdin" (what the
// host sends) and "decision", "failure" or "context" are inputs; "call" and
// "stdout" are outputs, rewritten by -update.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			secs, order := readSections(t, file)
			got := map[string]string{}
			var d *warden.Decision
			if secs["decision"] != "" {
				d = new(warden.Decision)
				if err := json.Unmarshal([]byte(secs["decision"]), d); err != nil {
					t.Fatalf("decision: %v", err)
				}
			}
			failure := warden.FailClosed(warden.Errorf(warden.CodePolicyError, "%s", secs["failure"]))
			in, err := opencode.ParseInput([]byte(secs["stdin"]))
			if err != nil {
				t.Fatalf("stdin: %v", err)
			}
			if in.Tool != "" {
				js, _ := json.MarshalIndent(in.ToolCall(), "", "  ")
				got["call"] = string(js)
			}
			out := opencode.Context(in.Event, secs["context"])
			switch {
			case d != nil:
				out = opencode.Decide(*d)
			case secs["failure"] != "":
				out = opencode.Failure(in.Event, failure)
			}
			var b bytes.Buffer
			json.Indent(&b, out.Marshal(), "", "  ")
			got["stdout"] = b.String()
			check(t, file, secs, order, got)
		})
	}
}

func TestPluginSource(t *testing.T) {
	src := opencode.PluginSource("/opt/my warden/warden", 90*time.Second)
	if strings.Contains(src, "__") || !strings.Contains(src, `["hook","opencode","--wait","1m30s"]`) || !strings.Contains(src, "TIMEOUT_MS = 120000") || !strings.Contains(src, `process.env.WARDEN_BIN || "/opt/my warden/warden"`) {
		t.Errorf("binary not substituted:\n%s", src[:600])
	}
	for _, hook := range []string{`"tool.execute.before"`, `"tool.execute.after"`, `"experimental.chat.system.transform"`, `"chat.message"`, `"session.compacted"`, "throw new Error"} {
		if !strings.Contains(src, hook) {
			t.Errorf("plugin lacks %s", hook)
		}
	}
}

func readSections(t *testing.T, file string) (map[string]string, []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	secs := map[string]string{}
	var order []string
	name := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(strings.TrimSpace(line), " --") {
			name = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "-- "), " --")
			order = append(order, name)
			continue
		}
		if name != "" {
			secs[name] += line
		}
	}
	for k, v := range secs {
		secs[k] = strings.TrimSpace(v)
	}
	return secs, order
}

func check(t *testing.T, file string, secs map[string]string, order []string, got map[string]string) {
	t.Helper()
	if *update {
		var b strings.Builder
		for _, name := range order {
			if _, out := got[name]; out {
				continue
			}
			b.WriteString("-- " + name + " --\n" + secs[name] + "\n")
		}
		for _, name := range []string{"call", "stdout"} {
			if v, ok := got[name]; ok {
				b.WriteString("-- " + name + " --\n" + v + "\n")
			}
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for name, v := range got {
		if secs[name] != strings.TrimSpace(v) {
			t.Errorf("%s: section %q differs (run go test -update to accept)\n got:\n%s\nwant:\n%s", file, name, v, secs[name])
		}
	}
}
