package bench_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cedar-policy/cedar-go"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/bench"
	"github.com/warden-run/warden/policy"
)

var update = flag.Bool("update", false, "rewrite the golden workload files in testdata/")

// TestCasesAgree checks that the three policies are the same workload: on
// every timed case, at every size, every engine reaches the same decision,
// so the timings compare the same work.
func TestCasesAgree(t *testing.T) {
	t.Parallel()
	for _, n := range bench.Sizes {
		t.Run(fmt.Sprint("rules=", n), func(t *testing.T) {
			t.Parallel()
			for _, d := range engines(t, n) {
				for _, c := range bench.Cases {
					f, err := d.Prepare(c.Call)
					if err != nil {
						t.Fatalf("%s: %s: %v", d.Name(), c.Name, err)
					}
					if got := f(); got != c.Want {
						t.Errorf("%s: %s: decision %s, want %s", d.Name(), c.Name, got, c.Want)
					}
				}
			}
		})
	}
}

// TestWardenSpellings: warden denies every spelling of a dangerous
// command and allows the harmless lines that only mention one, at every
// size.
func TestWardenSpellings(t *testing.T) {
	t.Parallel()
	for _, n := range bench.Sizes {
		t.Run(fmt.Sprint("rules=", n), func(t *testing.T) {
			t.Parallel()
			w, err := bench.NewWarden(bench.Rules(n), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append(append([]bench.Spelling{}, bench.Dangerous...), bench.Harmless...) {
				d := w.E.Decide(warden.ToolCall{Tool: "Bash", Role: "builder", Args: map[string]any{"command": s.Command}}, nil).Decision
				if d.Decision != s.Want {
					t.Errorf("%q: %s (%s %s), want %s", s.Command, d.Decision, d.Code, d.Rule, s.Want)
				}
			}
		})
	}
}

// TestMatrix runs the correctness matrix and reports what the peers do. It
// asserts only that every engine answers (the peers' misses are the point
// of the matrix, not a failure).
func TestMatrix(t *testing.T) {
	t.Parallel()
	ds, err := bench.MatrixEngines(bench.Rules(bench.BaseRules), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := bench.Matrix(ds, append(append([]bench.Spelling{}, bench.Dangerous...), bench.Harmless...))
	if err != nil {
		t.Fatal(err)
	}
	denied := map[string]int{}
	for _, row := range rows {
		var line []string
		for _, d := range ds {
			got := row.Got[d.Name()]
			switch got {
			case warden.Allow, warden.Ask, warden.Deny:
			default:
				t.Errorf("%s: %q: no decision (%q)", d.Name(), row.Spelling.Command, got)
			}
			if got == warden.Deny && row.Spelling.Want == warden.Deny {
				denied[d.Name()]++
			}
			line = append(line, d.Name()+"="+string(got))
		}
		t.Logf("%-40q %s", row.Spelling.Command, strings.Join(line, " "))
	}
	if denied["warden"] != len(bench.Dangerous) {
		t.Errorf("warden denied %d of %d dangerous spellings", denied["warden"], len(bench.Dangerous))
	}
	t.Logf("dangerous spellings denied: %v of %d", denied, len(bench.Dangerous))
}

// TestSizes checks that each size has that many rules in every dialect.
func TestSizes(t *testing.T) {
	t.Parallel()
	for _, n := range bench.Sizes {
		rules := bench.Rules(n)
		if len(rules) != n {
			t.Fatalf("Rules(%d) has %d rules", n, len(rules))
		}
		ids := map[string]bool{}
		for _, r := range rules {
			if ids[r.ID] {
				t.Errorf("rules=%d: duplicate id %s", n, r.ID)
			}
			ids[r.ID] = true
		}

		dir := t.TempDir()
		file := filepath.Join(dir, policy.FileName)
		if err := os.WriteFile(file, bench.WardenYAML(rules), 0o644); err != nil {
			t.Fatal(err)
		}
		p, findings, err := policy.Lint(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			// The padding allows programs warden has no option table for;
			// lint's note that such an allow trusts their options is
			// expected there.
			if f.Severity == policy.SevWarning && strings.Contains(f.Message, "has no table of") {
				continue
			}
			t.Errorf("rules=%d: warden lint: %s", n, f)
		}
		if len(p.Rules) != n {
			t.Errorf("rules=%d: warden policy has %d rules", n, len(p.Rules))
		}

		for _, v := range []bench.Variant{bench.Contains, bench.Literal} {
			c, err := bench.NewCedar(rules, v)
			if err != nil {
				t.Fatal(err)
			}
			// One policy per rule, one per role, and the default for safe kinds.
			if got, want := len(c.Set.Map()), n+len(bench.Roles)+1; got != want {
				t.Errorf("rules=%d %s: cedar has %d policies, want %d", n, v, got, want)
			}
			for _, r := range rules {
				if c.Set.Get(cedar.PolicyID(r.ID)) == nil {
					t.Errorf("rules=%d %s: cedar has no policy %s", n, v, r.ID)
				}
			}

			mod, err := ast.ParseModule("warden.rego", bench.Rego(rules, v))
			if err != nil {
				t.Fatal(err)
			}
			heads := map[string]bool{}
			for _, rule := range mod.Rules {
				if rule.Head.Key != nil {
					if s, ok := rule.Head.Key.Value.(ast.String); ok {
						heads[string(s)] = true
					}
				}
			}
			for _, r := range rules {
				if !heads[r.ID] {
					t.Errorf("rules=%d %s: rego has no rule for %s", n, v, r.ID)
				}
			}
		}
	}
}

// TestGolden keeps the 20-rule workload in all three languages in testdata/,
// for readers; refresh with go test -run Golden -update.
func TestGolden(t *testing.T) {
	rules := bench.Rules(bench.BaseRules)
	files := map[string]string{
		"workload-20.warden.yaml": string(bench.WardenYAML(rules)),
		"workload-20.rego":        bench.Rego(rules, bench.Contains),
		"workload-20.cedar":       bench.CedarPolicies(rules, bench.Contains),
	}
	for name, want := range files {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run Golden -update)", err)
		}
		if string(got) != want {
			t.Errorf("%s is stale: run go test -run Golden -update", path)
		}
	}
}
