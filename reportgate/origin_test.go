package reportgate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/report"
	"github.com/warden-run/warden/reportgate"
)

// TestMessagesRecordedTranscripts: the messages of the transcripts the
// hosts wrote (replay's recordings of one session per host, with the
// hosts' own context blocks, tool calls and results) are the user's
// request and the agent's answer, nothing else.
func TestMessagesRecordedTranscripts(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		"claude/session.jsonl",
		"codex/rollout-2026-11-28T08-00-11-01a2212b-3de8-7833-a562-7a2b55995fab.jsonl",
		"gemini/chats/session-2026-11-28T08-00-9405eb55.jsonl",
	} {
		msgs, err := reportgate.Messages(filepath.Join("..", "replay", "testdata", filepath.FromSlash(p)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := []report.Message{{Role: "user", Text: "Do the task."}, {Role: "assistant", Text: "Done."}}
		if fmt.Sprint(msgs) != fmt.Sprint(want) {
			t.Errorf("%s: messages %q, want %q", p, msgs, want)
		}
	}
}

// TestMessagesShapes: a Claude Code message split over lines is one
// message; side chains, meta lines and tool results are left out; a
// Gemini CLI message logged again counts once, in its last form; a whole
// JSON chat is read too.
func TestMessagesShapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	claude := write("claude.jsonl", strings.Join([]string{
		`{"type":"user","sessionId":"s","message":{"role":"user","content":"<system-reminder>x</system-reminder>Fix the build."}}`,
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"meta text"}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Looking."}]}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"ok"}]}}`,
		`{"type":"assistant","isSidechain":true,"message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"subagent"}]}}`,
		`{"type":"assistant","message":{"id":"m3","role":"assistant","content":[{"type":"text","text":"Fixed."}]}}`,
		`{"type":"assistant","message":{"id":"m3","role":"assistant","content":[{"type":"text","text":"It builds."}]}}`,
		`{"type":"assistant","message":{"id":"m4"`, // cut short while the host writes
	}, "\n"))
	gemini := write("session-1.jsonl", strings.Join([]string{
		`{"sessionId":"g","projectHash":"h"}`,
		`{"id":"u1","type":"user","content":[{"text":"<hook_context>rules</hook_context>\n\nList the files."}]}`,
		`{"id":"a1","type":"gemini","content":""}`,
		`{"id":"a1","type":"gemini","content":"Three files."}`,
		`{"$set":{"lastUpdated":"x"}}`,
	}, "\n"))
	whole := write("session-2.json", `{"sessionId":"g","messages":[{"id":"u1","type":"user","content":"Hello"},{"id":"i","type":"info","content":"note"},{"id":"a1","type":"gemini","content":"Hi."}]}`)
	for _, c := range []struct {
		path string
		want []report.Message
	}{
		{claude, []report.Message{{Role: "user", Text: "Fix the build."}, {Role: "assistant", Text: "Looking."}, {Role: "assistant", Text: "Fixed.\nIt builds."}}},
		{gemini, []report.Message{{Role: "user", Text: "List the files."}, {Role: "assistant", Text: "Three files."}}},
		{whole, []report.Message{{Role: "user", Text: "Hello"}, {Role: "assistant", Text: "Hi."}}},
	} {
		got, err := reportgate.Messages(c.path)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %q %v, want %q", filepath.Base(c.path), got, err, c.want)
		}
	}
	if _, err := reportgate.Messages(filepath.Join(dir, "none.jsonl")); err == nil {
		t.Error("a missing transcript: no error")
	}
}

