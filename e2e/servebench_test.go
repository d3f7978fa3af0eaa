package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-run/warden/internal/pgtest"
)

// serveBenchCommands are the calls of the load test, in turn: an allow of
// two parts, a deny, an ask (the caller prompts itself: no approval is
// queued) and a plain allow. e2e/testdata/hookbench.rego decides the same.
var serveBenchCommands = []string{"git status && echo done", "rm -rf build", "git push origin main", "git log --oneline"}

// serveBenchOnly, when set (WARDEN_BENCH_COMMAND), is the one command every
// call sends: to see what one kind of decision costs.
var serveBenchOnly = os.Getenv("WARDEN_BENCH_COMMAND")

func serveBenchCommand(i int) string {
	if serveBenchOnly != "" {
		return serveBenchOnly
	}
	return serveBenchCommands[i%len(serveBenchCommands)]
}

// BenchmarkServeLoad drives `warden serve` (the audit write on, SQLite and
// PostgreSQL), the loopback floor (serveFloor: a server that does nothing),
// the file floor (serveFloorFile: the floor and a file's append and sync),
// the durable floor (serveFloorSQLite: the floor and a SQLite row a
// request), the store floors (serveFloorStore: the floor and warden's
// store, SQLite and PostgreSQL, no decision) and `opa run --server` on the
// equivalent policy (e2e/testdata/hookbench.rego) over loopback with 1, 16 and 64
// concurrent clients on kept-alive connections, and reports requests/s,
// p50 and p99 (ms). warden decides each call in its session (a session
// per client) and writes its audit record before it answers; OPA
// evaluates the rule alone. Run: bash e2e/servebench.sh.
func BenchmarkServeLoad(b *testing.B) {
	type target struct {
		name string
		url  func(b *testing.B) (string, func())
		body func(client, i int) []byte
	}
	wardenBody := func(client, i int) []byte {
		return fmt.Appendf(nil, `{"call":{"tool":"Bash","args":{"command":%q},"session":"bench-%d"},"host_prompts":true}`,
			serveBenchCommand(i), client)
	}
	opaBody := func(client, i int) []byte {
		return fmt.Appendf(nil, `{"input":{"tool_input":{"command":%q}}}`, serveBenchCommand(i))
	}
	var agent string
	wardenURL := func(store func(b *testing.B) string) func(b *testing.B) (string, func()) {
		return func(b *testing.B) (string, func()) {
			dir := b.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte(hookBenchPolicy), 0o644); err != nil {
				b.Fatal(err)
			}
			agent = benchToken(b, dir)
			args := []string{}
			if store != nil {
				args = append(args, "--store", store(b))
			}
			return benchServe(b, dir, wardenBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), "warden serve: ")
		}
	}
	// floorURL starts this binary as a floor: args after the floor's
	// argument (a PostgreSQL URL) come from more.
	floorURL := func(arg string, more ...func(b *testing.B) string) func(b *testing.B) (string, func()) {
		return func(b *testing.B) (string, func()) {
			args := []string{arg}
			for _, m := range more {
				args = append(args, m(b))
			}
			return benchServe(b, b.TempDir(), os.Args[0], args, floorPrefix)
		}
	}
	targets := []target{
		{name: "warden-sqlite", url: wardenURL(nil), body: wardenBody},
		{name: "opa", url: func(b *testing.B) (string, func()) {
			opa := opaBin()
			if opa == "" {
				b.Skip("no opa binary: set OPA_BIN or `go install github.com/open-policy-agent/opa@v1.22.2`")
			}
			rego, err := filepath.Abs(filepath.Join("testdata", "hookbench.rego"))
			if err != nil {
				b.Fatal(err)
			}
			addr := "127.0.0.1:" + freePort(b)
			return benchServe(b, b.TempDir(), opa, []string{"run", "--server", "--addr", addr, "--log-level", "error", rego}, "")
		}, body: opaBody},
		{name: "warden-postgres", url: wardenURL(func(b *testing.B) string { return pgtest.Schema(b) }), body: wardenBody},
		{name: "floor", url: floorURL(floorArg), body: wardenBody},
		{name: "floor-file", url: floorURL(floorFileArg), body: wardenBody},
		{name: "floor-sqlite", url: floorURL(floorSQLiteArg), body: wardenBody},
		{name: "floor-store", url: floorURL(floorStoreArg), body: wardenBody},
		{name: "floor-store-postgres", url: floorURL(floorStoreArg, func(b *testing.B) string { return pgtest.Schema(b) }), body: wardenBody},
	}
	// Each number of clients in turn, the servers one after the other
	// (OPA beside warden on SQLite): the rows compared are measured a few
	// seconds apart, not minutes, on a machine whose speed drifts.
	for _, clients := range []int{1, 16, 64} {
		for _, tg := range targets {
			b.Run(fmt.Sprintf("%s/clients=%d", tg.name, clients), func(b *testing.B) {
				base, stop := tg.url(b)
				defer stop()
				path := "/v1/decide"
				tok := agent
				if tg.name == "opa" {
					path, tok = "/v1/data/warden/hook_output", ""
				}
				tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
				hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
				defer tr.CloseIdleConnections()
				send := func(client, i int) time.Duration {
					req, _ := http.NewRequest("POST", base+path, bytes.NewReader(tg.body(client, i)))
					req.Header.Set("Content-Type", "application/json")
					if tok != "" {
						req.Header.Set("Authorization", "Bearer "+tok)
					}
					start := time.Now()
					resp, err := hc.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					data, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					el := time.Since(start)
					// A warden answer with "error" is a failure deny (the store
					// failed): not a decision, and not to be counted as one.
					if resp.StatusCode != 200 || !bytes.Contains(data, []byte("decision")) && !bytes.Contains(data, []byte("permissionDecision")) ||
						bytes.Contains(data, []byte(`"error":`)) {
						b.Fatalf("%s: %d %s", tg.name, resp.StatusCode, data)
					}
					return el
				}
				// Warm up: connections, the compiled policy, the store.
				for c := range clients {
					send(c, 0)
				}
				lat := make([]time.Duration, b.N)
				var next int64
				var mu sync.Mutex
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for c := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							mu.Lock()
							i := next
							next++
							mu.Unlock()
							if i >= int64(b.N) {
								return
							}
							lat[i] = send(c, int(i))
						}
					}()
				}
				wg.Wait()
				el := time.Since(start)
				b.StopTimer()
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// floorArg, as the e2e test binary's first argument, makes it the
// loopback floor of BenchmarkServeLoad (serveFloor) instead of the tests.
const floorArg = "serve-floor"

// floorPrefix starts the floor server's line that gives its address.
const floorPrefix = "floor: "

// serveFloor is the load test's floor: an HTTP server on loopback that
// reads each request's body and answers one fixed decision, with no
// token check, no decision and no store. No server that does more can
// answer the same client faster on the same machine, so its row is the
// ceiling of the table.
func serveFloor() { floorServe(nil) }

func freePort(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// benchToken adds an agent token for a benchmark's service.
func benchToken(b *testing.B, dir string) string {
	cmd := exec.Command(wardenBin, "serve", "token", "add", "--kind", "agent", "bench")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// benchServe starts a server process and waits until it answers; with a
// prefix, its address is read from the first stdout line that has it.
func benchServe(b *testing.B, dir, bin string, args []string, prefix string) (string, func()) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, _ := cmd.StdoutPipe()
	var logs bytes.Buffer
	cmd.Stderr = &syncWriter{w: &logs}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), prefix); ok && prefix != "" {
				urlc <- strings.TrimSuffix(strings.Fields(u)[0], "/")
			}
		}
	}()
	if prefix == "" {
		// opa: wait for its health endpoint.
		addr := args[len(args)-4]
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if resp, err := http.Get("http://" + addr + "/health"); err == nil {
				resp.Body.Close()
				return "http://" + addr, stop
			}
		}
		stop()
		b.Fatalf("%s did not start: %s", bin, logs.String())
	}
	select {
	case u := <-urlc:
		return u, stop
	case <-time.After(60 * time.Second):
		stop()
		b.Fatalf("%s did not start: %s", bin, logs.String())
	}
	return "", stop
}
