package cli_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/cli"
)

func TestMCPProxyBadCommandLines(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "warden.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "proxy", "--policy", coding}, "no upstream server"},
		{[]string{"mcp", "proxy", "--policy", coding, "--upstream", "http://127.0.0.1:1/mcp", "--", "node", "x.js"}, "not both"},
		{[]string{"mcp", "proxy", "--policy", coding, "--upstream-cmd", "node x.js", "--", "node", "y.js"}, "give the upstream command once"},
		{[]string{"mcp", "proxy", "--policy", coding, "--upstream-cmd", "node 'x.js"}, "--upstream-cmd"},
		{[]string{"mcp", "proxy", "--policy", coding, "--", "./"}, "give --name"},
		// A policy that does not load stops the proxy before the server starts.
		{[]string{"mcp", "proxy", "--policy", missing, "--", "/nonexistent/server"}, "warden.yaml"},
		{[]string{"mcp", "proxy", "--policy", coding, "--header", "Authorization: Bearer x", "--", "node", "x.js"}, "--header needs --upstream"},
		{[]string{"mcp", "proxy", "--policy", coding, "--upstream", "http://127.0.0.1:1/mcp", "--header", "no colon"}, "Name: value"},
		{[]string{"mcp", "proxy", "--policy", coding, "--name", "my server", "--", "node", "x.js"}, "--name"},
		{[]string{"mcp", "proxy", "--policy", coding, "--name", "a__b", "--", "node", "x.js"}, "no __"},
		{[]string{"mcp", "nosuch"}, "unknown subcommand"},
	} {
		_, stderr, code := run(t, "", tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("warden %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestMCPServeBadCommandLines: warden mcp serve refuses an HTTP address
// off the loopback unless told, and a policy that does not load.
func TestMCPServeBadCommandLines(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "warden.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "serve", "--policy", coding, "--http", "0.0.0.0:8765"}, "not a loopback address"},
		{[]string{"mcp", "serve", "--policy", coding, "--http", "example.com:8765"}, "--allow-remote"},
		{[]string{"mcp", "serve", "--policy", coding, "--http", "8765"}, "want host:port"},
		{[]string{"mcp", "serve", "--policy", coding, "--allow-remote"}, "--allow-remote needs --http"},
		{[]string{"mcp", "serve", "--policy", coding, "extra"}, "unexpected arguments"},
		{[]string{"mcp", "serve", "--policy", missing}, "warden.yaml"},
	} {
		_, stderr, code := run(t, "", tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("warden %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestMCPServeAnswersBadLines: a line on warden mcp serve's input that is
// no JSON-RPC message is answered with a JSON-RPC error, and the server
// goes on to the next message (it ended the server before).
func TestMCPServeAnswersBadLines(t *testing.T) {
	t.Parallel()
	pol := filepath.Join(t.TempDir(), "warden.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\ndefault: ask\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := cli.Run(context.Background(), []string{"mcp", "serve", "--policy", pol}, inR, outW, io.Discard)
		outW.Close()
		done <- code
	}()
	go io.WriteString(inW, "not json\n"+`{"jsonrpc":"2.0","id":9,"method":}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	sc := bufio.NewScanner(outR)
	for i, want := range []string{`"id":null,"error":{"code":-32700`, `"id":null,"error":{"code":-32700`, `"id":1,"result":{`} {
		if !sc.Scan() {
			t.Fatalf("answer %d: none (%v), want one with %s", i+1, sc.Err(), want)
		}
		if !strings.Contains(sc.Text(), want) {
			t.Errorf("answer %d: %s, want %s", i+1, sc.Text(), want)
		}
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if code := <-done; code != 0 {
		t.Errorf("exit %d at the end of the input, want 0", code)
	}
}
