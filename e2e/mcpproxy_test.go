package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
)

// The real MCP server and client of the proxy's e2e (HOSTS.md).
var (
	mcpFilesystemSpec = hostSpec{"mcp-server-filesystem", "2026.8.31", "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"}
	mcpInspectorSpec  = hostSpec{"mcp-inspector", "2.12.0", "node_modules/.bin/mcp-inspector"}
)

const mcpProxyPolicy = `version: 1
default: {safe: allow, destructive: ask}
workspace: {root: ., outside: deny}
rules:
  - id: no-secret-writes
    effect: deny
    tool: mcp__filesystem__write_file
    path: "secret/**"
    message: Files in secret/ are written by the release process only.
    suggestion: Write the file under docs/ instead, or ask the user.
  - id: docs-writes
    effect: allow
    tool: mcp__filesystem__write_file
    path: "docs/**"
roles:
  reader:
    tools: [read, list]
  builder:
    tools: [read, list, write, edit]
`

// mcpProxyEnv is a project governed by warden's MCP proxy in front of the
// real filesystem server, driven by the real MCP inspector's CLI.
type mcpProxyEnv struct {
	*env
	inspector, server string
}

func newMCPProxyEnv(t *testing.T) *mcpProxyEnv {
	t.Helper()
	server := requireHost(t, mcpFilesystemSpec)
	inspector := requireHost(t, mcpInspectorSpec)
	e := &mcpProxyEnv{env: newEnv(t), inspector: inspector, server: server}
	e.write("warden.yaml", mcpProxyPolicy)
	e.write("docs/a.txt", "hello from docs\n")
	mustMkdir(t, filepath.Join(e.project, "secret"))
	return e
}

// inspect runs `mcp-inspector --cli warden mcp proxy ...` with the given
// inspector arguments; the upstream is the filesystem server for the
// project, given with --upstream-cmd (the inspector swallows `--`), or in
// $WARDEN_MCP_UPSTREAM through the inspector's -e when viaEnv. It returns
// the inspector's stdout and exit code (5: a tool error).
func (e *mcpProxyEnv) inspect(role, session string, viaEnv bool, args ...string) (string, int) {
	e.t.Helper()
	upstream := "node " + e.server + " " + e.project
	cmdArgs := []string{"--cli"}
	if viaEnv {
		cmdArgs = append(cmdArgs, "-e", "WARDEN_MCP_UPSTREAM="+upstream)
	}
	cmdArgs = append(cmdArgs, wardenBin, "mcp", "proxy", "--policy", filepath.Join(e.project, "warden.yaml"),
		"--role", role, "--session", session)
	if !viaEnv {
		cmdArgs = append(cmdArgs, "--upstream-cmd", upstream)
	}
	cmdArgs = append(cmdArgs, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.inspector, cmdArgs...)
	cmd.Dir = e.project
	cmd.Env = e.vars
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run the inspector: %v", err)
	}
	if ctx.Err() != nil {
		e.t.Fatalf("the inspector did not finish in time; stderr:\n%s", stderr.String())
	}
	e.t.Logf("inspector %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr.String())
	return string(out), code
}

// call runs one tools/call through the proxy.
func (e *mcpProxyEnv) call(role, session, tool string, args ...string) (string, int) {
	e.t.Helper()
	a := []string{"--method", "tools/call", "--tool-name", tool}
	for _, kv := range args {
		a = append(a, "--tool-arg", kv)
	}
	return e.inspect(role, session, false, a...)
}

