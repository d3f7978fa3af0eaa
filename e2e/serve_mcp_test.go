package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
)

// TestMCPProxyServe: `warden mcp proxy` with WARDEN_SERVE_URL (the real
// MCP inspector in front, the real filesystem server behind) is decided
// and audited by warden serve: tools/list hides what the role may not use,
// a denied write is denied with the service's reason, and the audit is the
// service's. An unreachable service denies.
func TestMCPProxyServe(t *testing.T) {
	e := newMCPProxyEnv(t)
	agent := serveToken(t, e.project, "agent", "mcp-bot")
	person := serveToken(t, e.project, "person", "alice")
	s := startServe(t, e.project)

	run := func(url, role, session string, args ...string) (string, int) {
		t.Helper()
		cmdArgs := []string{"--cli", "-e", "WARDEN_SERVE_URL=" + url, "-e", "WARDEN_SERVE_TOKEN=" + agent,
			wardenBin, "mcp", "proxy", "--role", role, "--session", session, "--upstream-cmd", "node " + e.server + " " + e.project}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, e.inspector, append(cmdArgs, args...)...)
		cmd.Dir, cmd.Env = e.project, e.vars
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("run the inspector: %v", err)
		}
		t.Logf("inspector %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr.String())
		return string(out) + "\n" + stderr.String(), code
	}

	out, code := run(s.url, "reader", "m-list", "--method", "tools/list")
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	out, _, _ = strings.Cut(out, "\n\n")
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list through the service: exit %d", code)
	}
	for _, tl := range list.Tools {
		if tl.Name == "write_file" {
			t.Errorf("the reader role sees write_file")
		}
	}
	secret := filepath.Join(e.project, "secret", "key.txt")
	out, code = run(s.url, "builder", "m1", "--method", "tools/call", "--tool-name", "write_file", "--tool-arg", "path="+secret, "--tool-arg", "content=leak")
	if code != 5 || !strings.Contains(out, "RULE_DENY") || e.exists("secret/key.txt") {
		t.Fatalf("denied write_file through the service: exit %d", code)
	}
	var recs []warden.AuditRecord
	s.call("GET", "/v1/audit?session=m1", person, nil, &recs)
	if len(recs) != 1 || recs[0].Host != "mcp" || recs[0].Rule != "no-secret-writes" {
		t.Fatalf("the service's audit of the MCP call: %+v", recs)
	}
	out, code = run("http://127.0.0.1:1", "builder", "m2", "--method", "tools/call", "--tool-name", "read_text_file", "--tool-arg", "path="+filepath.Join(e.project, "docs", "a.txt"))
	if code == 0 || strings.Contains(out, "hello from docs") || !strings.Contains(out, "unreachable") {
		t.Fatalf("read through an unreachable service: exit %d", code)
	}
}
