package reportgate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// maxTranscriptLine bounds one line of a transcript (a large tool result).
const maxTranscriptLine = 64 << 20

// LastMessage returns the text of the last assistant message in a host's
// JSONL transcript: Claude Code's (lines {"type": "assistant", "message":
// {"id", "content": [{"type": "text", "text"}, ...]}}, one line per
// content block, joined by message id) and Codex's rollout file (lines
// {"type": "response_item", "payload": {"type": "message", "role":
// "assistant", "content": [{"type": "output_text", "text"}]}}). It returns
// "" when the transcript has no assistant text.
func LastMessage(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read the transcript: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxTranscriptLine)
	var last, lastID string
	var parts []string
	for sc.Scan() {
		line := sc.Bytes()
		var l struct {
			Type    string `json:"type"`
			Message *struct {
				ID      string          `json:"id"`
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			Payload *struct {
				Type    string          `json:"type"`
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue // a line cut short while the host writes
		}
		switch {
		case l.Type == "assistant" && l.Message != nil:
			text := contentText(l.Message.Content)
			if l.Message.ID != "" && l.Message.ID == lastID {
				if text != "" {
					parts = append(parts, text)
				}
			} else {
				lastID, parts = l.Message.ID, nil
				if text != "" {
					parts = []string{text}
				}
			}
			if len(parts) > 0 {
				last = strings.Join(parts, "\n")
			}
		case l.Type == "response_item" && l.Payload != nil && l.Payload.Type == "message" && l.Payload.Role == "assistant":
			if text := contentText(l.Payload.Content); text != "" {
				last, lastID, parts = text, "", nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read the transcript %s: %w", path, err)
	}
	return last, nil
}

// contentText joins the text parts of a message's content (a string, or
// a list of parts of type text or output_text).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		if (p.Type == "text" || p.Type == "output_text") && p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}
