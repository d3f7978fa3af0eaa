package hook

import (
	"regexp"
	"testing"
	"time"
)

// A call id is the time and 96 random bits from the system: never empty,
// never twice, and an id made a millisecond later sorts after.
func TestNewCallID(t *testing.T) {
	shape := regexp.MustCompile(`^c-[0-9a-f]{36}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewCallID()
		if !shape.MatchString(id) {
			t.Fatalf("call id %q", id)
		}
		if seen[id] {
			t.Fatalf("call id %q twice", id)
		}
		seen[id] = true
	}
	a := NewCallID()
	time.Sleep(2 * time.Millisecond)
	if b := NewCallID(); b <= a {
		t.Errorf("call id %q made after %q sorts before it", b, a)
	}
}
