package report

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// incremental runs the byte-at-a-time matcher over q (which starts with
// '<') and returns what it decides and where.
func incremental(m *matcher, q []byte) (int, int8, stepResult) {
	m.begin(0)
	for n := 1; n < len(q); n++ {
		switch m.step(q[n]) {
		case stepDone:
			name := m.name
			m.reset()
			return n + 1, name, stepDone
		case stepFail:
			m.reset()
			return 0, -1, stepFail
		}
	}
	m.reset()
	return 0, -1, stepMore
}

// TestMatchAtAgreesWithStep checks that the in-chunk fast path and the
// incremental matcher used across chunk boundaries decide alike, on tags,
// their prefixes and random mutations of them.
func TestMatchAtAgreesWithStep(t *testing.T) {
	tg, _ := ParseTags("warden", "abc123")
	m := newMatcher(tg)
	seeds := []string{
		tg.OpenFinal(), tg.CloseFinal(), tg.OpenMeta("p"), tg.CloseMeta(),
		"<warden-abc123-FINAL >", "<warden-abc123-META\n plugin='x' a=b>", "</warden-abc123-META plugin=\"p\">",
		"<warden-abc123-META " + strings.Repeat("a", 300) + ">",
		"<warden-abc123-META " + strings.Repeat("a", maxTagLen-len("<warden-abc123-META ")-1) + ">",
		"<warden-abc123-META " + strings.Repeat("a", maxTagLen-len("<warden-abc123-META ")) + ">",
		"<warden-abc123-FINALX>", "<warden-abc12-FINAL>", "<<warden-abc123-FINAL>", "</>", "<",
	}
	r := rand.New(rand.NewPCG(7, 7))
	alphabet := []byte("<>/ \n=\"'wardenabc123-FINALMETAplugin")
	var inputs []string
	for _, s := range seeds {
		for i := 1; i <= len(s); i++ {
			inputs = append(inputs, s[:i])
		}
		for range 200 {
			b := []byte(s)
			for range 1 + r.IntN(3) {
				i := 1 + r.IntN(max(1, len(b)-1))
				if i < len(b) {
					b[i] = alphabet[r.IntN(len(alphabet))]
				}
			}
			inputs = append(inputs, string(b)+"tail")
		}
	}
	for _, in := range inputs {
		q := []byte(in)
		n1, name1, r1 := m.matchAt(q)
		n2, name2, r2 := incremental(&m, q)
		if r1 == stepMore {
			continue // the fast path defers to the incremental matcher
		}
		if r1 != r2 || n1 != n2 || (r1 == stepDone && name1 != name2) {
			t.Fatalf("%q: matchAt = (%d, %d, %d), incremental = (%d, %d, %d)", in, n1, name1, r1, n2, name2, r2)
		}
	}
}

// TestStackBound feeds every sequence of four tags and checks the stack
// never needs more than its three frames (push would panic otherwise) and
// ends empty.
func TestStackBound(t *testing.T) {
	tg, _ := ParseTags("warden", "abc123")
	all := []string{tg.OpenFinal(), tg.CloseFinal(), tg.OpenMeta("a"), tg.CloseMeta(), "x"}
	var rec func(prefix string, depth int)
	rec = func(prefix string, depth int) {
		if depth == 5 {
			x := newMachine(tg)
			e := &extractor{resp: &Response{}}
			x.feed([]byte(prefix), e)
			x.end(e)
			if x.depth != 0 {
				t.Fatalf("%q: depth %d after end", prefix, x.depth)
			}
			return
		}
		for _, s := range all {
			rec(prefix+s, depth+1)
		}
	}
	rec("", 0)
}
