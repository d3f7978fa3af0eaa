// Package replay decides the tool calls agents already made against a
// policy: it reads the transcripts the hosts keep (Claude Code's project
// JSONL files, Codex's rollout files, Gemini CLI's chat files, OpenCode's
// database) and warden's own audit trail, decides every recorded call in
// its session's context, and reports what the policy would have done, what
// changes between two policies, and the allow rules that would stop the
// most frequent asks (warden replay; docs/replay.md).
package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// Call is one recorded tool call, in the shape the host's hook would have
// sent it to warden.
type Call struct {
	// Host is the host that made it: claude, codex, gemini, opencode, or
	// the audit record's host.
	Host string `json:"host"`
	// Session is the host's session id.
	Session string `json:"session,omitempty"`
	// ID is the host's id of the call, when it has one.
	ID   string         `json:"id,omitempty"`
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	// Cwd is the folder the call was made in.
	Cwd  string    `json:"cwd,omitempty"`
	Time time.Time `json:"time"`
	// Role and Depth are the session's, where warden recorded them.
	Role  string `json:"role,omitempty"`
	Depth int    `json:"depth,omitempty"`
	// Source is where the call was read: FILE:LINE, or audit:ID.
	Source string `json:"source"`
}

// Skip is a recorded line replay could not read: a truncated line, a
// foreign one, a call without a tool.
type Skip struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Transcript is what one file held.
type Transcript struct {
	Host    string
	Calls   []Call
	Skipped []Skip
}

// maxLine bounds one transcript line (a tool result can be large).
const maxLine = 64 << 20

// ReadFile reads one transcript, its format found from its path and first
// line: a Claude Code project file, a Codex rollout, a Gemini CLI chat, or
// an OpenCode database. A file of none of these is an error; a line that
// cannot be read is skipped and counted.
func ReadFile(path string) (Transcript, error) {
	if strings.HasSuffix(path, ".db") {
		return readOpenCode(path, "")
	}
	f, err := os.Open(path)
	if err != nil {
		return Transcript{}, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(4096)
	host := sniff(path, head)
	switch host {
	case "claude":
		return readLines(path, br, host, claudeLine)
	case "codex":
		return readLines(path, br, host, (&codexState{}).line)
	case "gemini":
		return readGemini(path, br)
	}
	return Transcript{}, fmt.Errorf("%s: not a transcript replay reads (a Claude Code project .jsonl, a Codex rollout-*.jsonl, a Gemini CLI chats/session-*.json[l], or OpenCode's opencode.db)", path)
}

// sniff names the host whose transcript begins with head.
func sniff(path string, head []byte) string {
	base := filepath.Base(path)
	line, _, _ := bytes.Cut(head, []byte("\n"))
	var first map[string]json.RawMessage
	json.Unmarshal(line, &first)
	switch {
	case strings.HasPrefix(base, "rollout-") || first["type"] != nil && string(first["type"]) == `"session_meta"`:
		return "codex"
	case filepath.Base(filepath.Dir(path)) == "chats" || first["projectHash"] != nil:
		return "gemini"
	case strings.HasSuffix(base, ".jsonl") && (first["sessionId"] != nil || first["parentUuid"] != nil || bytes.Contains(head, []byte(`"sessionId"`))):
		return "claude"
	}
	return ""
}

// lineFunc reads one JSON line of a transcript into t (calls or nothing);
// an error skips the line.
type lineFunc func(t *Transcript, src string, obj map[string]json.RawMessage) error

func readLines(path string, r *bufio.Reader, host string, fn lineFunc) (Transcript, error) {
	t := Transcript{Host: host}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		src := fmt.Sprintf("%s:%d", path, n)
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Skipped = append(t.Skipped, Skip{src, "not a JSON object (a truncated or foreign line)"})
			continue
		}
		if err := fn(&t, src, obj); err != nil {
			t.Skipped = append(t.Skipped, Skip{src, err.Error()})
		}
	}
	if err := sc.Err(); err != nil {
		t.Skipped = append(t.Skipped, Skip{fmt.Sprintf("%s:%d", path, n+1), "the rest of the file: " + err.Error()})
	}
	return t, nil
}

