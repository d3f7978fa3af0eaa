// Package scripted is a model server for tests: one HTTP server on
// 127.0.0.1 that speaks the streaming wire protocols of the agent hosts
// warden governs, plays a script of turns (text and tool calls) and records
// every request, so a test can read what the host sent back to the model
// (the tool_result, function_call_output or functionResponse).
//
// Protocols (paths as the hosts call them):
//
//	Anthropic Messages      POST /v1/messages (SSE when "stream": true), POST /v1/messages/count_tokens
//	OpenAI chat completions POST /v1/chat/completions (SSE chunks, "data: [DONE]")
//	OpenAI Responses        POST /v1/responses (SSE events)
//	Gemini                  POST /v1beta/models/{model}:streamGenerateContent?alt=sse, :generateContent, :countTokens
//
// A request is answered by the first unplayed turn of the script whose Match
// accepts it (a nil Match accepts every request); a played turn is not
// played again. A request no turn accepts (a host's side request, such as a
// title or a quota check, or a request after the script ran out) gets the
// Fallback text. Server is safe for concurrent use.
package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Protocol names, as recorded in Request.Protocol.
const (
	Anthropic       = "anthropic"
	AnthropicCount  = "anthropic-count-tokens"
	OpenAIChat      = "openai-chat"
	OpenAIResponses = "openai-responses"
	Gemini          = "gemini"
	GeminiCount     = "gemini-count-tokens"
)

// Turn is one answer of the scripted model: optional text, then tool calls.
type Turn struct {
	// Name labels the turn in Request.Turn and in errors.
	Name string
	// Match selects the requests this turn answers; nil accepts any.
	Match func(*Request) bool
	// Text is the assistant's text (may be empty when ToolCalls is not).
	Text string
	// Reply, when set, makes the text from the request it answers (an
	// answer that quotes what the host sent, such as a nonce); it replaces
	// Text.
	Reply func(*Request) string
	// ToolCalls are the calls the model makes in this turn.
	ToolCalls []ToolCall
	// Delay holds the answer back this long (or until the client gives
	// up): a slow or hanging model.
	Delay time.Duration
	// Status, when not zero, answers with this HTTP status and an error
	// body in the protocol's own shape, with Text as the message: a
	// failing model (500, 429, 401 ...).
	Status int
}

// ToolCall is one tool call in a turn. ID is generated when empty.
type ToolCall struct {
	ID   string
	Name string
	Args map[string]any
}

// Request is one recorded request.
type Request struct {
	Protocol string
	Path     string
	Body     []byte
	// Turn is the Name of the turn that answered it ("" for the fallback;
	// "#N" for an unnamed turn N of the script, counting from 0).
	Turn string
	// Stream reports whether the answer was streamed.
	Stream bool

	once    sync.Once
	text    string
	decoded any
}

// Server is a scripted model server. Create it with Start.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, without a trailing slash.
	URL string
	// Fallback is the text answered when no turn matches; default "Done.".
	Fallback string
	// CountPromptTokens has OpenAI chat answers report prompt tokens
	// estimated from the request (about four bytes a token), as a real
	// server counts them, instead of a fixed 10. Hosts that compact their
	// context by the reported usage behave differently with it, so it is
	// off by default.
	CountPromptTokens bool

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	turns    []Turn
	played   []bool
	requests []*Request
	seq      int
}

// Start starts a server on 127.0.0.1 on a random port with the given turns.
func Start(turns ...Turn) (*Server, error) {
	return Listen("127.0.0.1:0", turns...)
}

// Listen starts a server on addr (host:port) with the given turns.
func Listen(addr string, turns ...Turn) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("scripted: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, Fallback: "Done."}
	s.Add(turns...)
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Add appends turns to the script.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
	s.played = append(s.played, make([]bool, len(turns))...)
}

// Requests returns the recorded requests, oldest first.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Unplayed returns the names of the turns not played yet.
func (s *Server) Unplayed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, p := range s.played {
		if !p {
			out = append(out, turnName(s.turns[i], i))
		}
	}
	return out
}

// Find returns the recorded requests whose text contains sub.
func (s *Server) Find(sub string) []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Contains(sub) {
			out = append(out, r)
		}
	}
	return out
}

