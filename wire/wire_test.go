package wire_test

import (
	"go/build"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/wire"
)

func TestNonceIsFreshAndValid(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		n := wire.NewNonce()
		if !wire.ValidNonce(n) || !strings.HasPrefix(n, "n-") || len(n) != 26 {
			t.Fatalf("NewNonce gave %q", n)
		}
		if seen[n] {
			t.Fatalf("NewNonce gave %q twice", n)
		}
		seen[n] = true
	}
}

func TestValidNonce(t *testing.T) {
	for n, want := range map[string]bool{"": false, "a": true, "n-0f.A_z": true, strings.Repeat("x", 128): true,
		strings.Repeat("x", 129): false, "a b": false, "a\n": false, "é": false, "a/b": false} {
		if got := wire.ValidNonce(n); got != want {
			t.Errorf("ValidNonce(%q) = %v, want %v", n, got, want)
		}
	}
}

// wire is for warden-hook: the standard library only, and none of its
// heavy parts.
func TestWireImportsLittle(t *testing.T) {
	pkg, err := build.ImportDir(".", 0) // go test runs a package's tests in its folder
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(imp, ".") || imp == "net/http" || strings.HasPrefix(imp, "crypto") {
			t.Errorf("package wire imports %s", imp)
		}
	}
}

// OrderedID: the time in milliseconds as 12 hex digits after the prefix,
// then the random bytes; ids of later times sort after earlier ones,
// whatever their random parts, across the digits' carries too.
func TestOrderedID(t *testing.T) {
	at := time.UnixMilli(0x0123456789ab)
	if got, want := wire.OrderedID("g-", at, []byte{0xff, 0x00, 0x7a}), "g-0123456789abff007a"; got != want {
		t.Errorf("OrderedID = %q, want %q", got, want)
	}
	base := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	prev := ""
	for _, step := range []time.Duration{0, time.Millisecond, 15 * time.Millisecond, 255 * time.Millisecond, time.Second, time.Hour, 24 * 365 * time.Hour} {
		// The least id of this time sorts after the greatest of the last.
		least := wire.OrderedID("c-", base.Add(step), []byte{0x00, 0x00})
		if prev != "" && least <= prev {
			t.Errorf("id %q at +%v sorts before %q made earlier", least, step, prev)
		}
		if len(least) != 2+12+4 {
			t.Errorf("id %q: length %d", least, len(least))
		}
		prev = wire.OrderedID("c-", base.Add(step), []byte{0xff, 0xff})
	}
}
