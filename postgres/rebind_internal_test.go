package postgres

import (
	"strings"
	"testing"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"", ""},
		{"?", "$1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"'é' = ?ü?", "'é' = $1ü$2"},
		{"(" + strings.Repeat("?, ", 11) + "?)", "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"},
	} {
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// BenchmarkRebind: a group's joint insert of 16 records, 15 columns each.
func BenchmarkRebind(b *testing.B) {
	row := "(" + strings.Repeat("?, ", 14) + "?)"
	q := "INSERT INTO audit (a) VALUES " + strings.Repeat(row+", ", 15) + row + " RETURNING id"
	b.ReportAllocs()
	for b.Loop() {
		rebind(q)
	}
}
