package compile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/warden-run/warden/compile"
)

// TestOllama compiles a mail rule with a real model when
// Ollama answers at its default address (skipped otherwise). The model is
// WARDEN_OLLAMA_MODEL, or the first one Ollama has. A small model may not
// manage the rule; then the failure must be reported and nothing written.
func TestOllama(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	base := "http://127.0.0.1:11434"
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get(base + "/api/tags")
	if err != nil {
		t.Skipf("no Ollama at %s: %v", base, err)
	}
	var tags struct {
		Models []struct{ Name string }
	}
	json.NewDecoder(resp.Body).Decode(&tags)
	resp.Body.Close()
	name := os.Getenv("WARDEN_OLLAMA_MODEL")
	if name == "" {
		if len(tags.Models) == 0 {
			t.Skip("Ollama has no models (ollama pull qwen2.5:7b)")
		}
		name = tags.Models[0].Name
	}
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	var progress bytes.Buffer
	m := &compile.Model{BaseURL: base + "/v1", Name: name, Timeout: 5 * time.Minute}
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, Progress: &progress})
	t.Logf("model %s:\n%s", name, progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls == 0 || res.PromptTokens == 0 {
		t.Errorf("%d calls, %d prompt tokens", res.Calls, res.PromptTokens)
	}
	if !res.OK() {
		if len(res.Failures) == 0 || len(res.Failures[0].Problems) == 0 || compile.Write(res) == nil {
			t.Errorf("a failed compile is not reported properly: %+v", res.Failures)
		}
		t.Logf("the model did not manage the rule: %+v", res.Failures)
		return
	}
	if err := compile.Write(res); err != nil {
		t.Fatal(err)
	}
	if n := runPolicyTests(t, pol); n < 3 {
		t.Errorf("%d tests passed, want at least 3", n)
	}
	if err := compile.Check(pol, ""); err != nil {
		t.Error(err)
	}
}
