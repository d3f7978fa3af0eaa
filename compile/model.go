package compile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Model is an OpenAI-compatible chat completions endpoint (OpenAI, Ollama's
// /v1, vLLM, llama.cpp's server, ...). It speaks the wire protocol with
// net/http: one POST per call, no streaming, structured output through
// response_format json_schema. warden needs one request shape and three
// fields of the answer; the official SDK would add a large generated API
// and its own dependencies (and OpenAI-only defaults) for that, so plain
// net/http keeps go.mod as it is.
type Model struct {
	// BaseURL is the API base, e.g. https://api.openai.com/v1 or
	// http://127.0.0.1:11434/v1; /chat/completions is appended.
	BaseURL string
	// Name is the model name sent in every request.
	Name string
	// APIKey is sent as a bearer token when not empty. It is never
	// printed, logged or put in an error.
	APIKey string
	// Timeout bounds one call (default 2m).
	Timeout time.Duration
	// HTTP is the client used (default: a new client).
	HTTP *http.Client

	// jsonObject is set once the server refused a json_schema
	// response_format: later calls ask for a JSON object instead, and the
	// schema travels in the prompt (the answer is checked against it here
	// either way).
	jsonObject bool
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Reply is one model answer.
type Reply struct {
	Content string
	// FinishReason is the model's: "stop", "length", ...
	FinishReason string
	// PromptTokens and CompletionTokens are the usage the server
	// reported (zero when it reports none).
	PromptTokens, CompletionTokens int
	Elapsed                        time.Duration
}

// ModelError is a failure to get an answer from the model: unreachable,
// timed out, or an HTTP error. It is never sent back to the model.
type ModelError struct {
	// Status is the HTTP status, zero when there was no answer.
	Status int
	Msg    string
}

func (e *ModelError) Error() string { return e.Msg }

// Chat sends messages and asks for an answer that follows schema. A server
// that refuses structured output with a JSON Schema (HTTP 400 naming
// response_format or json_schema) is asked once more for a plain JSON
// object with the schema in the prompt, and so is every later call. Chat
// is not safe for concurrent use.
func (m *Model) Chat(ctx context.Context, msgs []Message, schema json.RawMessage) (Reply, error) {
	if !m.jsonObject {
		r, err := m.chat(ctx, msgs, schema)
		var me *ModelError
		if !errors.As(err, &me) || me.Status != http.StatusBadRequest ||
			!(strings.Contains(me.Msg, "response_format") || strings.Contains(me.Msg, "json_schema")) {
			return r, err
		}
		m.jsonObject = true
	}
	withSchema := append([]Message(nil), msgs...)
	withSchema = append(withSchema, Message{Role: "system", Content: "Answer with one JSON object that follows this JSON Schema:\n" + string(schema)})
	return m.chat(ctx, withSchema, nil)
}

// chat makes one call; a nil schema asks for a JSON object.
func (m *Model) chat(ctx context.Context, msgs []Message, schema json.RawMessage) (Reply, error) {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	format := map[string]any{"type": "json_object"}
	if schema != nil {
		format = map[string]any{
			"type": "json_schema",
			"json_schema": map[string]any{
				"name":   "warden_rules",
				"strict": true,
				"schema": schema,
			},
		}
	}
	req := map[string]any{
		"model":           m.Name,
		"messages":        msgs,
		"temperature":     0,
		"stream":          false,
		"response_format": format,
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Reply{}, err
	}
	url := strings.TrimSuffix(m.BaseURL, "/") + "/chat/completions"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Reply{}, &ModelError{Msg: fmt.Sprintf("model base URL %q: %v", m.BaseURL, err)}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if m.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+m.APIKey)
	}
	client := m.HTTP
	if client == nil {
		client = &http.Client{}
	}
	start := time.Now()
	resp, err := client.Do(hr)
	if err != nil {
		return Reply{}, m.transportError(ctx, err, timeout)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return Reply{}, m.transportError(ctx, err, timeout)
	}
	if resp.StatusCode != http.StatusOK {
		text := errorText(data)
		if m.APIKey != "" { // some servers echo the key they refused
			text = strings.ReplaceAll(text, m.APIKey, "[the key]")
		}
		return Reply{}, &ModelError{Status: resp.StatusCode, Msg: fmt.Sprintf("model at %s answered HTTP %d: %s%s",
			m.BaseURL, resp.StatusCode, text, statusHint(resp.StatusCode))}
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal string  `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return Reply{}, &ModelError{Status: resp.StatusCode, Msg: fmt.Sprintf("model at %s answered something that is not a chat completion: %v", m.BaseURL, err)}
	}
	if len(out.Choices) == 0 {
		return Reply{}, &ModelError{Status: resp.StatusCode, Msg: fmt.Sprintf("model at %s answered no choices", m.BaseURL)}
	}
	ch := out.Choices[0]
	r := Reply{FinishReason: ch.FinishReason, PromptTokens: out.Usage.PromptTokens,
		CompletionTokens: out.Usage.CompletionTokens, Elapsed: time.Since(start)}
	if ch.Message.Content != nil {
		r.Content = *ch.Message.Content
	}
	if r.Content == "" && ch.Message.Refusal != "" {
		return r, &ModelError{Status: resp.StatusCode, Msg: "the model refused: " + ch.Message.Refusal}
	}
	return r, nil
}

func (m *Model) transportError(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &ModelError{Msg: fmt.Sprintf("model at %s did not answer within %s (raise --timeout, or use a smaller or faster model)", m.BaseURL, timeout)}
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return &ModelError{Msg: "interrupted while waiting for the model"}
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return &ModelError{Msg: fmt.Sprintf("model at %s cannot be reached: %v (is the server running? check --base-url)", m.BaseURL, op.Err)}
	}
	return &ModelError{Msg: fmt.Sprintf("model at %s: %v", m.BaseURL, err)}
}

// errorText extracts the message of an OpenAI-style error body.
func errorText(data []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

func statusHint(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return " (check the API key in WARDEN_LLM_API_KEY or OPENAI_API_KEY)"
	case http.StatusNotFound:
		return " (check --base-url, which usually ends in /v1, and --model)"
	case http.StatusTooManyRequests:
		return " (rate limited: wait and run again)"
	}
	return ""
}
