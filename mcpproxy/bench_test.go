package mcpproxy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/mcpproxy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
)

// stdioPipes are two OS pipes: what is written to w1 is read from r1, and
// so for w2 and r2.
func stdioPipes(tb testing.TB) (r1, w1, r2, w2 *os.File) {
	tb.Helper()
	r1, w1, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	r2, w2, err = os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, f := range []*os.File{r1, w1, r2, w2} {
			f.Close()
		}
	})
	return r1, w1, r2, w2
}

// benchClient connects a client to a fresh upstream server over stdio
// pipes, directly or, when gate is set, through the proxy (with the real
// engine, session layer and SQLite store), whose ends are the LineConns
// `warden mcp proxy` uses.
func benchClient(b *testing.B, gate mcpproxy.Gate) *mcp.ClientSession {
	b.Helper()
	ctx := b.Context()
	up := &upstream{}
	r1, w1, r2, w2 := stdioPipes(b)
	if _, err := up.server().Connect(ctx, &mcp.IOTransport{Reader: r1, Writer: w2}, nil); err != nil {
		b.Fatal(err)
	}
	var clientT mcp.Transport = &mcp.IOTransport{Reader: r2, Writer: w1}
	if gate != nil {
		upConn := mcpproxy.NewLineConn(r2, w1, nil)
		r3, w3, r4, w4 := stdioPipes(b)
		clientConn := mcpproxy.NewLineConn(r3, w4, nil)
		p := &mcpproxy.Proxy{Name: "files", Gate: gate}
		go p.Run(ctx, clientConn, upConn)
		clientT = &mcp.IOTransport{Reader: r4, Writer: w3}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkProxyOverhead measures the proxy's own cost per tools/call over
// stdio: each iteration makes the same allowed call once directly to the
// server and once through the proxy. It reports the median (p50) and the
// 99th percentile (p99) of each, and the overhead (proxied minus direct at
// the same percentile), in microseconds. In "session" the gate is the one
// `warden mcp proxy` runs: it takes the policy file as it is now for each
// call (Policy), decides with the session layer and writes the session,
// the audit record and the call's outcome to SQLite (synchronous=FULL), as
// the hooks do; in "engine" it decides with the compiled policy alone,
// which leaves the proxy's own work (the extra hop and the decoding).
//
// cpu-µs/op is the CPU time (user and system) of the whole process per
// iteration: client, proxy, server and store, for the direct call and the
// proxied one. It varies less than the latencies on a machine whose cores
// other work keeps busy, where a latency grows with the CPU time it needs.
func BenchmarkProxyOverhead(b *testing.B) {
	dir := b.TempDir()
	polFile, eng := writePolicy(b, dir, testPolicy)
	st, err := sqlite.Open(b.Context(), filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	gates := []struct {
		name string
		gate mcpproxy.Gate
	}{
		{"session", &mcpproxy.SessionGate{Tracker: session.New(eng, st), Engine: (&mcpproxy.Policy{File: polFile}).Engine,
			Session: "bench", Role: "builder", Cwd: dir}},
		{"engine", engineGate{eng: eng, role: "builder", cwd: dir}},
	}
	for _, g := range gates {
		b.Run(g.name, func(b *testing.B) {
			direct := benchClient(b, nil)
			proxied := benchClient(b, g.gate)
			params := &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(dir, "docs", "a.txt")}}
			call := func(cs *mcp.ClientSession) time.Duration {
				start := time.Now()
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					b.Fatalf("tools/call: %v %+v", err, res)
				}
				return time.Since(start)
			}
			// Warm up both paths (the session is created on the first call).
			call(direct)
			call(proxied)
			var d, p []time.Duration
			cpu0 := cpuTime(b)
			for b.Loop() {
				d = append(d, call(direct))
				p = append(p, call(proxied))
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(len(p)), "cpu-µs/op")
			for _, q := range []struct {
				name string
				at   float64
			}{{"p50", 0.50}, {"p99", 0.99}} {
				dq, pq := quantile(d, q.at), quantile(p, q.at)
				b.ReportMetric(float64(dq.Microseconds()), "direct-"+q.name+"-µs")
				b.ReportMetric(float64(pq.Microseconds()), "proxy-"+q.name+"-µs")
				b.ReportMetric(float64((pq - dq).Microseconds()), "overhead-"+q.name+"-µs")
			}
		})
	}
}

// engineGate decides with the compiled policy alone: no session, no store.
type engineGate struct {
	eng       *engine.Engine
	role, cwd string
}

func (g engineGate) Decide(_ context.Context, call warden.ToolCall) (mcpproxy.Verdict, error) {
	call.Role, call.Cwd = g.role, g.cwd
	return mcpproxy.Verdict{Decision: g.eng.Decide(call, nil).Decision}, nil
}

func (g engineGate) Hidden(context.Context, []string) (map[string]bool, error) {
	return map[string]bool{}, nil
}

// quantile is the q-quantile of ds (0.5: the median).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkGateDecide is the decision alone: engine, session update and
// audit record in SQLite, no MCP traffic.
func BenchmarkGateDecide(b *testing.B) {
	dir := b.TempDir()
	_, eng := writePolicy(b, dir, testPolicy)
	st, err := sqlite.Open(b.Context(), filepath.Join(dir, ".warden", "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	gate := &mcpproxy.SessionGate{Tracker: session.New(eng, st), Session: "bench", Role: "builder", Cwd: dir}
	call := warden.ToolCall{Tool: "mcp__files__read_text_file", Args: map[string]any{"path": filepath.Join(dir, "docs", "a.txt")}}
	for b.Loop() {
		if v, err := gate.Decide(b.Context(), call); err != nil || v.Decision.Decision != warden.Allow {
			b.Fatal(v, err)
		}
	}
}