// TestOrigin: the origin names the agent (a subagent by its id), takes
// the request from the transcript's first user message, else the
// recorded request, else the session's latest prompt, redacts every text,
// keeps the last messages within the bounds and counts the others.
func TestOrigin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lines []string
	secret := "sk-proj-" + strings.Repeat("a1B2", 10)
	lines = append(lines, `{"type":"user","message":{"role":"user","content":"Deploy with OPENAI_API_KEY=`+secret+` please"}}`)
	for i := range 60 {
		lines = append(lines, fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"text","text":"step %d"}]}}`, i, i))
	}
	big := strings.Repeat("word ", 2000) // 10000 bytes
	lines = append(lines, `{"type":"assistant","message":{"id":"last","role":"assistant","content":[{"type":"text","text":"`+big+`"}]}}`)
	tr := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(tr, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	s := warden.Session{ID: "p1/agent-7", Parent: "p1", Host: "claude", Role: "support", Depth: 1, Intent: "latest prompt"}
	o, err := reportgate.Origin(s, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Agent == nil || *o.Agent != (report.Agent{Host: "claude", Session: "p1/agent-7", Parent: "p1", Role: "support", Name: "agent-7", Depth: 1}) {
		t.Errorf("agent %+v", o.Agent)
	}
	if strings.Contains(o.Request, secret) || !strings.HasPrefix(o.Request, "Deploy with") || !strings.Contains(o.Request, warden.Redacted) {
		t.Errorf("request %q: want it redacted", o.Request)
	}
	if o.Transcript != tr || len(o.Messages) != reportgate.MaxMessages || o.MessagesOmitted != 62-reportgate.MaxMessages {
		t.Fatalf("%d messages, %d omitted, want %d and %d", len(o.Messages), o.MessagesOmitted, reportgate.MaxMessages, 62-reportgate.MaxMessages)
	}
	last := o.Messages[len(o.Messages)-1]
	if len(last.Text) > reportgate.MaxMessageBytes+100 || !strings.HasPrefix(last.Text, "word word") || o.Messages[0].Text != "step 21" {
		t.Errorf("first kept %q, last kept %d bytes: want step 21 and the last cut to about %d", o.Messages[0].Text, len(last.Text), reportgate.MaxMessageBytes)
	}
	total := 0
	for _, m := range o.Messages {
		total += len(m.Text)
	}
	if total > reportgate.MaxMessagesBytes {
		t.Errorf("messages hold %d bytes, over %d", total, reportgate.MaxMessagesBytes)
	}

	// No transcript: the recorded request, else the latest prompt.
	o, err = reportgate.Origin(warden.Session{ID: "s2", Intent: "latest prompt"}, "", &warden.ReportRequest{Request: "first request"})
	if err != nil || o.Request != "first request" || o.Messages != nil || o.Agent.Name != "" {
		t.Errorf("recorded request: %+v %v", o, err)
	}
	o, _ = reportgate.Origin(warden.Session{ID: "s2", Intent: "token ghp_" + strings.Repeat("x", 36)}, "", nil)
	if !strings.HasPrefix(o.Request, "token ") || strings.Contains(o.Request, "ghp_") {
		t.Errorf("latest prompt as the request: %q, want it redacted", o.Request)
	}
	o, err = reportgate.Origin(warden.Session{ID: "s3", Intent: "asked"}, filepath.Join(dir, "gone.jsonl"), nil)
	if err == nil || o.Request != "asked" || o.Agent == nil {
		t.Errorf("unreadable transcript: %+v %v, want the error and the rest", o, err)
	}
}

// FuzzMessages: any transcript reads without a panic, and every message
// it yields is a user's or the assistant's, with text.
func FuzzMessages(f *testing.F) {
	for _, p := range []string{"claude/session.jsonl", "gemini/chats/session-2026-11-28T08-00-9405eb55.jsonl"} {
		data, err := os.ReadFile(filepath.Join("..", "replay", "testdata", filepath.FromSlash(p)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
	}
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}`))
	f.Add([]byte(`{"$set":{"messages":[{"id":"a","type":"gemini","content":[{"text":"hi"}]}]}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "t.jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		msgs, err := reportgate.Messages(p)
		if err != nil {
			return
		}
		for _, m := range msgs {
			if (m.Role != "user" && m.Role != "assistant") || strings.TrimSpace(m.Text) == "" {
				t.Fatalf("message %+v", m)
			}
		}
	})
}
