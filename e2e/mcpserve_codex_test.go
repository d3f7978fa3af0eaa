package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// mcpCall is a tool name the scripted model calls as an MCP server's tool:
// mcp__SERVER__TOOL.
var mcpCall = regexp.MustCompile(`^(mcp__[A-Za-z0-9_-]+?)__([A-Za-z0-9_-]+)$`)

// codexNamespaces puts a front before the scripted model server that
// answers Codex's MCP tool calls as Codex expects them, and points Codex's
// config (setupCodexAsUser) at it. Codex offers an MCP server's tools to
// the model as one tool of type namespace, named mcp__SERVER, with the
// server's tools inside it; the model calls one as a function_call with
// namespace mcp__SERVER and name TOOL. The scripted model names the call
// mcp__SERVER__TOOL, as Codex's hooks and warden's audit name it; the
// front splits it. A call named so otherwise is "unsupported" to Codex.
func (e *env) codexNamespaces() {
	t := e.t
	t.Helper()
	target, err := url.Parse(e.model.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = splitNamespaces(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	front := httptest.NewServer(rp)
	t.Cleanup(front.Close)
	cfg := filepath.Join(e.codexHome(), "config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.write(cfg, strings.Replace(string(data), e.model.URL, front.URL, 1))
}

// splitNamespaces rewrites every function_call item of a Responses answer
// (SSE events or a JSON body) whose name is mcp__SERVER__TOOL.
func splitNamespaces(body []byte) []byte {
	var fix func(v any)
	fix = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "function_call" {
				if name, _ := x["name"].(string); mcpCall.MatchString(name) {
					m := mcpCall.FindStringSubmatch(name)
					x["namespace"], x["name"] = m[1], m[2]
				}
			}
			for _, c := range x {
				fix(c)
			}
		case []any:
			for _, c := range x {
				fix(c)
			}
		}
	}
	lines := bytes.Split(body, []byte("\n"))
	for i, l := range lines {
		data, ok := bytes.CutPrefix(l, []byte("data: "))
		if !ok {
			if i == 0 && bytes.HasPrefix(bytes.TrimSpace(l), []byte("{")) {
				data = l
			} else {
				continue
			}
		}
		var v any
		if json.Unmarshal(data, &v) != nil {
			continue
		}
		fix(v)
		out, err := json.Marshal(v)
		if err != nil {
			continue
		}
		if ok {
			lines[i] = append([]byte("data: "), out...)
		} else {
			lines[i] = out
		}
	}
	return bytes.Join(lines, []byte("\n"))
}
