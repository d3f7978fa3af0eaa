package compile_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/compile"
	"github.com/warden-run/warden/internal/golden"
	"github.com/warden-run/warden/internal/scripted"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestWireTranscript pins what warden sends the model: the system prompt,
// the first user message (the policy summary and the rule), and a repair
// request. Refresh with -update after a deliberate change.
func TestWireTranscript(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	m, srv := model(t,
		scripted.Turn{Text: answerJSON(t, bulkDeleteRule(""))},
		scripted.Turn{Text: answerJSON(t, bulkDeleteRule("Delete messages one at a time."))},
	)
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || !res.OK() {
		t.Fatalf("err %v, failures %+v", err, res.Failures)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var first, second struct {
		Model          string
		Messages       []compile.Message
		ResponseFormat json.RawMessage `json:"response_format"`
	}
	json.Unmarshal(reqs[0].Body, &first)
	json.Unmarshal(reqs[1].Body, &second)
	if len(first.Messages) != 2 || len(second.Messages) != 4 {
		t.Fatalf("messages: %d then %d, want 2 then 4", len(first.Messages), len(second.Messages))
	}
	if second.Messages[2].Role != "assistant" || second.Messages[2].Content != answerJSON(t, bulkDeleteRule("")) {
		t.Errorf("the repair request does not carry the model's answer back: %+v", second.Messages[2])
	}
	got := map[string]string{
		"system": first.Messages[0].Content,
		"user":   first.Messages[1].Content,
		"repair": second.Messages[3].Content,
	}
	if strings.Contains(string(reqs[0].Body)+string(reqs[1].Body), filepath.Dir(rules)) {
		t.Errorf("a local path went to the model: %s", got["user"])
	}
	file := "testdata/wire.txt"
	order := []string{"system", "user", "repair"}
	if *update {
		var b strings.Builder
		for _, name := range order {
			b.WriteString("-- " + name + " --\n" + strings.TrimSpace(got[name]) + "\n")
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	secs, _ := golden.Read(t, file)
	for _, name := range order {
		if secs[name] != strings.TrimSpace(got[name]) {
			t.Errorf("%s: section %q differs (run go test -update to accept)\n got:\n%s\nwant:\n%s", file, name, got[name], secs[name])
		}
	}
}
