package mcpproxy_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runProxy runs `warden mcp proxy` with os.Args[1:] and exits (set where
// the CLI builds).
var runProxy func()

// The test binary runs as a process of its own when WARDEN_TEST_AS says
// which: "proxy" is `warden mcp proxy` (its args are the command line
// after "warden"), "upstream" the fake MCP server a proxy started by the
// tests runs, "sleeper" a process that server starts and leaves running.
func TestMain(m *testing.M) {
	switch os.Getenv("WARDEN_TEST_AS") {
	case "proxy":
		if runProxy != nil {
			os.Setenv("WARDEN_TEST_AS", "upstream") // for the server it starts
			runProxy()
		}
		os.Exit(2)
	case "upstream":
		fakeServer()
		os.Exit(0)
	case "sleeper":
		if os.Getenv("WARDEN_TEST_STUBBORN") != "" {
			signal.Ignore(syscall.SIGTERM)
		}
		select {}
	}
	os.Exit(m.Run())
}

// fakeServer is an MCP server over stdio with the tools echo (answers at
// once), hang (never answers), big (answers with over 17 MiB), slow
// (answers after 5 s, with progress notifications meanwhile). It appends
// each line it reads to $WARDEN_TEST_DIR/upstream.log and writes its pid
// to upstream.pid. With WARDEN_TEST_STUBBORN set it ignores SIGTERM and
// the end of its input (only SIGKILL ends it) and starts a sleeper, whose
// pid goes to sleeper.pid. With WARDEN_TEST_LATE set, it answers a call
// when it is told the call is cancelled (a late answer).
func fakeServer() {
	dir := os.Getenv("WARDEN_TEST_DIR")
	stubborn := os.Getenv("WARDEN_TEST_STUBBORN") != ""
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
		sl := exec.Command(os.Args[0])
		sl.Env = append(os.Environ(), "WARDEN_TEST_AS=sleeper")
		if err := sl.Start(); err != nil {
			os.Exit(3)
		}
		os.WriteFile(filepath.Join(dir, "sleeper.pid"), []byte(strconv.Itoa(sl.Process.Pid)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "upstream.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	logf, err := os.OpenFile(filepath.Join(dir, "upstream.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		os.Exit(3)
	}
	var mu sync.Mutex
	send := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.WriteString(line + "\n")
	}
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			break
		}
		logf.Write(line)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				RequestID json.RawMessage `json:"requestId"`
				Meta      struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
		case "tools/list":
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"hang","inputSchema":{"type":"object"}},{"name":"big","inputSchema":{"type":"object"}}]}}`)
		case "tools/call":
			switch m.Params.Name {
			case "echo":
				send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"echo"}]}}`)
			case "slow":
				// Works for 5 s, reporting progress every 50 ms.
				go func(id string, token json.RawMessage) {
					for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(50 * time.Millisecond) {
						send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(token) + `,"progress":1}}`)
					}
					send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"slow done"}]}}`)
				}(id, m.Params.Meta.ProgressToken)
			case "big":
				send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("b", 17<<20) + `"}]}}`)
			}
		case "notifications/cancelled":
			if os.Getenv("WARDEN_TEST_LATE") != "" {
				send(`{"jsonrpc":"2.0","id":` + string(m.Params.RequestID) + `,"result":{"content":[{"type":"text","text":"late"}]}}`)
			}
		case "ping":
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
		}
	}
	if stubborn {
		select {}
	}
}
