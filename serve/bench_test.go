package serve_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// benchPolicy is e2e's hook benchmark policy in short: an allow, a deny
// and an ask.
const benchPolicy = `version: 1
default: deny
rules:
  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: Deleting files is blocked in this project.
    suggestion: Move the file into the attic folder instead.
  - id: allow-git-read
    effect: allow
    tool: shell
    command: ["git status *", "git log *", "echo *"]
  - id: ask-push
    effect: ask
    tool: shell
    command: ["git push *"]
    message: Pushing needs the user's approval.
`

var benchCommands = []string{"git status && echo done", "rm -rf build", "git push origin main", "git log --oneline"}

// BenchmarkDecideHTTP is POST /v1/decide over loopback from 16 concurrent
// clients (one session each), the audit write on: the in-process form of
// e2e's BenchmarkServeLoad, for profiles (-cpuprofile).
func BenchmarkDecideHTTP(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		b.Run(store, func(b *testing.B) {
			sv := startBenchServe(b, store, 0)
			u, tok := sv.url, sv.token
			tr := &http.Transport{MaxIdleConnsPerHost: 64}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			var clients, seq atomic.Int64
			b.SetParallelism(8) // 16 clients on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				c := clients.Add(1)
				for pb.Next() {
					i := seq.Add(1)
					body := fmt.Appendf(nil, `{"call":{"tool":"Bash","args":{"command":%q},"session":"bench-%d"},"host_prompts":true}`,
						benchCommands[i%int64(len(benchCommands))], c)
					req, _ := http.NewRequest("POST", u, bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+tok)
					resp, err := hc.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					data, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || !bytes.Contains(data, []byte(`"decision"`)) || bytes.Contains(data, []byte(`"error"`)) {
						b.Errorf("%d %s", resp.StatusCode, data)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
