package wire_test

import (
	"go/build"
	"strings"
	"testing"

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
	pkg, err := build.Import("github.com/warden-run/warden/wire", ".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(imp, ".") || imp == "net/http" || strings.HasPrefix(imp, "crypto") {
			t.Errorf("package wire imports %s", imp)
		}
	}
}