func str(m map[string]json.RawMessage, k string) string {
	var s string
	json.Unmarshal(m[k], &s)
	return s
}

func stamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// claudeLine reads Claude Code's assistant lines: each tool_use block is a
// call (name and input, as its PreToolUse hook sends them).
func claudeLine(t *Transcript, src string, obj map[string]json.RawMessage) error {
	if str(obj, "type") != "assistant" {
		return nil
	}
	var msg struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(obj["message"], &msg); err != nil {
		return fmt.Errorf("an assistant line without a message")
	}
	var blocks []struct {
		Type  string         `json:"type"`
		ID    string         `json:"id"`
		Name  string         `json:"name"`
		Input map[string]any `json:"input"`
	}
	if json.Unmarshal(msg.Content, &blocks) != nil {
		return nil // text content
	}
	for _, b := range blocks {
		if b.Type != "tool_use" {
			continue
		}
		if b.Name == "" {
			return fmt.Errorf("a tool_use without a name")
		}
		if b.Input == nil {
			b.Input = map[string]any{}
		}
		t.Calls = append(t.Calls, Call{Host: "claude", Session: str(obj, "sessionId"), ID: b.ID, Tool: b.Name, Args: b.Input,
			Cwd: str(obj, "cwd"), Time: stamp(str(obj, "timestamp")), Source: src})
	}
	return nil
}

// codexState carries a rollout's session and folder from its session_meta
// and turn_context lines to its calls.
type codexState struct {
	session, cwd string
}

// line reads a Codex rollout line: function_call (exec_command, shell and
// MCP tools), local_shell_call and custom_tool_call (apply_patch) items
// are calls, in the shape Codex's PreToolUse hook gives them (a shell call
// is the tool Bash with the command line).
func (c *codexState) line(t *Transcript, src string, obj map[string]json.RawMessage) error {
	var p map[string]json.RawMessage
	json.Unmarshal(obj["payload"], &p)
	switch str(obj, "type") {
	case "session_meta":
		c.session, c.cwd = str(p, "id"), str(p, "cwd")
		return nil
	case "turn_context":
		if cwd := str(p, "cwd"); cwd != "" {
			c.cwd = cwd
		}
		return nil
	case "response_item":
	default:
		return nil
	}
	call := Call{Host: "codex", Session: c.session, Cwd: c.cwd, Time: stamp(str(obj, "timestamp")), Source: src, ID: str(p, "call_id")}
	switch str(p, "type") {
	case "function_call":
		call.Tool = str(p, "name")
		var args map[string]any
		if err := json.Unmarshal([]byte(str(p, "arguments")), &args); err != nil {
			return fmt.Errorf("function_call %s: its arguments are not a JSON object", call.Tool)
		}
		if workdir, _ := args["workdir"].(string); workdir != "" {
			call.Cwd = workdir
		}
		switch call.Tool {
		case "exec_command":
			cmd, _ := args["cmd"].(string)
			call.Tool, call.Args = "Bash", map[string]any{"command": cmd}
		case "shell", "container.exec":
			call.Tool, call.Args = "Bash", map[string]any{"command": argvLine(args["command"])}
		default:
			call.Args = args
		}
	case "local_shell_call":
		var a struct {
			Action struct {
				Command []any  `json:"command"`
				Workdir string `json:"working_directory"`
			} `json:"action"`
		}
		json.Unmarshal(obj["payload"], &a)
		call.Tool, call.Args = "Bash", map[string]any{"command": argvLine(a.Action.Command)}
		if a.Action.Workdir != "" {
			call.Cwd = a.Action.Workdir
		}
	case "custom_tool_call":
		call.Tool, call.Args = str(p, "name"), map[string]any{"input": str(p, "input")}
	default:
		return nil
	}
	if call.Tool == "" {
		return fmt.Errorf("a tool call without a name")
	}
	t.Calls = append(t.Calls, call)
	return nil
}

