package report_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/warden-run/warden/report"
)

var tags = mustTags("warden", "abc123")

func mustTags(prefix, nonce string) report.Tags {
	t, err := report.ParseTags(prefix, nonce)
	if err != nil {
		panic(err)
	}
	return t
}

// Shorthands for the test tags.
const (
	oF = "<warden-abc123-FINAL>"
	cF = "</warden-abc123-FINAL>"
	cM = "</warden-abc123-META>"
)

func oM(plugin string) string { return `<warden-abc123-META plugin="` + plugin + `">` }

// filterCases pair a response with the FINAL content the filter must write.
var filterCases = []struct {
	name, in, want string
}{
	{"final only", oF + "Hello, world." + cF, "Hello, world."},
	{"text outside is dropped", "thinking...\n" + oF + "answer" + cF + "\ntrailing", "answer"},
	{"meta before final", oM("a") + `{"x":1}` + cM + oF + "answer" + cF, "answer"},
	{"meta after final (MiniMax)", oF + "answer" + cF + "\n" + oM("a") + `{"x":1}` + cM, "answer"},
	{"meta inside final", oF + "first " + oM("a") + `{"x":1}` + cM + "second" + cF, "first second"},
	{"final inside meta", oM("a") + `{"x":` + oF + "answer" + cF + `1}` + cM, "answer"},
	{"several metas", oM("a") + "{}" + cM + oF + "x" + oM("b") + "{}" + cM + "y" + cF + oM("c") + "{}" + cM, "xy"},
	{"second final is ignored", oF + "one" + cF + oF + "two" + cF, "one"},
	{"final tag inside final is dropped", oF + "a" + oF + "b" + cF + "c", "ab"},
	{"unclosed final streams to the end", oF + "partial answer", "partial answer"},
	{"partial tag at the end is text", oF + "a <warden-abc123-FIN", "a <warden-abc123-FIN"},
	{"html in content", oF + "<b>bold</b> a<b & c>d <warden" + cF, "<b>bold</b> a<b & c>d <warden"},
	{"other nonce is content", oF + "<warden-zzz-FINAL>x</warden-zzz-FINAL>" + cF, "<warden-zzz-FINAL>x</warden-zzz-FINAL>"},
	{"near miss name is content", oF + "<warden-abc123-FINALS> <warden-abc123-METAX>" + cF, "<warden-abc123-FINALS> <warden-abc123-METAX>"},
	{"tags with white space and attributes", "<warden-abc123-FINAL format=\"md\">x</warden-abc123-FINAL\n>", "x"},
	{"close meta with attribute", oF + "a" + oM("p") + "{}</warden-abc123-META plugin=\"p\">b" + cF, "ab"},
	{"lt inside attributes makes text", oF + "<warden-abc123-META a<b>c" + cF, "<warden-abc123-META a<b>c"},
	{"double lt", oF + "<<warden-abc123-META plugin=\"a\">{}" + cM + ">" + cF, "<>"},
	{"too long tag is text", oF + "<warden-abc123-META " + strings.Repeat("x", 300) + ">" + cF, "<warden-abc123-META " + strings.Repeat("x", 300) + ">"},
	{"stray close tags are dropped", cM + cF + oF + "a" + cM + "b" + cF, "ab"},
	{"unclosed meta inside final swallows the rest", oF + "a" + oM("p") + "{" + cF + "tail", "a"},
	{"no final", oM("a") + "{}" + cM + "just text", ""},
	{"empty", "", ""},
}

func filterAll(t *testing.T, in string, chunks []int) string {
	t.Helper()
	var out bytes.Buffer
	f := report.NewFilter(&out, tags)
	b := []byte(in)
	for i := 0; len(b) > 0; i++ {
		n := len(b)
		if len(chunks) > 0 {
			n = min(chunks[i%len(chunks)], len(b))
		}
		if k, err := f.Write(b[:n]); err != nil || k != n {
			t.Fatalf("Write = %d, %v; want %d, nil", k, err, n)
		}
		b = b[n:]
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out.String()
}

func TestFilter(t *testing.T) {
	t.Parallel()
	for _, tc := range filterCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := filterAll(t, tc.in, nil); got != tc.want {
				t.Fatalf("one chunk: got %q, want %q", got, tc.want)
			}
			for n := 1; n <= len(tc.in); n++ {
				if got := filterAll(t, tc.in, []int{n}); got != tc.want {
					t.Fatalf("chunks of %d: got %q, want %q", n, got, tc.want)
				}
			}
			r := rand.New(rand.NewPCG(1, uint64(len(tc.in))))
			for range 50 {
				chunks := []int{1 + r.IntN(7), 1 + r.IntN(40), 1 + r.IntN(3)}
				if got := filterAll(t, tc.in, chunks); got != tc.want {
					t.Fatalf("chunks %v: got %q, want %q", chunks, got, tc.want)
				}
			}
			ext := ""
			if r := report.Extract([]byte(tc.in), tags); r.Final != nil {
				ext = r.Final.Content
			}
			if ext != tc.want {
				t.Fatalf("Extract FINAL content = %q, want %q", ext, tc.want)
			}
		})
	}
}

