package report_test

import (
	"testing"

	"github.com/warden-run/warden/report"
)

type wantBlock struct {
	plugin  string
	content string
	closed  bool
	line    int
}

func TestExtract(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		final   *wantBlock
		ignored int
		metas   []wantBlock
	}{
		{
			name:  "meta before final",
			in:    oM("a") + `{"x":1}` + cM + "\n" + oF + "answer" + cF,
			final: &wantBlock{content: "answer", closed: true, line: 2},
			metas: []wantBlock{{"a", `{"x":1}`, true, 1}},
		},
		{
			name:  "meta after the closing final tag (MiniMax)",
			in:    oF + "\nanswer\n" + cF + "\n" + oM("a") + "\n{\"x\":1}\n" + cM + "\n",
			final: &wantBlock{content: "\nanswer\n", closed: true, line: 1},
			metas: []wantBlock{{"a", "\n{\"x\":1}\n", true, 4}},
		},
		{
			name:  "meta inside final",
			in:    oF + "one\n" + oM("a") + "{}" + cM + "\ntwo" + cF,
			final: &wantBlock{content: "one\n\ntwo", closed: true, line: 1},
			metas: []wantBlock{{"a", "{}", true, 2}},
		},
		{
			name:  "meta around final",
			in:    oM("a") + `{"k": ` + oF + "answer" + cF + `"v"}` + cM,
			final: &wantBlock{content: "answer", closed: true, line: 1},
			metas: []wantBlock{{"a", `{"k": "v"}`, true, 1}},
		},
		{
			name:  "several metas interleaved",
			in:    oM("a") + "1" + cM + oF + "x" + oM("b") + "2" + cM + "y" + cF + oM("c") + "3" + cM,
			final: &wantBlock{content: "xy", closed: true, line: 1},
			metas: []wantBlock{{"a", "1", true, 1}, {"b", "2", true, 1}, {"c", "3", true, 1}},
		},
		{
			name:    "later finals are ignored",
			in:      oF + "one" + cF + oF + "two" + cF + oF + "three",
			final:   &wantBlock{content: "one", closed: true, line: 1},
			ignored: 2,
		},
		{
			name:  "truncated final",
			in:    "x\n" + oF + "half an answ",
			final: &wantBlock{content: "half an answ", closed: false, line: 2},
		},
		{
			name:  "truncated meta at the end",
			in:    oF + "a" + cF + oM("a") + `{"x": [1, 2`,
			final: &wantBlock{content: "a", closed: true, line: 1},
			metas: []wantBlock{{"a", `{"x": [1, 2`, false, 1}},
		},
		{
			name:  "meta opened inside meta truncates the first",
			in:    oM("a") + "{}\n" + oM("b") + "{}" + cM,
			metas: []wantBlock{{"a", "{}\n", false, 1}, {"b", "{}", true, 2}},
		},
		{
			name:  "closing final closes an unclosed meta inside it",
			in:    oF + "a" + oM("p") + "{" + cF,
			final: &wantBlock{content: "a", closed: true, line: 1},
			metas: []wantBlock{{"p", "{", false, 1}},
		},
		{
			name:  "attribute forms",
			in:    "<warden-abc123-META plugin='single'>1" + cM + "<warden-abc123-META\n  id=7 plugin = bare >2" + cM + "<warden-abc123-META x=\"plugin\">3" + cM,
			metas: []wantBlock{{"single", "1", true, 1}, {"bare", "2", true, 1}, {"", "3", true, 2}},
		},
		{
			name: "no blocks",
			in:   "just an answer without tags",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := report.Extract([]byte(tc.in), tags)
			checkBlock(t, "FINAL", r.Final, tc.final)
			if r.IgnoredFinals != tc.ignored {
				t.Errorf("IgnoredFinals = %d, want %d", r.IgnoredFinals, tc.ignored)
			}
			if len(r.Metas) != len(tc.metas) {
				t.Fatalf("%d META blocks, want %d: %+v", len(r.Metas), len(tc.metas), r.Metas)
			}
			for i := range tc.metas {
				checkBlock(t, "META", &r.Metas[i], &tc.metas[i])
			}
		})
	}
}