func turnName(t Turn, i int) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("#%d", i)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	path := r.URL.Path
	req := &Request{Path: r.URL.RequestURI(), Body: body}
	switch {
	case r.Method != http.MethodPost:
		// Hosts probe a few GET endpoints (model lists); answer them empty.
		s.record(req)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		return
	case strings.HasSuffix(path, "/messages/count_tokens"):
		req.Protocol = AnthropicCount
	case strings.HasSuffix(path, "/messages"):
		req.Protocol = Anthropic
	case strings.HasSuffix(path, "/chat/completions"):
		req.Protocol = OpenAIChat
	case strings.HasSuffix(path, "/responses"):
		req.Protocol = OpenAIResponses
	case strings.HasSuffix(path, ":countTokens"):
		req.Protocol = GeminiCount
	case strings.HasSuffix(path, ":streamGenerateContent"), strings.HasSuffix(path, ":generateContent"):
		req.Protocol = Gemini
	default:
		s.record(req)
		http.Error(w, "scripted: unknown path "+path, http.StatusNotFound)
		return
	}
	if len(body) > 0 && !json.Valid(body) {
		s.record(req)
		http.Error(w, "scripted: request body is not JSON", http.StatusBadRequest)
		return
	}
	var head struct {
		Stream *bool  `json:"stream"`
		Model  string `json:"model"`
	}
	json.Unmarshal(body, &head)
	model := head.Model
	switch req.Protocol {
	case AnthropicCount:
		s.record(req)
		writeJSON(w, map[string]any{"input_tokens": 1 + len(body)/4})
		return
	case GeminiCount:
		s.record(req)
		writeJSON(w, map[string]any{"totalTokens": 1 + len(body)/4})
		return
	case Gemini:
		req.Stream = strings.HasSuffix(path, ":streamGenerateContent")
		model = geminiModel(path)
	case OpenAIResponses:
		req.Stream = head.Stream == nil || *head.Stream
	default:
		req.Stream = head.Stream != nil && *head.Stream
	}

	turn, id := s.pick(req)
	if turn.Delay > 0 {
		select {
		case <-time.After(turn.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if turn.Status != 0 {
		writeError(w, req.Protocol, turn.Status, turn.Text)
		return
	}
	switch req.Protocol {
	case Anthropic:
		writeAnthropic(w, req.Stream, turn, model, id)
	case OpenAIChat:
		prompt := 10
		if s.CountPromptTokens {
			prompt = 1 + len(body)/4
		}
		writeOpenAIChat(w, req.Stream, turn, model, id, prompt)
	case OpenAIResponses:
		writeResponses(w, req.Stream, turn, model, id)
	case Gemini:
		writeGemini(w, req.Stream, turn, model)
	}
}

func (s *Server) record(req *Request) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
}

// pick records req, chooses the turn that answers it and returns it with a
// sequence number for ids.
func (s *Server) pick(req *Request) (Turn, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.requests = append(s.requests, req)
	for i, t := range s.turns {
		if s.played[i] || (t.Match != nil && !t.Match(req)) {
			continue
		}
		s.played[i] = true
		req.Turn = turnName(t, i)
		if t.Reply != nil {
			t.Text = t.Reply(req)
		}
		// Fill in tool call ids so that recorded results can be matched.
		calls := make([]ToolCall, len(t.ToolCalls))
		for j, c := range t.ToolCalls {
			if c.ID == "" {
				c.ID = fmt.Sprintf("call_%d_%d", s.seq, j)
			}
			if c.Args == nil {
				c.Args = map[string]any{}
			}
			calls[j] = c
		}
		t.ToolCalls = calls
		return t, s.seq
	}
	return Turn{Text: s.Fallback}, s.seq
}

// Contains reports whether the request's body contains sub, either as raw
// bytes or inside any JSON string value once decoded.
func (r *Request) Contains(sub string) bool {
	return bytes.Contains(r.Body, []byte(sub)) || strings.Contains(r.Text(), sub)
}

// Text returns every JSON string value of the body, decoded, one per line.
func (r *Request) Text() string {
	r.decode()
	return r.text
}

// JSON returns the decoded body (nil when it is empty).
func (r *Request) JSON() any {
	r.decode()
	return r.decoded
}

func (r *Request) decode() {
	r.once.Do(func() {
		if json.Unmarshal(r.Body, &r.decoded) != nil {
			return
		}
		var b strings.Builder
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				b.WriteString(v)
				b.WriteByte('\n')
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for _, e := range v {
					walk(e)
				}
			}
		}
		walk(r.decoded)
		r.text = b.String()
	})
}

// HasTools reports whether the request offers the model any tools.
func (r *Request) HasTools() bool {
	m, _ := r.JSON().(map[string]any)
	tools, _ := m["tools"].([]any)
	return len(tools) > 0
}

