package compile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/compile"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/scripted"
	"github.com/warden-run/warden/policy"
	wsview "github.com/warden-run/warden/workspace"
)

// workspace copies an example's policy and RULES.md into a fresh folder.
func workspace(t *testing.T, example string) (policyFile, rulesFile string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"warden.yaml", "RULES.md"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", "compile", example, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "warden.yaml"), filepath.Join(dir, "RULES.md")
}

// writeFile writes a file into dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// recorded returns the recorded answers of an example, in order.
func recorded(t *testing.T, example string) []scripted.Turn {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "examples", "compile", example, "answers", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded answers for %s: %v", example, err)
	}
	sort.Strings(files)
	var turns []scripted.Turn
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, scripted.Turn{Name: filepath.Base(f), Text: string(data)})
	}
	return turns
}

// model starts the scripted model server with turns.
func model(t *testing.T, turns ...scripted.Turn) (*compile.Model, *scripted.Server) {
	t.Helper()
	srv, err := scripted.Start(turns...)
	if err != nil {
		t.Fatal(err)
	}
	srv.Fallback = `{"rules": []}`
	srv.CountPromptTokens = true
	t.Cleanup(func() { srv.Close() })
	return &compile.Model{BaseURL: srv.URL + "/v1", Name: "recorded", APIKey: "sk-test-0123456789", Timeout: 10 * time.Second}, srv
}

// runPolicyTests loads a policy and runs every one of its tests.
func runPolicyTests(t *testing.T, file string) (passed int) {
	t.Helper()
	p, err := policy.Load(file)
	if err != nil {
		t.Fatalf("the compiled policy does not load: %v", err)
	}
	eng, err := engine.Compile(p, wsview.Live())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Tests {
		d := eng.Decide(c.Call, nil).Decision
		if d.Decision != c.Expect || (c.Rule != "" && d.Rule != c.Rule) {
			t.Errorf("test %s (%s): expected %s (rule %q), got %s (%s, rule %q)", c.Name, c.Pos, c.Expect, c.Rule, d.Decision, d.Code, d.Rule)
			continue
		}
		passed++
	}
	return passed
}

func TestSeedExamplesCompile(t *testing.T) {
	t.Parallel()
	for _, ex := range []string{"mail", "coding"} {
		t.Run(ex, func(t *testing.T) {
			t.Parallel()
			pol, rules := workspace(t, ex)
			m, srv := model(t, recorded(t, ex)...)
			var progress bytes.Buffer
			res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("failures: %+v\nprogress:\n%s", res.Failures, progress.String())
			}
			srcs, _ := compile.ReadSources(rules)
			// The mail example's third sentence ("Never send email to
			// addresses outside example.com without asking.") was first
			// answered with an ask on every gmail.send, its near miss a
			// draft: refused, because the address condition never reached
			// the rule, and repaired (answers/3b.json).
			repairs := map[string]int{"mail": 1}[ex]
			if res.Compiled != len(srcs) || res.Calls != len(srcs)+repairs || len(srv.Unplayed()) != 0 {
				t.Errorf("compiled %d of %d rules in %d calls; unplayed %v", res.Compiled, len(srcs), res.Calls, srv.Unplayed())
			}
			if ex == "mail" {
				for _, want := range []string{`problem: the sentence names "example.com", but no rule checks it`,
					`problem: rules[0] (ask-before-send): the message says "example.com", which this rule does not check`, "asking for a repair (1 of 2)"} {
					if !strings.Contains(progress.String(), want) {
						t.Errorf("progress lacks %q:\n%s", want, progress.String())
					}
				}
				if !bytes.Contains(res.New, []byte(`"to": "!*@example.com"`)) && !bytes.Contains(res.New, []byte(`to: '!*@example.com'`)) && !bytes.Contains(res.New, []byte(`"!*@example.com"`)) {
					t.Errorf("the compiled policy does not check the address:\n%s", res.New)
				}
			}
			// Every request asked for structured output with the rule schema.
			for _, r := range srv.Requests() {
				var body struct {
					Model          string
					ResponseFormat struct {
						Type       string
						JSONSchema struct {
							Name   string
							Strict bool
							Schema map[string]any
						} `json:"json_schema"`
					} `json:"response_format"`
				}
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				if body.Model != "recorded" || body.ResponseFormat.Type != "json_schema" || !body.ResponseFormat.JSONSchema.Strict ||
					body.ResponseFormat.JSONSchema.Schema["properties"] == nil {
					t.Errorf("request without the rule schema: %s", r.Body)
				}
			}
			if res.PromptTokens == 0 || res.CompletionTokens == 0 {
				t.Errorf("no token counts: %+v", res)
			}
			for _, want := range []string{"[1/4]", "[4/4]", "model call 4", "tokens in", "done: 4 of 4 rules compiled"} {
				if !strings.Contains(progress.String(), want) {
					t.Errorf("progress lacks %q:\n%s", want, progress.String())
				}
			}
			before, _ := os.ReadFile(pol)
			if !bytes.Equal(before, res.Old) {
				t.Fatal("Compile wrote the policy")
			}
			if err := compile.Write(res); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(pol)
			// The hand-written part is kept as it was, comments included.
			for _, l := range strings.Split(strings.TrimSpace(string(before)), "\n") {
				if !strings.Contains(string(after), l+"\n") {
					t.Errorf("line %q of the policy is gone", l)
				}
			}
			p, err := policy.Load(pol)
			if err != nil {
				t.Fatal(err)
			}
			bySource := map[string]int{}
			for _, r := range p.Rules {
				if r.Source != "" {
					bySource[r.Source]++
				}
			}
			for _, s := range srcs {
				if bySource[s.Text] == 0 {
					t.Errorf("no rule records the source %q", s.Text)
				}
			}
			if n := runPolicyTests(t, pol); n < 1+2*len(srcs) {
				t.Errorf("%d tests passed, want at least %d", n, 1+2*len(srcs))
			}
			if err := compile.Check(pol, ""); err != nil {
				t.Errorf("check after a compile: %v", err)
			}
			// A second run asks nothing: every sentence is unchanged.
			res2, err := compile.Compile(context.Background(), pol, rules, compile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res2.OK() || res2.Reused != len(srcs) || res2.Calls != 0 || res2.Diff != "" {
				t.Errorf("recompile: ok %v, reused %d, calls %d, diff:\n%s", res2.OK(), res2.Reused, res2.Calls, res2.Diff)
			}
		})
	}
}