// argvLine is the command line of an argv: the script of bash -lc SCRIPT
// (what Codex's hook reports), else the words joined.
func argvLine(v any) string {
	list, _ := v.([]any)
	var words []string
	for _, w := range list {
		s, _ := w.(string)
		words = append(words, s)
	}
	if len(words) == 3 && (words[1] == "-lc" || words[1] == "-c") && (strings.HasSuffix(words[0], "sh")) {
		return words[2]
	}
	return strings.Join(words, " ")
}

// readGemini reads a Gemini CLI chat: a JSONL log (a header line with the
// sessionId, message lines, $set updates) or an older whole-JSON file; a
// message's toolCalls are the calls. The project folder is in the
// .project_root file beside chats/.
func readGemini(path string, r *bufio.Reader) (Transcript, error) {
	root, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(path)), ".project_root"))
	cwd := strings.TrimSpace(string(root))
	session := ""
	msg := func(t *Transcript, src string, m map[string]json.RawMessage) error {
		if m["toolCalls"] == nil {
			return nil
		}
		var calls []struct {
			ID   string         `json:"id"`
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		}
		if err := json.Unmarshal(m["toolCalls"], &calls); err != nil {
			return fmt.Errorf("toolCalls is not a list of calls")
		}
		for _, c := range calls {
			if c.Name == "" {
				return fmt.Errorf("a tool call without a name")
			}
			if c.Args == nil {
				c.Args = map[string]any{}
			}
			t.Calls = append(t.Calls, Call{Host: "gemini", Session: session, ID: c.ID, Tool: c.Name, Args: c.Args, Cwd: cwd,
				Time: stamp(str(m, "timestamp")), Source: src})
		}
		return nil
	}
	if strings.HasSuffix(path, ".json") {
		data, err := io.ReadAll(r)
		if err != nil {
			return Transcript{}, err
		}
		var whole struct {
			SessionID string                       `json:"sessionId"`
			Messages  []map[string]json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(data, &whole); err != nil {
			return Transcript{Host: "gemini", Skipped: []Skip{{path, "not a Gemini CLI chat (JSON): " + err.Error()}}}, nil
		}
		session = whole.SessionID
		t := Transcript{Host: "gemini"}
		for i, m := range whole.Messages {
			if err := msg(&t, fmt.Sprintf("%s:message %d", path, i+1), m); err != nil {
				t.Skipped = append(t.Skipped, Skip{fmt.Sprintf("%s:message %d", path, i+1), err.Error()})
			}
		}
		return t, nil
	}
	t, err := readLines(path, r, "gemini", func(t *Transcript, src string, obj map[string]json.RawMessage) error {
		if s := str(obj, "sessionId"); s != "" && obj["projectHash"] != nil {
			session = s
			return nil
		}
		if obj["$set"] != nil {
			var set struct {
				Messages []map[string]json.RawMessage `json:"messages"`
			}
			json.Unmarshal(obj["$set"], &set)
			for _, m := range set.Messages {
				if err := msg(t, src, m); err != nil {
					return err
				}
			}
			return nil
		}
		return msg(t, src, obj)
	})
	// A message can be logged again (a $set of the whole list): a call
	// id counts once.
	seen := map[string]bool{}
	calls := t.Calls[:0]
	for _, c := range t.Calls {
		if c.ID != "" && seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		calls = append(calls, c)
	}
	t.Calls = calls
	return t, err
}

// Redacted returns the call with secrets in its arguments redacted, for
// reports.
func (c Call) Redacted() Call {
	c.Args = warden.RedactArgs(c.Args)
	return c
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if path == "" || dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
