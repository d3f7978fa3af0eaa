package engine

import (
	"testing"

	"github.com/warden-run/warden"
)

// TestDeniedOnesAreCopiedOnAppend: the one-code lists decisions share as
// Result.Denied have a capacity of one, so a caller's append makes a new
// list and the next decision denied for that code still reads its one
// code.
func TestDeniedOnesAreCopiedOnAppend(t *testing.T) {
	for _, l := range deniedOnes {
		if len(l) != 1 || cap(l) != 1 {
			t.Fatalf("list %v: len %d cap %d, want 1 and 1", l, len(l), cap(l))
		}
	}
	a := deniedOne(warden.CodeRuleDeny)
	b := append(a, warden.CodeProtectedPath)
	b[0] = warden.CodeDefault
	if again := deniedOne(warden.CodeRuleDeny); len(again) != 1 || again[0] != warden.CodeRuleDeny {
		t.Errorf("after a caller's append and write, the shared list is %v", again)
	}
}
