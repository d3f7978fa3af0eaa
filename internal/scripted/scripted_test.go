package scripted_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/scripted"
)

type event struct {
	Name string
	Data string
}

func (e event) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(e.Data), &m); err != nil {
		t.Fatalf("event %q data is not JSON: %v: %s", e.Name, err, e.Data)
	}
	return m
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readSSE(t *testing.T, resp *http.Response) []event {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q, want text/event-stream", ct)
	}
	var evs []event
	var cur event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != "" || cur.Name != "" {
				evs = append(evs, cur)
			}
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data += strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

func start(t *testing.T, turns ...scripted.Turn) *scripted.Server {
	t.Helper()
	s, err := scripted.Start(turns...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q is not on 127.0.0.1", s.URL)
	}
	return s
}

var bash = scripted.ToolCall{ID: "toolu_1", Name: "Bash", Args: map[string]any{"command": "rm -rf build"}}

func TestAnthropicStream(t *testing.T) {
	s := start(t, scripted.Turn{Name: "run", Text: "Cleaning up the build folder.", ToolCalls: []scripted.ToolCall{bash}})
	resp := post(t, s.URL+"/v1/messages", `{"model":"claude-x","stream":true,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash"}]}`)
	evs := readSSE(t, resp)
	var names []string
	var text, args string
	var toolName, stop string
	for _, e := range evs {
		names = append(names, e.Name)
		m := e.JSON(t)
		if m["type"] != e.Name {
			t.Errorf("event %q has type %v", e.Name, m["type"])
		}
		switch e.Name {
		case "content_block_start":
			cb := m["content_block"].(map[string]any)
			if cb["type"] == "tool_use" {
				toolName = cb["name"].(string)
				if cb["id"] != "toolu_1" {
					t.Errorf("tool id %v", cb["id"])
				}
			}
		case "content_block_delta":
			d := m["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "input_json_delta":
				args += d["partial_json"].(string)
			}
		case "message_delta":
			stop = m["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if text != "Cleaning up the build folder." {
		t.Errorf("text %q", text)
	}
	if args != `{"command":"rm -rf build"}` {
		t.Errorf("args %q", args)
	}
	if toolName != "Bash" || stop != "tool_use" {
		t.Errorf("tool %q stop %q", toolName, stop)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Protocol != scripted.Anthropic || reqs[0].Turn != "run" || !reqs[0].Stream {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestAnthropicNonStreamAndCount(t *testing.T) {
	s := start(t)
	resp := post(t, s.URL+"/v1/messages/count_tokens", `{"model":"m","messages":[]}`)
	var cnt map[string]any
	json.NewDecoder(resp.Body).Decode(&cnt)
	if n, _ := cnt["input_tokens"].(float64); n <= 0 {
		t.Errorf("count_tokens answered %v", cnt)
	}
	resp = post(t, s.URL+"/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)
	var msg map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	content := msg["content"].([]any)
	if msg["stop_reason"] != "end_turn" || content[0].(map[string]any)["text"] != "Done." {
		t.Errorf("non-stream answer %v", msg)
	}
}

func TestOpenAIChatStream(t *testing.T) {
	s := start(t,
		scripted.Turn{Name: "tool", Match: scripted.HasTools, ToolCalls: []scripted.ToolCall{{Name: "bash", Args: map[string]any{"command": "ls"}}}},
	)
	// A title request without tools gets the fallback and leaves the turn.
	resp := post(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"title?"}]}`)
	evs := readSSE(t, resp)
	if evs[len(evs)-1].Data != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", evs[len(evs)-1].Data)
	}
	var text string
	for _, e := range evs[:len(evs)-1] {
		ch := e.JSON(t)["choices"].([]any)[0].(map[string]any)
		if c, ok := ch["delta"].(map[string]any)["content"].(string); ok {
			text += c
		}
	}
	if text != "Done." {
		t.Errorf("fallback text %q", text)
	}

	resp = post(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"bash"}}]}`)
	evs = readSSE(t, resp)
	var name, args, id, finish string
	for _, e := range evs[:len(evs)-1] {
		m := e.JSON(t)
		if m["object"] != "chat.completion.chunk" {
			t.Errorf("object %v", m["object"])
		}
		ch := m["choices"].([]any)[0].(map[string]any)
		if f, ok := ch["finish_reason"].(string); ok {
			finish = f
		}
		tcs, _ := ch["delta"].(map[string]any)["tool_calls"].([]any)
		for _, tc := range tcs {
			tm := tc.(map[string]any)
			if v, ok := tm["id"].(string); ok {
				id = v
			}
			f := tm["function"].(map[string]any)
			if v, ok := f["name"].(string); ok {
				name = v
			}
			args += f["arguments"].(string)
		}
	}
	if name != "bash" || args != `{"command":"ls"}` || id == "" || finish != "tool_calls" {
		t.Errorf("tool call name=%q args=%q id=%q finish=%q", name, args, id, finish)
	}
	if u := s.Unplayed(); len(u) != 0 {
		t.Errorf("unplayed %v", u)
	}
	reqs := s.Requests()
	if reqs[0].Turn != "" || reqs[1].Turn != "tool" {
		t.Errorf("turns %q %q", reqs[0].Turn, reqs[1].Turn)
	}
}

func TestResponsesStream(t *testing.T) {
	s := start(t, scripted.Turn{Text: "Running it.", ToolCalls: []scripted.ToolCall{{ID: "call_9", Name: "exec_command", Args: map[string]any{"cmd": "ls"}}}})
	resp := post(t, s.URL+"/v1/responses", `{"model":"gpt-5","stream":true,"input":[]}`)
	evs := readSSE(t, resp)
	var seq []string
	var text string
	var call map[string]any
	for i, e := range evs {
		m := e.JSON(t)
		if m["type"] != e.Name {
			t.Errorf("event %q type %v", e.Name, m["type"])
		}
		if n := m["sequence_number"].(float64); int(n) != i {
			t.Errorf("sequence_number %v at %d", n, i)
		}
		seq = append(seq, e.Name)
		if e.Name == "response.output_text.delta" {
			text += m["delta"].(string)
		}
		if e.Name == "response.output_item.done" {
			if it := m["item"].(map[string]any); it["type"] == "function_call" {
				call = it
			}
		}
	}
	if seq[0] != "response.created" || seq[len(seq)-1] != "response.completed" {
		t.Errorf("events %v", seq)
	}
	if text != "Running it." {
		t.Errorf("text %q", text)
	}
	if call == nil || call["name"] != "exec_command" || call["call_id"] != "call_9" || call["arguments"] != `{"cmd":"ls"}` {
		t.Errorf("function_call item %v", call)
	}
	done := evs[len(evs)-1].JSON(t)["response"].(map[string]any)
	if done["status"] != "completed" || len(done["output"].([]any)) != 2 || done["usage"] == nil {
		t.Errorf("completed response %v", done)
	}
}

func TestGeminiStream(t *testing.T) {
	s := start(t,
		scripted.Turn{ToolCalls: []scripted.ToolCall{{Name: "run_shell_command", Args: map[string]any{"command": "ls", "description": "list"}}}},
		scripted.Turn{Match: scripted.HasToolResult, Text: "All files are listed above."},
	)
	resp := post(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"list"}]}]}`)
	evs := readSSE(t, resp)
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	cand := evs[0].JSON(t)["candidates"].([]any)[0].(map[string]any)
	fc := cand["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionCall"].(map[string]any)
	if fc["name"] != "run_shell_command" || fc["args"].(map[string]any)["command"] != "ls" || cand["finishReason"] != "STOP" {
		t.Errorf("candidate %v", cand)
	}
	// The host sends the result back; the second turn answers it.
	resp = post(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"contents":[
		{"role":"user","parts":[{"text":"list"}]},
		{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"error":"BLOCKED: rm is not allowed"}}}]}]}`)
	var text string
	for _, e := range readSSE(t, resp) {
		for _, p := range e.JSON(t)["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any) {
			text += p.(map[string]any)["text"].(string)
		}
	}
	if text != "All files are listed above." {
		t.Errorf("text %q", text)
	}
	reqs := s.Requests()
	if reqs[1].Turn != "#1" {
		t.Errorf("second request answered by %q", reqs[1].Turn)
	}
	res := reqs[1].ToolResults()
	if len(res) != 1 || res[0].Name != "run_shell_command" || !strings.Contains(res[0].Text, "BLOCKED: rm is not allowed") {
		t.Errorf("tool results %+v", res)
	}
	if got := s.Find("BLOCKED: rm"); len(got) != 1 {
		t.Errorf("Find found %d requests", len(got))
	}
}

