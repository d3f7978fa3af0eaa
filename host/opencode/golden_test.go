package opencode_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/warden-run/warden/internal/golden"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/opencode"
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
			secs, order := golden.Read(t, file)
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
			golden.Check(t, file, secs, order, got, *update)
		})
	}
}

func TestPluginSource(t *testing.T) {
	src := opencode.PluginSource("/opt/my warden/warden", 90*time.Second)
	if strings.Contains(src, "__") || !strings.Contains(src, `["hook"]).concat(["opencode","--wait","1m30s"])`) || !strings.Contains(src, "TIMEOUT_MS = 120000") || !strings.Contains(src, `process.env.WARDEN_BIN || "/opt/my warden/warden"`) {
		t.Errorf("binary not substituted:\n%s", src[:600])
	}
	for _, hook := range []string{`"tool.execute.before"`, `"tool.execute.after"`, `"experimental.chat.system.transform"`, `"chat.message"`, `"session.compacted"`, `"experimental.session.compacting"`, "throw new Error"} {
		if !strings.Contains(src, hook) {
			t.Errorf("plugin lacks %s", hook)
		}
	}
}
