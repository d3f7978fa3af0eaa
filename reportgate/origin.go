package reportgate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/report"
)

// The bounds of what a completion carries of the conversation
// (docs/reports.md, "What on_complete receives").
const (
	// MaxMessages is how many of the conversation's last messages a
	// completion carries.
	MaxMessages = 40
	// MaxMessageBytes cuts each message's text.
	MaxMessageBytes = 4 << 10
	// MaxMessagesBytes bounds the texts of all the messages together: the
	// oldest are left out first.
	MaxMessagesBytes = 32 << 10
	// MaxRequestBytes cuts the user's request.
	MaxRequestBytes = 8 << 10
)

// Origin gathers what a completion of session s carries besides its
// report (report.Origin): the user's request, the conversation's last
// messages, the agent and the transcript's path. The messages come from
// the host's transcript (transcript, "" when the host gave none); the
// request is its first user message, else the first request the response
// cache recorded (req, nil when none), else the session's latest prompt.
// Every text is redacted (warden.RedactString) and cut. A transcript that
// cannot be read leaves the messages out and is returned as the error
// beside the rest.
func Origin(s warden.Session, transcript string, req *warden.ReportRequest) (report.Origin, error) {
	o := report.Origin{Transcript: transcript, Agent: &report.Agent{Host: s.Host, Session: s.ID, Parent: s.Parent, Role: s.Role, Depth: s.Depth}}
	if s.Parent != "" && strings.HasPrefix(s.ID, s.Parent+"/") {
		o.Agent.Name = s.ID[len(s.Parent)+1:]
	}
	var err error
	var msgs []report.Message
	if transcript != "" {
		msgs, err = Messages(transcript)
	}
	for _, m := range msgs {
		if m.Role == "user" {
			o.Request = m.Text
			break
		}
	}
	switch {
	case o.Request != "":
	case req != nil && req.Request != "":
		o.Request = req.Request
	default:
		o.Request = s.Intent
	}
	o.Request = redactCut(strings.TrimSpace(o.Request), MaxRequestBytes)
	o.Messages, o.MessagesOmitted = bound(msgs)
	return o, err
}

// bound keeps the last messages within MaxMessages and MaxMessagesBytes,
// each redacted and cut to MaxMessageBytes, and counts the ones left out.
func bound(msgs []report.Message) ([]report.Message, int) {
	var out []report.Message
	total := 0
	for i := len(msgs) - 1; i >= 0 && len(out) < MaxMessages; i-- {
		t := redactCut(msgs[i].Text, MaxMessageBytes)
		if total+len(t) > MaxMessagesBytes {
			break
		}
		total += len(t)
		out = append(out, report.Message{Role: msgs[i].Role, Text: t})
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, len(msgs) - len(out)
}

// redactCut is s with its secrets redacted, cut to max bytes at a break
// (warden.RedactArgsCut's rules for a string).
func redactCut(s string, max int) string {
	if s == "" {
		return ""
	}
	t, _ := warden.RedactArgsCut(map[string]any{"s": s}, max)["s"].(string)
	return t
}

// hostContext are the tags of the blocks a host puts into a user message
// of its own (its session context, a hook's text, AGENTS.md): a message
// that holds only such blocks is not the user's.
var hostContext = []string{"environment_context", "user_instructions", "session_context", "hook_context", "system-reminder",
	"command-name", "command-message", "command-args", "local-command-stdout", "local-command-caveat"}

// userText is a user message's text without the host's blocks at its
// start.
func userText(s string) string {
	for {
		s = strings.TrimSpace(s)
		cut := false
		for _, tag := range hostContext {
			if strings.HasPrefix(s, "<"+tag+">") {
				end := strings.Index(s, "</"+tag+">")
				if end < 0 {
					return ""
				}
				s, cut = s[end+len(tag)+3:], true
				break
			}
		}
		if strings.HasPrefix(s, "# AGENTS.md instructions for ") {
			return ""
		}
		if !cut {
			return s
		}
	}
}

// Messages reads the user and assistant messages of a host's transcript,
// oldest first: Claude Code's project JSONL, Codex's rollout JSONL and
// Gemini CLI's chat (JSONL or whole JSON). Tool calls and results, the
// host's own context blocks, subagents' side chains and meta lines are
// not messages. An assistant message split over lines (Claude Code writes
// one line per content block) is one message. The texts are as the host
// wrote them: not redacted, not cut.
func Messages(path string) ([]report.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the transcript: %w", err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".json") {
		data, err := io.ReadAll(io.LimitReader(f, maxTranscriptLine))
		if err != nil {
			return nil, fmt.Errorf("read the transcript %s: %w", path, err)
		}
		var whole struct {
			Messages []geminiMessage `json:"messages"`
		}
		if err := json.Unmarshal(data, &whole); err != nil {
			return nil, fmt.Errorf("read the transcript %s: not a Gemini CLI chat: %w", path, err)
		}
		var r msgReader
		r.gemini = whole.Messages
		return r.result(), nil
	}
	var r msgReader
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxTranscriptLine)
	for sc.Scan() {
		r.line(bytes.TrimSpace(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the transcript %s: %w", path, err)
	}
	return r.result(), nil
}

// geminiMessage is a message of a Gemini CLI chat.
type geminiMessage struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
}