func TestToolResultsPerProtocol(t *testing.T) {
	s := start(t)
	bodies := map[string]string{
		"/v1/messages":         `{"stream":false,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"Denied by \"warden\""}]}]}`,
		"/v1/chat/completions": `{"messages":[{"role":"tool","tool_call_id":"c1","content":"Denied by \"warden\""}]}`,
		"/v1/responses":        `{"stream":false,"input":[{"type":"function_call_output","call_id":"c1","output":"Denied by \"warden\""}]}`,
	}
	for path, body := range bodies {
		resp := post(t, s.URL+path, body)
		io.Copy(io.Discard, resp.Body)
	}
	for _, r := range s.Requests() {
		res := r.ToolResults()
		if len(res) != 1 || res[0].Text != `Denied by "warden"` {
			t.Errorf("%s: tool results %+v", r.Protocol, res)
		}
		if r.Protocol == scripted.Anthropic && !res[0].IsError {
			t.Errorf("anthropic is_error lost")
		}
		if !r.Contains(`Denied by "warden"`) {
			t.Errorf("%s: Contains misses decoded text", r.Protocol)
		}
	}
}

func TestBadRequests(t *testing.T) {
	s := start(t)
	if resp := post(t, s.URL+"/v1/nothing", `{}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if resp := post(t, s.URL+"/v1/messages", `{not json`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON: %d", resp.StatusCode)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("recorded %d requests, want 2", n)
	}
}

// TestConcurrent plays turns to concurrent clients (run with -race): every
// turn is played exactly once and every request is recorded.
func TestConcurrent(t *testing.T) {
	const n = 20
	var turns []scripted.Turn
	for i := range n {
		turns = append(turns, scripted.Turn{Name: fmt.Sprint(i), Text: fmt.Sprintf("turn %d", i)})
	}
	s := start(t, turns...)
	var wg sync.WaitGroup
	for range n + 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[]}`))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	fallback := 0
	for _, r := range s.Requests() {
		if r.Turn == "" {
			fallback++
			continue
		}
		if seen[r.Turn] {
			t.Errorf("turn %s played twice", r.Turn)
		}
		seen[r.Turn] = true
	}
	if len(seen) != n || fallback != 5 {
		t.Errorf("played %d turns and %d fallbacks", len(seen), fallback)
	}
}

func TestErrorStatusAndDelay(t *testing.T) {
	t.Parallel()
	s, err := scripted.Start(
		scripted.Turn{Name: "overloaded", Status: http.StatusTooManyRequests, Text: "rate limited"},
		scripted.Turn{Name: "slow", Delay: 5 * time.Second, Text: "late"},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp := post(t, s.URL+"/v1/chat/completions", `{"model":"m","messages":[]}`)
	var body struct {
		Error struct{ Message, Type string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || body.Error.Message != "rate limited" || body.Error.Type == "" {
		t.Errorf("error turn: status %d, body %+v", resp.StatusCode, body)
	}
	// The slow turn holds its answer; a client that gives up gets nothing.
	c := &http.Client{Timeout: 100 * time.Millisecond}
	start := time.Now()
	if _, err := c.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[]}`)); err == nil {
		t.Error("the delayed turn answered before the client's timeout")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("the client waited %v", el)
	}
	if got := s.Unplayed(); len(got) != 0 {
		t.Errorf("unplayed turns: %v", got)
	}
}
