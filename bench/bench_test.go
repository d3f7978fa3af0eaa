package bench_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/warden-run/warden/bench"
)

// engines compiles the workload at size n for the three engines.
func engines(tb testing.TB, n int) []bench.Decider {
	tb.Helper()
	ds, err := bench.Engines(bench.Rules(n), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

// BenchmarkDecide is every engine on every case at every size. To compare
// engines with benchstat:
//
//	go test -run '^$' -bench Decide -count 6 . > new.txt
//	benchstat -col /engine new.txt
func BenchmarkDecide(b *testing.B) {
	for _, n := range bench.Sizes {
		ds := engines(b, n)
		for _, c := range bench.Cases {
			for _, d := range ds {
				b.Run(fmt.Sprintf("rules=%d/case=%s/engine=%s", n, c.Name, d.Name()), func(b *testing.B) {
					fs, err := bench.PrepareAll(d, []bench.Case{c})
					if err != nil {
						b.Fatal(err)
					}
					f := fs[0]
					b.ReportAllocs()
					// cpu-ns/op: the CPU time of the decisions, which other
					// processes on a shared machine disturb far less than
					// ns/op (the goroutine keeps its thread to be measured).
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					cpu := threadCPU()
					for b.Loop() {
						f()
					}
					if cpu > 0 {
						b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
					}
				})
			}
		}
	}
}

// BenchmarkParallel is throughput on all cores (GOMAXPROCS goroutines),
// each cycling through the cases.
func BenchmarkParallel(b *testing.B) {
	for _, n := range bench.Sizes {
		ds := engines(b, n)
		for _, d := range ds {
			b.Run(fmt.Sprintf("rules=%d/engine=%s", n, d.Name()), func(b *testing.B) {
				fs, err := bench.PrepareAll(d, bench.Cases)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						fs[i%len(fs)]()
						i++
					}
				})
			})
		}
	}
}
