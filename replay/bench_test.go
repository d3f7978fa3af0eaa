package replay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-run/warden/replay"
)

// BenchmarkReplay10k decides 10,000 recorded calls (the four hosts' real
// sessions, repeated as 417 sessions of each) under the coding example,
// with a scratch store, the report's counts and its suggestions: issue
// 34's target is under 2 s.
func BenchmarkReplay10k(b *testing.B) {
	lay := newLayout(b)
	base := readAll(b, lay)
	var calls []replay.Call
	for s := 0; len(calls) < 10000; s++ {
		for _, c := range base {
			c.Session = fmt.Sprintf("%s-%d", c.Session, s)
			c.Time = c.Time.Add(time.Duration(s) * time.Hour)
			calls = append(calls, c)
		}
	}
	calls = calls[:10000]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := append([]replay.Call(nil), calls...)
		rep, err := replay.Run(context.Background(), in, nil, replay.Options{Policy: filepath.Join(lay.project, "warden.yaml")})
		if err != nil || rep.Calls != 10000 {
			b.Fatal(err)
		}
	}
}
