package hook

import (
	"regexp"
	"testing"
)

// A call id is 96 random bits from the system: never empty, never twice.
func TestNewCallID(t *testing.T) {
	shape := regexp.MustCompile(`^c-[0-9a-f]{24}$`)
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
}