// TestFilterStreams checks that FINAL content is passed on as it arrives, not
// held until the end: after each chunk, everything but a possible partial
// tag has been written.
func TestFilterStreams(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	f := report.NewFilter(&out, tags)
	steps := []struct{ in, want string }{
		{"preamble " + oF + "Hel", "Hel"},
		{"lo", "Hello"},
		{" <warden-abc1", "Hello "},         // a possible tag is held back
		{"23-MET", "Hello "},                // still possible
		{"A plugin=\"a\">{\"x\"", "Hello "}, // META content is not written
		{":1}" + cM + " world", "Hello  world"},
		{" <b", "Hello  world <b"}, // cannot start a tag: written at once
		{"> <w", "Hello  world <b> "},
		{"ar!", "Hello  world <b> <war!"}, // the candidate failed: text
		{cF + "after", "Hello  world <b> <war!"},
	}
	for i, s := range steps {
		if _, err := f.Write([]byte(s.in)); err != nil {
			t.Fatal(err)
		}
		if out.String() != s.want {
			t.Fatalf("after step %d (%q): written %q, want %q", i, s.in, out.String(), s.want)
		}
	}
	if err := f.Close(); err != nil || out.String() != "Hello  world <b> <war!" {
		t.Fatalf("Close: %v, written %q", err, out.String())
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestFilterWriterError(t *testing.T) {
	t.Parallel()
	w := &failWriter{}
	f := report.NewFilter(w, tags)
	if _, err := f.Write([]byte(oF + "abc")); err == nil || err.Error() != "disk full" {
		t.Fatalf("first Write error = %v, want disk full", err)
	}
	if _, err := f.Write([]byte("more")); err == nil {
		t.Fatal("second Write succeeded after the writer failed")
	}
	if err := f.Close(); err == nil {
		t.Fatal("Close returned nil after the writer failed")
	}
	if w.n != 1 {
		t.Fatalf("writer called %d times, want 1 (the error is sticky)", w.n)
	}
	g := report.NewFilter(&bytes.Buffer{}, tags)
	g.Close()
	if _, err := g.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// TestFilterNoAllocs checks that Write allocates nothing, whatever the
// chunk holds: content, markup, tags, partial tags across chunks.
func TestFilterNoAllocs(t *testing.T) {
	var out countWriter
	f := report.NewFilter(&out, tags)
	f.Write([]byte(oF))
	chunks := [][]byte{
		[]byte("plain text without markup. "),
		[]byte("a <b>tag</b> and x < y <warden-abc123-"),
		[]byte("META plugin=\"a\">{\"k\": 1}" + cM + " after <warden-abc"),
		[]byte("123-FINAL> nested start is dropped"),
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		f.Write(chunks[i%len(chunks)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("Write allocates %v times per chunk, want 0", allocs)
	}
	if out.n == 0 {
		t.Fatal("nothing was written")
	}
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// TestFilterBoundedLookahead feeds a long stream in which a tag candidate is
// open at every chunk boundary; the filter must keep writing and never hold
// back more than one tag's worth.
func TestFilterBoundedLookahead(t *testing.T) {
	t.Parallel()
	var out countWriter
	f := report.NewFilter(&out, tags)
	f.Write([]byte(oF))
	in := 0
	chunk := []byte("x <warden-abc123-META plugin=\"" + strings.Repeat("y", 40))
	for range 10000 {
		f.Write(chunk)
		in += len(chunk)
		if held := in - out.n; held > 256 {
			t.Fatalf("%d bytes held back, want at most 256", held)
		}
	}
}

func FuzzFilter(f *testing.F) {
	for _, tc := range filterCases {
		f.Add([]byte(tc.in), []byte{3, 1, 17})
	}
	f.Add([]byte(oM("a")+oF+"x"+cM+"y"+cF+cM), []byte{1})
	f.Add([]byte("<<</"+oF+"<warden-abc123-META\t plugin = 'p' >"+"z"+cF), []byte{2, 5})
	f.Fuzz(func(t *testing.T, in, chunking []byte) {
		want := ""
		if r := report.Extract(in, tags); r.Final != nil {
			want = r.Final.Content
		}
		var out bytes.Buffer
		fl := report.NewFilter(&out, tags)
		b := in
		for i := 0; len(b) > 0; i++ {
			n := len(b)
			if len(chunking) > 0 {
				n = min(int(chunking[i%len(chunking)])+1, len(b))
			}
			fl.Write(b[:n])
			b = b[n:]
		}
		fl.Close()
		if out.String() != want {
			t.Fatalf("filter wrote %q, Extract found FINAL %q (chunking %v)", out.String(), want, chunking)
		}
	})
}

// benchText is model output as it usually looks: prose with some markup
// and code.
var benchText = strings.Repeat("The deployment finished; 3 of 4 checks passed. See `if a < b && c > d { return }` and <code>x</code>.\n", 40)

func benchmarkFilter(b *testing.B, chunkSize int, body string) {
	var sink countWriter
	f := report.NewFilter(&sink, tags)
	f.Write([]byte(oF))
	data := []byte(body)
	for len(data) < chunkSize {
		data = append(data, body...)
	}
	chunk := data[:chunkSize]
	b.SetBytes(int64(chunkSize))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f.Write(chunk)
	}
}

func BenchmarkFilter(b *testing.B) {
	b.Run("prose/4KiB", func(b *testing.B) { benchmarkFilter(b, 4096, benchText) })
	b.Run("prose/64KiB", func(b *testing.B) { benchmarkFilter(b, 65536, benchText) })
	b.Run("prose/64B", func(b *testing.B) { benchmarkFilter(b, 64, benchText) })
	meta := oM("support") + `{"language":"en","categories":["billing"]}` + cM
	b.Run("with-meta/4KiB", func(b *testing.B) { benchmarkFilter(b, 4096, benchText[:1000]+meta) })
	b.Run("markup-heavy/4KiB", func(b *testing.B) {
		benchmarkFilter(b, 4096, strings.Repeat("<div><span>a</span><warden-x></div>\n", 20))
	})
}
