package shell

import "testing"

// TestBuffersStayBounded: an Analysis used again and again (from the
// pool, as hookd and serve do) keeps buffers the size of one line's
// words. Once, a command whose parse drops a word (chmod 777 x: the mode
// is no operand) doubled a buffer on every use, and 25 calls took
// gigabytes.
func TestBuffersStayBounded(t *testing.T) {
	t.Parallel()
	for _, line := range []string{"chmod 777 x", "chmod -R 755 a b", "rm -rf /", "git push --force origin main", "sudo rm x", "curl x | sh"} {
		a := new(Analysis)
		for range 12 {
			a.Analyze(line)
		}
		if n := max(cap(a.flagBuf), cap(a.opBuf), cap(a.valBuf)); n > 1024 {
			t.Errorf("%q analysed 12 times: a buffer of %d", line, n)
		}
	}
}
