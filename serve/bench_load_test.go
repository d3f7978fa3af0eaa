package serve_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDecideLoad is BenchmarkDecideHTTP at 16 and 64 concurrent
// clients (as e2e/servebench.sh runs them), each client a session of its
// own on a kept-alive connection, the audit write on. Its CPU and
// allocation profiles are bench/README.md's breakdown of a request:
//
//	go test ./serve/ -run '^$' -bench DecideLoad/sqlite/clients=64 -benchtime 20000x -cpuprofile cpu.out
func BenchmarkDecideLoad(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		for _, clients := range []int{16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", store, clients), func(b *testing.B) {
				benchDecideLoad(b, store, clients)
			})
		}
	}
}

func benchDecideLoad(b *testing.B, store string, clients int) {
	sv := startBenchServe(b, store, -1)
	u, tok := sv.url, sv.token
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var next, failed atomic.Int64
	send := func(c int, i int64) bool {
		body := fmt.Appendf(nil, `{"call":{"tool":"Bash","args":{"command":%q},"session":"bench-%d"},"host_prompts":true}`,
			benchCommands[i%int64(len(benchCommands))], c)
		req, _ := http.NewRequest("POST", u, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := hc.Do(req)
		if err != nil {
			b.Error(err)
			return false
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(data, []byte(`"decision"`)) || bytes.Contains(data, []byte(`"error"`)) {
			b.Errorf("%d %s", resp.StatusCode, data)
			return false
		}
		return true
	}
	for c := range clients {
		send(c, 0)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	stop := make(chan struct{}, clients)
	for c := range clients {
		go func() {
			defer func() { stop <- struct{}{} }()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) || failed.Load() != 0 {
					return
				}
				if !send(c, i) {
					failed.Add(1)
					return
				}
			}
		}()
	}
	for range clients {
		<-stop
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// cpuTime is the CPU time the process (server and clients) has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