// msgReader collects the messages of a transcript, line by line.
type msgReader struct {
	msgs   []report.Message
	lastID string // the id of the last Claude Code assistant message
	// gemini holds a Gemini CLI chat's messages: a message is logged again
	// when it changes, and a $set line replaces the list.
	gemini []geminiMessage
	index  map[string]int
}

func (r *msgReader) add(role, text, id string) {
	if role == "user" {
		text = userText(text)
	}
	text = strings.TrimSpace(text)
	if role == "assistant" && id != "" && id == r.lastID && len(r.msgs) > 0 {
		if text != "" {
			last := &r.msgs[len(r.msgs)-1]
			last.Text = strings.TrimSpace(last.Text + "\n" + text)
		}
		return
	}
	r.lastID = ""
	if role == "assistant" {
		r.lastID = id
		if text == "" {
			// A tool call's line: the next line of the message may
			// still hold its text.
			r.msgs = append(r.msgs, report.Message{Role: role})
			return
		}
	}
	if text != "" {
		r.msgs = append(r.msgs, report.Message{Role: role, Text: text})
	}
}

func (r *msgReader) line(line []byte) {
	var l struct {
		Type        string `json:"type"`
		IsMeta      bool   `json:"isMeta"`
		IsSidechain bool   `json:"isSidechain"`
		IsSummary   bool   `json:"isCompactSummary"`
		Message     *struct {
			ID      string          `json:"id"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		Payload *struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"payload"`
		Set *struct {
			Messages []geminiMessage `json:"messages"`
		} `json:"$set"`
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
	}
	if len(line) == 0 || json.Unmarshal(line, &l) != nil {
		return // a line cut short while the host writes, or a foreign one
	}
	switch {
	case (l.Type == "user" || l.Type == "assistant") && l.Message != nil: // Claude Code
		if l.IsMeta || l.IsSidechain || l.IsSummary {
			return
		}
		r.add(l.Type, contentText(l.Message.Content), l.Message.ID)
	case l.Type == "response_item" && l.Payload != nil && l.Payload.Type == "message": // Codex
		if l.Payload.Role == "user" || l.Payload.Role == "assistant" {
			r.add(l.Payload.Role, partsText(l.Payload.Content), "")
		}
	case l.Set != nil && l.Set.Messages != nil: // Gemini CLI: the whole list
		r.gemini, r.index = nil, nil
		for _, m := range l.Set.Messages {
			r.geminiMessage(m)
		}
	case l.ID != "" && (l.Type == "user" || l.Type == "gemini") && l.Content != nil:
		r.geminiMessage(geminiMessage{ID: l.ID, Type: l.Type, Content: l.Content})
	}
}

func (r *msgReader) geminiMessage(m geminiMessage) {
	if r.index == nil {
		r.index = map[string]int{}
	}
	if i, ok := r.index[m.ID]; ok && m.ID != "" {
		r.gemini[i] = m
		return
	}
	r.index[m.ID] = len(r.gemini)
	r.gemini = append(r.gemini, m)
}

// result is the messages read, a Gemini CLI chat's in its order.
func (r *msgReader) result() []report.Message {
	for _, m := range r.gemini {
		switch m.Type {
		case "user":
			r.add("user", partsText(m.Content), "")
		case "gemini":
			r.add("assistant", partsText(m.Content), "")
		}
	}
	out := r.msgs[:0]
	for _, m := range r.msgs {
		if m.Text != "" {
			out = append(out, m)
		}
	}
	return out
}

// partsText joins the text of a content: a string, or a list of parts
// with a text (Codex's input_text and output_text, Gemini CLI's {text}).
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		if p.Text != nil && *p.Text != "" && (p.Type == "" || p.Type == "text" || p.Type == "input_text" || p.Type == "output_text") {
			out = append(out, *p.Text)
		}
	}
	return strings.Join(out, "\n")
}
