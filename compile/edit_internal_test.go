package compile

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-run/warden/policy"
)

func TestParseSources(t *testing.T) {
	t.Parallel()
	text := "# Mail rules\n\nSome words about these rules.\n\n- Never delete mail\n  in bulk.\n* Ask before sending.\n1. Drafts are fine.\n<!-- a note -->\n```\n- not a rule\n```\n"
	got, err := ParseSources("R.md", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{{"Never delete mail in bulk.", "R.md", 5}, {"Ask before sending.", "R.md", 7}, {"Drafts are fine.", "R.md", 8}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("source %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	// Without bullets, every line is a rule.
	got, _ = ParseSources("R.md", "Never delete mail.\n\nAsk before sending.\n")
	if len(got) != 2 || got[1].Line != 3 {
		t.Errorf("plain lines: %+v", got)
	}
	if _, err := ParseSources("R.md", "- a\n- b\n- a\n"); err == nil || !strings.Contains(err.Error(), "R.md:3: the same rule is written twice (first at line 1)") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := ParseSources("R.md", "# only a heading\n"); err == nil || !strings.Contains(err.Error(), "no rules found") {
		t.Errorf("empty: %v", err)
	}
	if SourcesHash(got) == SourcesHash(got[:1]) {
		t.Error("the hash does not depend on the rules")
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	b := "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n"
	got := Diff("old", "new", a, b)
	want := "--- old\n+++ new\n@@ -1,6 +1,6 @@\n a\n b\n-c\n+C\n d\n e\n f\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if Diff("a", "b", a, a) != "" {
		t.Error("equal texts have a diff")
	}
}

func TestSplice(t *testing.T) {
	t.Parallel()
	r := []yamlRule{{ID: "n", Effect: "ask", Tool: []string{"x"}, Message: "m", Source: "S."}}
	c := []yamlCase{{Name: "n catches x", Call: yamlCall{Tool: "x", Args: map[string]any{}}, Expect: "ask", Source: "S."}}
	comp := &yamlCompiled{From: "RULES.md", Sources: "sha256:" + strings.Repeat("0", 64), Rules: "sha256:" + strings.Repeat("1", 64)}
	cases := []struct {
		name, old string
		wantErr   string
	}{
		{"no rules key", "version: 1\n", ""},
		{"null rules", "version: 1\nrules:\ntests:\n", ""},
		{"empty flow rules", "version: 1\nrules: []\n", ""},
		{"indented at column 1", "version: 1\nrules:\n- id: a\n  effect: allow\n  tool: y\n", ""},
		{"no final newline", "version: 1\nrules:\n  - {id: a, effect: allow, tool: y}", ""},
		{"sealed", "sealed: true\nversion: 1\nrules:\n  - {id: a, effect: allow, tool: y}\nend: true   # the end\n", ""},
		{"sealed without rules", "sealed: true\nversion: 1\n\nend: true\n", ""},
		{"flow rules", "version: 1\nrules: [{id: a, effect: allow, tool: y}]\n", "not a block list"},
		{"flow policy", "{version: 1}\n", "flow style"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := splice([]byte(tc.old), r, c, comp)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "warden.yaml")
			p, fs := policy.Parse(file, out)
			for _, f := range fs {
				if f.Severity == policy.SevError {
					t.Fatalf("%s\n%s", f, out)
				}
			}
			if n := len(p.Rules); p.Rules[n-1].Source != "S." || p.Tests[len(p.Tests)-1].Source != "S." || p.Compiled == nil {
				t.Fatalf("compiled parts missing:\n%s", out)
			}
			// Splicing again replaces; nothing is doubled.
			again, err := splice(out, r, c, comp)
			if err != nil || string(again) != string(out) {
				t.Errorf("second splice differs (err %v):\n%s\n----\n%s", err, out, again)
			}
			// Splicing nothing removes every compiled part.
			none, err := splice(out, nil, nil, nil)
			if err != nil || strings.Contains(string(none), "S.") || strings.Contains(string(none), "compiled:") {
				t.Errorf("compiled parts left (err %v):\n%s", err, none)
			}
		})
	}
}

// FuzzSplice: splicing compiled rules into any policy text never panics,
// and what it returns is YAML that holds the compiled rules, and nothing
// of them once spliced out again.
func FuzzSplice(f *testing.F) {
	f.Add("version: 1\nrules:\n  - id: a\n    effect: allow\n    tool: y\ntests:\n", "- a\n- b\n")
	f.Add("version: 1\nrules: []\n# c\n", "one\ntwo\n")
	f.Add("rules:\n- {id: a, effect: allow, tool: y, source: x}\ncompiled: {from: R}\n", "```\n- x\n```\n- y\n")
	r := []yamlRule{{ID: "n", Effect: "ask", Tool: []string{"x"}, Source: "S."}}
	comp := &yamlCompiled{From: "RULES.md", Sources: "sha256:0", Rules: "sha256:1"}
	f.Fuzz(func(t *testing.T, pol, rules string) {
		srcs, err := ParseSources("R.md", rules)
		for i, s := range srcs {
			if err != nil || strings.TrimSpace(s.Text) == "" || s.Line < 1 || (i > 0 && s.Line <= srcs[i-1].Line) {
				t.Fatalf("sources %+v (err %v)", srcs, err)
			}
		}
		out, err := splice([]byte(pol), r, nil, comp)
		if err != nil {
			return
		}
		p, _ := policy.Parse("/tmp/warden.yaml", out)
		found := false
		for _, x := range p.Rules {
			found = found || x.Source == "S."
		}
		if !found {
			t.Fatalf("the compiled rule is not in:\n%s", out)
		}
		back, err := splice(out, nil, nil, nil)
		if err != nil {
			t.Fatalf("splicing out: %v\n%s", err, out)
		}
		p, _ = policy.Parse("/tmp/warden.yaml", back)
		for _, x := range p.Rules {
			if x.Source == "S." {
				t.Fatalf("the compiled rule is left in:\n%s", back)
			}
		}
	})
}