func (e *mcpProxyEnv) toolNames(role string, viaEnv bool) []string {
	e.t.Helper()
	out, code := e.inspect(role, "list-"+role, viaEnv, "--method", "tools/list")
	if code != 0 {
		e.t.Fatalf("tools/list as %s: exit %d", role, code)
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		e.t.Fatalf("tools/list output: %v", err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names
}

func TestMCPProxyListIsFilteredByRole(t *testing.T) {
	t.Parallel()
	e := newMCPProxyEnv(t)
	reader := e.toolNames("reader", false)
	builder := e.toolNames("builder", true) // the upstream given in $WARDEN_MCP_UPSTREAM
	for _, tool := range []string{"read_text_file", "list_directory", "search_files"} {
		if !slices.Contains(reader, tool) {
			t.Errorf("reader's tools/list lacks %s: %v", tool, reader)
		}
	}
	for _, tool := range []string{"write_file", "edit_file", "move_file", "create_directory"} {
		if slices.Contains(reader, tool) {
			t.Errorf("reader's tools/list shows %s, which the role may not use: %v", tool, reader)
		}
		if !slices.Contains(builder, tool) {
			t.Errorf("builder's tools/list lacks %s: %v", tool, builder)
		}
	}
}

func TestMCPProxyDenyAllowAsk(t *testing.T) {
	t.Parallel()
	e := newMCPProxyEnv(t)
	secret := filepath.Join(e.project, "secret", "key.txt")

	// A denied write_file does not write, and the client reads the reason.
	out, code := e.call("builder", "s1", "write_file", "path="+secret, "content=leak")
	if code != 5 {
		t.Errorf("denied write_file: inspector exit %d, want 5 (a tool error)", code)
	}
	for _, want := range []string{"warden BLOCKED: RULE_DENY", "Files in secret/ are written by the release process only.",
		"Write the file under docs/ instead"} {
		if !strings.Contains(out, want) {
			t.Errorf("denied write_file: output lacks %q", want)
		}
	}
	if e.exists("secret/key.txt") {
		t.Error("the denied write_file wrote secret/key.txt")
	}

	// An allowed read_text_file works.
	out, code = e.call("reader", "s1", "read_text_file", "path="+filepath.Join(e.project, "docs", "a.txt"))
	if code != 0 || !strings.Contains(out, "hello from docs") {
		t.Errorf("read_text_file: exit %d, output lacks the file's text", code)
	}

	// A write no rule covers asks: an approval is queued, nothing written.
	notes := filepath.Join(e.project, "notes.txt")
	out, code = e.call("builder", "s2", "write_file", "path="+notes, "content=approved text")
	if code != 5 || !strings.Contains(out, "APPROVAL REQUIRED") {
		t.Fatalf("write_file without a rule: exit %d, want 5 and APPROVAL REQUIRED", code)
	}
	m := regexp.MustCompile(`warden approvals approve (a-[0-9a-f]+) --once`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the ask does not say how to approve it")
	}
	if e.exists("notes.txt") {
		t.Fatal("write_file ran before its approval")
	}
	if got, err := e.warden("approvals", "approve", m[1], "--once"); err != nil {
		t.Fatalf("warden approvals approve %s --once: %v\n%s", m[1], err, got)
	}
	// The same call, from a new run of the client (a new proxy process
	// and session), goes through once.
	out, code = e.call("builder", "s3", "write_file", "path="+notes, "content=approved text")
	if code != 0 || !strings.Contains(out, "Successfully wrote") {
		t.Fatalf("approved write_file: exit %d, want 0 and the server's answer", code)
	}
	if data, err := os.ReadFile(notes); err != nil || string(data) != "approved text" {
		t.Errorf("notes.txt after the approved call = %q, %v", data, err)
	}

	// Every decision is in the audit trail, from host mcp.
	recs, err := e.store().Audit(context.Background(), warden.AuditFilter{Tool: "mcp__filesystem__write_file"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if r.Host != "mcp" {
			t.Errorf("audit record %d: host %q, want mcp", r.ID, r.Host)
		}
		got = append(got, string(r.Decision))
	}
	slices.Sort(got)
	if want := []string{"allow", "ask", "deny"}; !slices.Equal(got, want) {
		t.Errorf("audit decisions for write_file = %v, want %v", got, want)
	}
}

// TestMCPProxyClaudeCode: Claude Code, with the filesystem server
// configured through the proxy in .mcp.json (and no hooks), calls
// write_file into secret/: the proxy's deny reaches the model as an
// is_error tool result, and nothing is written. A read goes through.
func TestMCPProxyClaudeCode(t *testing.T) {
	t.Parallel()
	claude := requireHost(t, claudeSpec)
	server := requireHost(t, mcpFilesystemSpec)
	// Relative paths: the server and warden both resolve them against the
	// project, where Claude Code starts the server.
	e := newEnv(t,
		scripted.Turn{Name: "write", Match: scripted.MinToolResults(0), Text: "Saving the key.",
			ToolCalls: []scripted.ToolCall{{Name: "mcp__filesystem__write_file", Args: map[string]any{"path": "secret/key.txt", "content": "leak"}}}},
		scripted.Turn{Name: "read", Match: scripted.MinToolResults(1),
			ToolCalls: []scripted.ToolCall{{Name: "mcp__filesystem__read_text_file", Args: map[string]any{"path": "docs/a.txt"}}}},
		scripted.Turn{Name: "final", Match: scripted.MinToolResults(2), Text: "Done."},
	)
	e.write("warden.yaml", mcpProxyPolicy)
	e.write("docs/a.txt", "hello from docs\n")
	mustMkdir(t, filepath.Join(e.project, "secret"))
	e.writeJSON(".mcp.json", map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"command": wardenBin,
			"args": []string{"mcp", "proxy", "--name", "filesystem", "--role", "builder", "--", "node", server, e.project}},
	}})
	// Claude Code's own permission check lets the server's tools through
	// (-p has nobody to ask); warden decides them.
	r := e.run(hostTimeout, []string{
		"ANTHROPIC_BASE_URL=" + e.model.URL, "ANTHROPIC_API_KEY=test", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
	}, claude, "-p", "Save the key, then read the docs.", "--output-format", "json",
		"--mcp-config", filepath.Join(e.project, ".mcp.json"), "--strict-mcp-config",
		"--allowedTools", "mcp__filesystem__write_file,mcp__filesystem__read_text_file")
	failed := true
	defer func() {
		if failed || testing.Verbose() {
			e.dump(r)
		}
	}()
	if r.err != nil {
		t.Fatalf("claude did not finish: %v", r.err)
	}
	var results []scripted.ToolResult
	for _, q := range e.model.Requests() {
		if rs := q.ToolResults(); len(rs) > len(results) {
			results = rs
		}
	}
	if len(results) < 2 {
		t.Fatalf("the model got %d tool results, want 2", len(results))
	}
	if w := results[0]; !w.IsError || !strings.Contains(w.Text, "Files in secret/ are written by the release process only.") {
		t.Errorf("write_file's result = %+v, want an is_error result with warden's reason", w)
	}
	if rd := results[1]; rd.IsError || !strings.Contains(rd.Text, "hello from docs") {
		t.Errorf("read_text_file's result = %+v, want the file's text", rd)
	}
	if e.exists("secret/key.txt") {
		t.Error("the denied write_file wrote secret/key.txt")
	}
	failed = t.Failed()
}
