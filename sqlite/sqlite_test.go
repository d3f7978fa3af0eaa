package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/sqlite"
	"github.com/warden-run/warden/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) warden.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), ".warden", "warden.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// BenchmarkHalted is the cost the emergency-halt check adds to every
// decision (one indexed query), to set beside BenchmarkHookdCall (a whole
// decision through hookd, store transaction included).
func BenchmarkHalted(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	st.SetHalt(ctx, warden.Halt{Session: "other", Message: "x"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := st.Halted(ctx, "parent/agent-1"); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
