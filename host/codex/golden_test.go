package codex_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/warden-run/warden/internal/golden"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/codex"
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
			in, err := codex.ParseInput([]byte(secs["stdin"]))
			if err != nil {
				t.Fatalf("stdin: %v", err)
			}
			if in.ToolName != "" {
				js, _ := json.MarshalIndent(in.ToolCall(codex.Host), "", "  ")
				got["call"] = string(js)
			}
			out := codex.Context(in.HookEventName, secs["context"])
			switch {
			case d != nil:
				out = codex.Decide(*d)
			case secs["failure"] != "":
				out = codex.Failure(in.HookEventName, failure)
			}
			var b bytes.Buffer
			json.Indent(&b, out.Marshal(), "", "  ")
			got["stdout"] = b.String()
			golden.Check(t, file, secs, order, got, *update)
		})
	}
}