// ToolResults returns the text of every tool result the request carries
// back to the model, in order: Anthropic tool_result blocks, OpenAI chat
// "tool" messages, Responses function_call_output items and Gemini
// functionResponse parts (as JSON).
func (r *Request) ToolResults() []ToolResult {
	m, _ := r.JSON().(map[string]any)
	var out []ToolResult
	switch r.Protocol {
	case Anthropic:
		for _, msg := range list(m["messages"]) {
			mm, _ := msg.(map[string]any)
			for _, blk := range list(mm["content"]) {
				b, _ := blk.(map[string]any)
				if b["type"] != "tool_result" {
					continue
				}
				isErr, _ := b["is_error"].(bool)
				out = append(out, ToolResult{ID: str(b["tool_use_id"]), Text: contentText(b["content"]), IsError: isErr})
			}
		}
	case OpenAIChat:
		for _, msg := range list(m["messages"]) {
			mm, _ := msg.(map[string]any)
			if mm["role"] == "tool" {
				out = append(out, ToolResult{ID: str(mm["tool_call_id"]), Text: contentText(mm["content"])})
			}
		}
	case OpenAIResponses:
		for _, it := range list(m["input"]) {
			im, _ := it.(map[string]any)
			if im["type"] == "function_call_output" || im["type"] == "custom_tool_call_output" {
				out = append(out, ToolResult{ID: str(im["call_id"]), Text: contentText(im["output"])})
			}
		}
	case Gemini:
		for _, c := range list(m["contents"]) {
			cm, _ := c.(map[string]any)
			for _, p := range list(cm["parts"]) {
				pm, _ := p.(map[string]any)
				fr, ok := pm["functionResponse"].(map[string]any)
				if !ok {
					continue
				}
				js, _ := json.Marshal(fr["response"])
				out = append(out, ToolResult{ID: str(fr["id"]), Name: str(fr["name"]), Text: string(js)})
			}
		}
	}
	return out
}

// ToolResult is one tool result a host sent back to the model.
type ToolResult struct {
	ID      string
	Name    string
	Text    string
	IsError bool
}

// HasToolResult matches requests that carry at least one tool result.
func HasToolResult(r *Request) bool { return len(r.ToolResults()) > 0 }

// MinToolResults returns a Match that accepts requests offering tools and
// carrying at least n tool results: the way to order the turns of a
// conversation (turn k+1 answers the request that brings result k back)
// while side requests without tools fall through to the fallback.
func MinToolResults(n int) func(*Request) bool {
	return func(r *Request) bool { return r.HasTools() && len(r.ToolResults()) >= n }
}

// Contains returns a Match that accepts requests containing sub.
func Contains(sub string) func(*Request) bool {
	return func(r *Request) bool { return r.Contains(sub) }
}

// All returns a Match that accepts requests every m accepts.
func All(ms ...func(*Request) bool) func(*Request) bool {
	return func(r *Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

// Not negates a Match.
func Not(m func(*Request) bool) func(*Request) bool {
	return func(r *Request) bool { return !m(r) }
}

// HasTools is a Match that accepts requests offering tools.
func HasTools(r *Request) bool { return r.HasTools() }

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// contentText flattens a content value: a string, or a list of blocks with
// "text" (or nested "content"), or anything else as JSON.
func contentText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []any:
		var parts []string
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
					continue
				}
				if c, ok := m["content"]; ok {
					parts = append(parts, contentText(c))
					continue
				}
			}
			parts = append(parts, contentText(e))
		}
		return strings.Join(parts, "\n")
	}
	js, _ := json.Marshal(v)
	return string(js)
}

func geminiModel(path string) string {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "gemini"
	}
	m := path[i+len("/models/"):]
	if j := strings.IndexByte(m, ':'); j >= 0 {
		m = m[:j]
	}
	return m
}

// writeError answers with an HTTP error status and the protocol's error body.
func writeError(w http.ResponseWriter, protocol string, status int, msg string) {
	var body map[string]any
	switch protocol {
	case Anthropic, AnthropicCount:
		body = map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}}
	case Gemini, GeminiCount:
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INTERNAL"}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events and flushes after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name may be empty. v is marshalled unless it is
// a string.
func (s *sse) event(name string, v any) {
	var data string
	if str, ok := v.(string); ok {
		data = str
	} else {
		js, _ := json.Marshal(v)
		data = string(js)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if s.f != nil {
		s.f.Flush()
	}
}

// chunks splits text in two pieces so clients see a real stream.
func chunks(text string) []string {
	if len(text) < 8 {
		return []string{text}
	}
	i := len(text) / 2
	for i < len(text) && (text[i]&0xC0) == 0x80 { // keep UTF-8 sequences whole
		i++
	}
	return []string{text[:i], text[i:]}
}

func argsJSON(c ToolCall) string {
	js, _ := json.Marshal(c.Args)
	return string(js)
}
