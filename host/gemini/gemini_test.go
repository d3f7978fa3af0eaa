package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/host/gemini"
)

func TestStripHookContext(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fix the build", "fix the build"},
		{"  keep my spacing  ", "  keep my spacing  "},
		// Headless: the SessionStart text comes first.
		{"<hook_context>## WARDEN GOVERNANCE\n\nrules</hook_context>\n\nfix the build", "fix the build"},
		// Piped stdin and -p: the hook text, the stdin, the prompt.
		{"<hook_context>rules</hook_context>\n\nlog lines\n\nexplain these", "log lines\n\nexplain these"},
		// A resume note quoting an older prompt: Gemini CLI escaped the
		// inner block, so the first closing tag ends the outer one.
		{"<hook_context>note: &lt;hook_context&gt;old&lt;/hook_context&gt;\n\nold prompt</hook_context>\n\nnew prompt", "new prompt"},
		{"<hook_context>a</hook_context><hook_context>b</hook_context>\nboth gone", "both gone"},
		{"<hook_context>only hook text</hook_context>", ""},
		// Not a complete block: the user's text, as it is.
		{"what does <hook_context> mean?", "what does <hook_context> mean?"},
		{"</hook_context> first, then <hook_context>", "</hook_context> first, then <hook_context>"},
	} {
		if got := gemini.StripHookContext(tc.in); got != tc.want {
			t.Errorf("StripHookContext(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseInputStripsPrompt(t *testing.T) {
	for _, event := range []string{gemini.BeforeAgent, gemini.AfterAgent} {
		js, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": event,
			"prompt": "<hook_context>## WARDEN GOVERNANCE</hook_context>\n\nplan the work"})
		in, err := gemini.ParseInput(js)
		if err != nil || in.Prompt != "plan the work" {
			t.Errorf("%s: prompt %q, %v", event, in.Prompt, err)
		}
	}
}

func request(msgs ...string) *gemini.LLMRequest {
	r := &gemini.LLMRequest{Model: "gemini-2.5-flash"}
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "model"
		}
		r.Messages = append(r.Messages, gemini.Message{Role: role, Content: m})
	}
	return r
}

func TestMainChat(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *gemini.LLMRequest
		want bool
	}{
		{"main", request("<session_context>\nThis is the Gemini CLI.</session_context>hi", "hello"), true},
		{"main, leading space", request("\n<session_context>x</session_context>"), true},
		{"subagent", request("Your task is to investigate the code.", "ok"), false},
		{"model first", &gemini.LLMRequest{Messages: []gemini.Message{{Role: "model", Content: "<session_context>"}}}, false},
		{"no messages", &gemini.LLMRequest{}, false},
		{"no request", nil, false},
	} {
		if got := tc.r.MainChat(); got != tc.want {
			t.Errorf("%s: MainChat() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestContains(t *testing.T) {
	r := request("<session_context>x</session_context>", "Got it.", "## WARDEN REMINDER here")
	if !r.Contains("WARDEN REMINDER") || r.Contains("WARDEN GOVERNANCE") {
		t.Errorf("Contains: reminder %v, governance %v", r.Contains("WARDEN REMINDER"), r.Contains("WARDEN GOVERNANCE"))
	}
	var none *gemini.LLMRequest
	if none.Contains("") {
		t.Errorf("a missing request contains nothing")
	}
}

// TestModelContext: the answer replaces the first message only (Gemini CLI
// keeps the contents after the last message it gets), with the text after
// it, escaped as Gemini CLI escapes hook text.
func TestModelContext(t *testing.T) {
	r := request("<session_context>x</session_context>", "Got it.", "Please continue.")
	out := gemini.ModelContext(r, "  ## WARDEN REMINDER\nrequest: <b>  ")
	hs := out.HookSpecificOutput
	if hs == nil || hs.HookEventName != gemini.BeforeModel || hs.LLMRequest == nil || hs.AdditionalContext != "" {
		t.Fatalf("ModelContext: %s", out.Marshal())
	}
	want := []gemini.Message{{Role: "user", Content: "<session_context>x</session_context>\n\n<hook_context>## WARDEN REMINDER\nrequest: &lt;b&gt;</hook_context>"}}
	if got := hs.LLMRequest.Messages; len(got) != 1 || got[0] != want[0] {
		t.Errorf("messages %+v, want %+v", got, want)
	}
	var m map[string]any
	json.Unmarshal(out.Marshal(), &m)
	lr := m["hookSpecificOutput"].(map[string]any)["llm_request"].(map[string]any)
	if _, ok := lr["model"]; ok {
		t.Errorf("the answer sets the model: %v", lr)
	}
	if r.Messages[0].Content != "<session_context>x</session_context>" {
		t.Errorf("ModelContext changed the request it was given")
	}
	for _, empty := range []gemini.Output{gemini.ModelContext(r, " \n"), gemini.ModelContext(nil, "x"), gemini.ModelContext(&gemini.LLMRequest{}, "x")} {
		if string(empty.Marshal()) != "{}\n" {
			t.Errorf("nothing to add: %s", empty.Marshal())
		}
	}
	// A failure at BeforeModel is a message, never a block.
	if f := gemini.Failure(gemini.BeforeModel, warden.FailClosed(warden.Errorf(warden.CodePolicyError, "store down"))); f.Decision != "" || f.SystemMessage == "" {
		t.Errorf("BeforeModel failure: %s", f.Marshal())
	}
}

func TestEventsWireBeforeModelNotPreCompress(t *testing.T) {
	has := map[string]bool{}
	for _, ev := range gemini.Events {
		has[ev] = true
	}
	if !has[gemini.BeforeModel] || has[gemini.PreCompress] {
		t.Errorf("Events %v: want BeforeModel, and not PreCompress (it fires before every turn)", gemini.Events)
	}
}
