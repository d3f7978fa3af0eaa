package host_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in <host>/testdata/")

// TestGolden runs every host's transcripts, host/<name>/testdata/*.txt,
// through the host's hook.Host, as the hook handler does. A transcript is
// a text file of sections "-- name --". The inputs are "stdin" (what the
// host sends) and one of "decision" (a warden.Decision, before a tool),
// "failure" (the error of a call that got no decision) or "context"
// (governance text); "prompt" is the prompt the event must carry (the
// user's own text) and "model" whether it is a model request warden adds
// its text to (hook.Model). The outputs, checked against the file and
// rewritten by -update, are "call" (the decoded tool call) and "stdout"
// (what the hook answers, for a host that can prompt its user).
func TestGolden(t *testing.T) {
	for _, h := range host.All() {
		t.Run(h.Name(), func(t *testing.T) { runGolden(t, h, filepath.Join(h.Name(), "testdata")) })
	}
}

func runGolden(t *testing.T, h hook.Host, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(files) == 0 {
		t.Fatalf("no transcripts in %s", dir)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			secs, order := golden.Read(t, file)
			ev, err := h.Decode([]byte(secs["stdin"]))
			if err != nil {
				t.Fatalf("stdin: %v", err)
			}
			if want, ok := secs["prompt"]; ok && ev.Prompt != want {
				t.Errorf("prompt %q, want %q", ev.Prompt, want)
			}
			if want, ok := secs["model"]; ok && fmt.Sprint(ev.Kind == hook.Model) != want {
				t.Errorf("model request %v, want %s", ev.Kind == hook.Model, want)
			}
			got := map[string]string{}
			if ev.Call.Tool != "" {
				js, _ := json.MarshalIndent(ev.Call, "", "  ")
				got["call"] = string(js)
			}
			var out []byte
			switch {
			case secs["decision"] != "":
				var d warden.Decision
				if err := json.Unmarshal([]byte(secs["decision"]), &d); err != nil {
					t.Fatalf("decision: %v", err)
				}
				out = h.Answer(ev, hook.Answer{Decision: &d}, hook.Render{Prompts: true})
			case secs["failure"] != "":
				out = h.Failure(ev.Name, warden.FailClosed(warden.Errorf(warden.CodePolicyError, "%s", secs["failure"])))
			default:
				out = h.Answer(ev, hook.Answer{Context: secs["context"]}, hook.Render{Prompts: true})
			}
			var b bytes.Buffer
			if err := json.Indent(&b, out, "", "  "); err != nil {
				t.Fatalf("stdout is not JSON: %v: %s", err, out)
			}
			got["stdout"] = b.String()
			golden.Check(t, file, secs, order, got, *update)
		})
	}
}
