package mcpproxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
)

var update = flag.Bool("update", false, "rewrite testdata/transcript.golden")

// TestTranscript runs the JSON-RPC lines of testdata/transcript.in, as a
// client writes them on the proxy's stdin, through the proxy (role
// reader) to an in-process server, and compares every line the proxy
// writes back with testdata/transcript.golden (-update rewrites it).
func TestTranscript(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, eng := writePolicy(t, dir, testPolicy)
	st, err := sqlite.Open(ctx, filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := &upstream{versions: []string{"2025-11-25"}}
	serverT, upT := mcp.NewInMemoryTransports()
	if _, err := up.server().Connect(ctx, serverT, nil); err != nil {
		t.Fatal(err)
	}
	upConn, err := upT.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The client's end is the one `warden mcp proxy` uses on its stdin and
	// stdout.
	clientConn := mcpproxy.NewLineConn(inR, outW, nil)
	gate := &mcpproxy.SessionGate{Tracker: session.New(eng, st), Session: "golden", Role: "reader", Cwd: dir}
	done := make(chan error, 1)
	go func() { done <- (&mcpproxy.Proxy{Name: "files", Gate: gate}).Run(ctx, clientConn, upConn) }()

	in, err := os.ReadFile(filepath.Join("testdata", "transcript.in"))
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(string(in)), "\n") {
		got.WriteString("> " + line + "\n")
		if _, err := inW.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		var msg struct {
			ID any `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("testdata line %q: %v", line, err)
		}
		if msg.ID == nil {
			continue // a notification: no answer
		}
		select {
		case out := <-lines:
			got.WriteString("< " + out + "\n")
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer to %s", line)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	golden := filepath.Join("testdata", "transcript.golden")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("transcript differs from %s (-update rewrites it):\n%s", golden, got.String())
	}
}