func checkBlock(t *testing.T, what string, got *report.Block, want *wantBlock) {
	t.Helper()
	if got == nil || want == nil {
		if got != nil || want != nil {
			t.Errorf("%s block = %+v, want %+v", what, got, want)
		}
		return
	}
	if got.Plugin != want.plugin || got.Content != want.content || got.Closed != want.closed || got.Line != want.line {
		t.Errorf("%s block = {plugin %q content %q closed %v line %d}, want {plugin %q content %q closed %v line %d}",
			what, got.Plugin, got.Content, got.Closed, got.Line, want.plugin, want.content, want.closed, want.line)
	}
	if what == "META" && got.HasPlugin != (want.plugin != "") {
		t.Errorf("HasPlugin = %v for plugin %q", got.HasPlugin, want.plugin)
	}
}

func TestExtractOffset(t *testing.T) {
	t.Parallel()
	in := "abc" + oM("p") + "{}" + cM
	r := report.Extract([]byte(in), tags)
	if len(r.Metas) != 1 || r.Metas[0].Offset != 3 {
		t.Fatalf("offset = %+v, want 3", r.Metas)
	}
}

func TestTags(t *testing.T) {
	t.Parallel()
	tg := mustTags("", "n0nce")
	if got := tg.OpenMeta("p"); got != `<warden-n0nce-META plugin="p">` {
		t.Errorf("OpenMeta = %s", got)
	}
	if tg.OpenFinal() != "<warden-n0nce-FINAL>" || tg.CloseFinal() != "</warden-n0nce-FINAL>" || tg.CloseMeta() != "</warden-n0nce-META>" {
		t.Errorf("tags = %s %s %s", tg.OpenFinal(), tg.CloseFinal(), tg.CloseMeta())
	}
	custom := mustTags("acme_agent", "X1")
	if custom.OpenFinal() != "<acme_agent-X1-FINAL>" {
		t.Errorf("custom prefix: %s", custom.OpenFinal())
	}
	r := report.Extract([]byte(custom.OpenFinal()+"hi"+custom.CloseFinal()+oF+"other"+cF), custom)
	if r.Final == nil || r.Final.Content != "hi" {
		t.Errorf("custom prefix extraction = %+v", r.Final)
	}
	for _, bad := range [][2]string{{"", ""}, {"", "a-b"}, {"", "a b"}, {"1abc", "n"}, {"a<b", "n"}, {"", "0123456789abcdef0123456789abcdef0"}} {
		if _, err := report.ParseTags(bad[0], bad[1]); err == nil {
			t.Errorf("ParseTags(%q, %q) succeeded", bad[0], bad[1])
		}
	}
	a, err1 := report.NewTags("", nil)
	b, err2 := report.NewTags("", nil)
	if err1 != nil || err2 != nil || a.Nonce == b.Nonce || len(a.Nonce) != 8 {
		t.Errorf("NewTags: %v %v %q %q", err1, err2, a.Nonce, b.Nonce)
	}
}

func TestDetectTags(t *testing.T) {
	t.Parallel()
	got, ok := report.DetectTags("", []byte("text <warden-zz-x> </warden-9f8e-META>"+oF))
	if !ok || got.Nonce != "9f8e" {
		t.Errorf("DetectTags = %+v, %v; want nonce 9f8e", got, ok)
	}
	if _, ok := report.DetectTags("", []byte("<warden-abc>nothing</warden-abc>")); ok {
		t.Error("DetectTags found tags in a response without any")
	}
	if got, ok := report.DetectTags("acme", []byte("<acme-77-FINAL>x")); !ok || got.Prefix != "acme" || got.Nonce != "77" {
		t.Errorf("DetectTags with prefix = %+v, %v", got, ok)
	}
}
