package gemini_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/warden-run/warden/internal/golden"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/gemini"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestGolden checks the transcripts in testdata/: sections "stdin" (what the
// host sends) and "decision", "failure" or "context" are inputs; "call" and
// "stdout" are outputs, rewritten by -update. A "prompt" section is the
// prompt ParseInput must return (the user's text, without hook text); a
// "main" section says whether a BeforeModel request is the main chat's.
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
			in, err := gemini.ParseInput([]byte(secs["stdin"]))
			if err != nil {
				t.Fatalf("stdin: %v", err)
			}
			if want, ok := secs["prompt"]; ok && in.Prompt != want {
				t.Errorf("prompt %q, want %q", in.Prompt, want)
			}
			if want, ok := secs["main"]; ok && fmt.Sprint(in.LLMRequest.MainChat()) != want {
				t.Errorf("main chat %v, want %s", in.LLMRequest.MainChat(), want)
			}
			if in.ToolName != "" {
				js, _ := json.MarshalIndent(in.ToolCall(), "", "  ")
				got["call"] = string(js)
			}
			out := gemini.Context(in.HookEventName, secs["context"])
			if in.HookEventName == gemini.BeforeModel {
				out = gemini.ModelContext(in.LLMRequest, secs["context"])
			}
			switch {
			case d != nil:
				out = gemini.Decide(*d, gemini.Options{})
			case secs["failure"] != "":
				out = gemini.Failure(in.HookEventName, failure)
			}
			var b bytes.Buffer
			json.Indent(&b, out.Marshal(), "", "  ")
			got["stdout"] = b.String()
			golden.Check(t, file, secs, order, got, *update)
		})
	}
}
