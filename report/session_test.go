package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/warden-run/warden/report"
)

const supportSchema = `{
  "type": "object",
  "properties": {
    "language": {"type": "string", "minLength": 2},
    "categories": {"type": "array", "items": {"type": "string"}, "minItems": 1}
  },
  "required": ["language", "categories"],
  "additionalProperties": false
}`

const scoreSchema = `{"type": "object", "properties": {"accuracy": {"type": "integer", "minimum": 0, "maximum": 100}}, "required": ["accuracy"]}`

// testPlugin is a Go plugin that records what it receives.
type testPlugin struct {
	name    string
	req     report.Requirements
	onDone  func(ctx context.Context, c report.Completion) error
	mu      sync.Mutex
	calls   []report.Completion
	session int // state a plugin might keep per session
}

func (p *testPlugin) Name() string                      { return p.name }
func (p *testPlugin) Requirements() report.Requirements { return p.req }
func (p *testPlugin) OnComplete(ctx context.Context, c report.Completion) error {
	p.mu.Lock()
	p.calls = append(p.calls, c)
	p.mu.Unlock()
	if p.onDone != nil {
		return p.onDone(ctx, c)
	}
	return nil
}

func (p *testPlugin) completions() []report.Completion {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]report.Completion(nil), p.calls...)
}

func supportPlugin() *testPlugin {
	return &testPlugin{name: "support", req: report.Requirements{
		Schema:           json.RawMessage(supportSchema),
		Instruction:      "Describe the request: its language and its categories.",
		ShortInstruction: "JSON object with language and categories.",
		Example:          json.RawMessage(`{"language": "en", "categories": ["billing"]}`),
	}}
}

func scorePlugin() *testPlugin {
	return &testPlugin{name: "score", req: report.Requirements{
		Schema:           json.RawMessage(scoreSchema),
		Instruction:      "Rate the accuracy of your answer from 0 to 100.",
		ShortInstruction: "JSON object with accuracy (integer 0-100).",
	}}
}

func factoryOf(p *testPlugin) report.Factory { return func() report.Plugin { return p } }

func newSession(t *testing.T, plugins ...*testPlugin) *report.Session {
	t.Helper()
	cfg := &report.Config{Nonce: "abc123", SessionID: "s-1"}
	for _, p := range plugins {
		cfg.Plugins = append(cfg.Plugins, factoryOf(p))
	}
	s, err := report.NewSession(cfg)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	return s
}

const (
	validSupport   = `{"language": "en", "categories": ["billing"]}`
	invalidSupport = `{"language": "en", "categories": "billing"}`
	validScore     = `{"accuracy": 90}`
)

func meta(plugin, body string) string { return oM(plugin) + "\n" + body + "\n" + cM + "\n" }
func final(body string) string        { return oF + "\n" + body + "\n" + cF + "\n" }

type wantTurn struct {
	final    report.FinalStatus
	metas    map[string]report.Status
	done     bool
	contains []string // in the feedback
	excludes []string // not in the feedback
}

// TestScenarios runs the scenarios of a report contract (a report, a
// retry, a cache hit, ...) turn by turn.
func TestScenarios(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		plugins []func() *testPlugin
		turns   []string
		want    []wantTurn
	}{
		{
			name:    "single plugin, META present and valid",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("The answer.") + meta("support", validSupport)},
			want:    []wantTurn{{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaValid}, done: true}},
		},
		{
			name:    "single plugin, META missing, then sent alone",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("The answer."), meta("support", validSupport)},
			want: []wantTurn{
				{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaMissing},
					contains: []string{`Metadata for plugin "support" is missing.`, "Do not send it again.", oM("support"), cM},
					excludes: []string{oF}},
				{final: report.FinalKept, metas: map[string]report.Status{"support": report.MetaValid}, done: true},
			},
		},
		{
			name:    "single plugin, META invalid schema, then fixed",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("The answer.") + meta("support", invalidSupport), meta("support", validSupport)},
			want: []wantTurn{
				{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaSchemaInvalid},
					contains: []string{`Metadata for plugin "support" failed schema validation:`, "at /categories: got string, want array", `The schema for plugin "support" is:`, oM("support")},
					excludes: []string{oF}},
				{final: report.FinalKept, metas: map[string]report.Status{"support": report.MetaValid}, done: true},
			},
		},
		{
			name:    "single plugin, META not JSON",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("x") + meta("support", `{language: en}`)},
			want: []wantTurn{{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaNotJSON},
				contains: []string{`Metadata for plugin "support" is not valid JSON: invalid character 'l' looking for beginning of object key string (line 1, column 2 of the block).`}}},
		},
		{
			name:    "single plugin, META truncated",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("x") + oM("support") + `{"language": "en", "categ`},
			want: []wantTurn{{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaTruncated},
				contains: []string{`Metadata for plugin "support" appears truncated: its closing tag ` + cM + ` is missing.`}}},
		},
		{
			name:    "multiple plugins, all META present",
			plugins: []func() *testPlugin{supportPlugin, scorePlugin},
			turns:   []string{meta("score", validScore) + final("x") + meta("support", validSupport)},
			want: []wantTurn{{final: report.FinalAccepted, done: true,
				metas: map[string]report.Status{"support": report.MetaValid, "score": report.MetaValid}}},
		},
		{
			name:    "multiple plugins, one META missing: the retry asks only for it",
			plugins: []func() *testPlugin{supportPlugin, scorePlugin},
			turns:   []string{final("x") + meta("support", validSupport), meta("score", validScore)},
			want: []wantTurn{
				{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaValid, "score": report.MetaMissing},
					contains: []string{`Metadata for plugin "score" is missing.`, oM("score"), `Metadata for plugin "support" was accepted. Do not send it again.`},
					excludes: []string{oM("support"), oF}},
				{final: report.FinalKept, done: true, metas: map[string]report.Status{"support": report.MetaKept, "score": report.MetaValid}},
			},
		},
		{
			name:    "META before FINAL",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{meta("support", validSupport) + "Some text.\n" + final("x")},
			want:    []wantTurn{{final: report.FinalAccepted, done: true, metas: map[string]report.Status{"support": report.MetaValid}}},
		},
		{
			name:    "META after FINAL",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("x") + "trailing words\n" + meta("support", validSupport)},
			want:    []wantTurn{{final: report.FinalAccepted, done: true, metas: map[string]report.Status{"support": report.MetaValid}}},
		},
		{
			name:    "META inside FINAL (interleaved)",
			plugins: []func() *testPlugin{supportPlugin, scorePlugin},
			turns:   []string{oF + "part one\n" + meta("support", validSupport) + "part two\n" + meta("score", validScore) + cF},
			want: []wantTurn{{final: report.FinalAccepted, done: true,
				metas: map[string]report.Status{"support": report.MetaValid, "score": report.MetaValid}}},
		},
		{
			name:    "META first, FINAL in a later turn",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{meta("support", validSupport), final("x")},
			want: []wantTurn{
				{final: report.FinalMissing, metas: map[string]report.Status{"support": report.MetaValid},
					contains: []string{"The final report is missing", oF, cF, `Metadata for plugin "support" was accepted.`},
					excludes: []string{oM("support")}},
				{final: report.FinalAccepted, done: true, metas: map[string]report.Status{"support": report.MetaKept}},
			},
		},
		{
			name:    "truncated FINAL is not locked",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{meta("support", validSupport) + oF + "half", final("whole")},
			want: []wantTurn{
				{final: report.FinalTruncated, metas: map[string]report.Status{"support": report.MetaValid},
					contains: []string{"The final report appears truncated: its closing tag " + cF + " is missing.", oF}},
				{final: report.FinalAccepted, done: true, metas: map[string]report.Status{"support": report.MetaKept}},
			},
		},
		{
			name:    "empty FINAL",
			plugins: nil,
			turns:   []string{oF + " \n " + cF},
			want:    []wantTurn{{final: report.FinalEmpty, contains: []string{"The final report is empty: it shows nothing."}}},
		},
		{
			name:    "no plugins",
			plugins: nil,
			turns:   []string{"no tags at all", final("x")},
			want: []wantTurn{
				{final: report.FinalMissing, contains: []string{"The final report is missing"}, excludes: []string{"META"}},
				{final: report.FinalAccepted, done: true},
			},
		},
		{
			name:    "unknown plugin and missing attribute are named",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("x") + "\n" + meta("suport", validSupport) + "<warden-abc123-META>{}" + cM},
			want: []wantTurn{{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaMissing},
				contains: []string{`names plugin "suport", which is not required here`, "has no plugin attribute", `Metadata for plugin "support" is missing.`}}},
		},
		{
			name:    "two META blocks of one plugin in a turn: neither is taken",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("x") + meta("support", invalidSupport) + meta("support", validSupport), meta("support", validSupport)},
			want: []wantTurn{
				{final: report.FinalAccepted, metas: map[string]report.Status{"support": report.MetaDuplicate},
					contains: []string{`Metadata for plugin "support" was sent more than once in one response; send one block for it, exactly once.`, oM("support")}},
				{final: report.FinalKept, done: true, metas: map[string]report.Status{"support": report.MetaValid}},
			},
		},
		{
			name:    "two FINAL blocks in a turn: neither is taken",
			plugins: nil,
			turns:   []string{final("first answer") + final("second answer"), final("the answer")},
			want: []wantTurn{
				{final: report.FinalDuplicate, contains: []string{"The response has 2 warden-abc123-FINAL blocks; send the final report exactly once"}},
				{final: report.FinalAccepted, done: true},
			},
		},
		{
			name:    "the instructions' placeholder is no report",
			plugins: nil,
			turns:   []string{final("your final report"), final("  Your  complete final REPORT. "), final("The refund was issued.")},
			want: []wantTurn{
				{final: report.FinalPlaceholder, contains: []string{"The final report is the placeholder from the instructions, not a report."}},
				{final: report.FinalPlaceholder},
				{final: report.FinalAccepted, done: true},
			},
		},
		{
			name:    "a body of only invisible characters is empty",
			plugins: nil,
			turns:   []string{final("\u200b"), final("\u200b\u200d\ufeff \u2060\t\u3164"), final("ok\u200b")},
			want: []wantTurn{
				{final: report.FinalEmpty, contains: []string{"The final report is empty: it shows nothing."}},
				{final: report.FinalEmpty},
				{final: report.FinalAccepted, done: true},
			},
		},
		{
			name:    "the format shown in a code fence is no report",
			plugins: []func() *testPlugin{supportPlugin},
			turns: []string{"I will answer like this:\n```\n" + final("your answer") + meta("support", validSupport) + "```\nNow to work.\n",
				"~~~~text\n" + final("x") + "~~~~\n", final("The answer.") + meta("support", validSupport)},
			want: []wantTurn{
				{final: report.FinalQuoted, metas: map[string]report.Status{"support": report.MetaQuoted},
					contains: []string{"The warden-abc123-FINAL block on line 3 is inside a code fence, so it reads as an example, not as your report.",
						`The metadata block for plugin "support" on line 6 is inside a code fence`}},
				{final: report.FinalQuoted, metas: map[string]report.Status{"support": report.MetaMissing}},
				{final: report.FinalAccepted, done: true, metas: map[string]report.Status{"support": report.MetaValid}},
			},
		},
		{
			name:    "an unclosed code fence quotes to the end",
			plugins: nil,
			turns:   []string{"```md\n" + final("x")},
			want:    []wantTurn{{final: report.FinalQuoted, contains: []string{"inside a code fence"}}},
		},
		{
			name:    "indented code and HTML comments are no report",
			plugins: nil,
			turns: []string{"Format:\n\n    " + oF + "\n    x\n    " + cF + "\n", "<!--\n" + final("x") + "-->\n",
				"text <!-- " + oF + " x " + cF + " --> more", "\t" + final("x"), final("the answer")},
			want: []wantTurn{
				{final: report.FinalQuoted, contains: []string{"in an indented code block"}},
				{final: report.FinalQuoted, contains: []string{"inside an HTML comment"}},
				{final: report.FinalQuoted},
				{final: report.FinalQuoted},
				{final: report.FinalAccepted, done: true},
			},
		},
		{
			name:    "a paragraph continued by an indented line, and a closed comment before, are text",
			plugins: nil,
			turns:   []string{"<!-- a note -->\nHere it is:\n    " + oF + "\nThe answer.\n" + cF},
			want:    []wantTurn{{final: report.FinalAccepted, done: true}},
		},
		{
			name:    "a code fence inside the report is the report's",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("Run this:\n```sh\nmake test\n```\nDone.") + meta("support", validSupport)},
			want:    []wantTurn{{final: report.FinalAccepted, done: true, metas: map[string]report.Status{"support": report.MetaValid}}},
		},
		{
			name:    "META in a code fence is accepted",
			plugins: []func() *testPlugin{supportPlugin},
			turns:   []string{final("x") + meta("support", "```json\n"+validSupport+"\n```")},
			want:    []wantTurn{{final: report.FinalAccepted, done: true, metas: map[string]report.Status{"support": report.MetaValid}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ps []*testPlugin
			for _, mk := range tc.plugins {
				ps = append(ps, mk())
			}
			s := newSession(t, ps...)
			for i, resp := range tc.turns {
				turn := s.Turn([]byte(resp))
				w := tc.want[i]
				if turn.Number != i+1 {
					t.Errorf("turn %d: Number = %d", i+1, turn.Number)
				}
				if turn.Final != w.final {
					t.Errorf("turn %d: Final = %s, want %s", i+1, turn.Final, w.final)
				}
				if turn.Done != w.done || s.Done() != w.done {
					t.Errorf("turn %d: Done = %v (session %v), want %v; feedback:\n%s", i+1, turn.Done, s.Done(), w.done, turn.Feedback)
				}
				if len(turn.Metas) != len(ps) {
					t.Fatalf("turn %d: %d meta checks, want %d", i+1, len(turn.Metas), len(ps))
				}
				for j, c := range turn.Metas {
					if c.Plugin != ps[j].name {
						t.Errorf("turn %d: check %d is for %q, want %q", i+1, j, c.Plugin, ps[j].name)
					}
					if want := w.metas[c.Plugin]; c.Status != want {
						t.Errorf("turn %d: plugin %q status %s %v, want %s", i+1, c.Plugin, c.Status, c.Details, want)
					}
				}
				if w.done != (turn.Feedback == "") {
					t.Errorf("turn %d: feedback %q with done %v", i+1, turn.Feedback, w.done)
				}
				for _, c := range w.contains {
					if !strings.Contains(turn.Feedback, c) {
						t.Errorf("turn %d: feedback lacks %q:\n%s", i+1, c, turn.Feedback)
					}
				}
				for _, c := range w.excludes {
					if strings.Contains(turn.Feedback, c) {
						t.Errorf("turn %d: feedback contains %q:\n%s", i+1, c, turn.Feedback)
					}
				}
				if turn.Feedback != "" {
					checkPlainText(t, turn.Feedback)
				}
			}
		})
	}
}

// checkPlainText enforces the model-facing text rules: no emoji, no box
// drawing, no markdown beyond headings and plain "- " lists.
func checkPlainText(t *testing.T, s string) {
	t.Helper()
	for _, r := range s {
		if r > unicode.MaxASCII {
			t.Errorf("model-facing text has non-ASCII %q:\n%s", r, s)
			return
		}
	}
	for _, bad := range []string{"**", "__", "```", "| "} {
		if strings.Contains(s, bad) {
			t.Errorf("model-facing text has markdown %q:\n%s", bad, s)
		}
	}
}

// TestFinalLockedNeverStreamsTwice drives three turns: the final report is
// locked in the first; later turns' filters write nothing even when the
// model sends a different final report, and the locked one is the result.
func TestFinalLockedNeverStreamsTwice(t *testing.T) {
	t.Parallel()
	sup, sc := supportPlugin(), scorePlugin()
	s := newSession(t, sup, sc)
	turns := []struct{ resp, streamed string }{
		{final("First answer.") + meta("support", validSupport), "\nFirst answer.\n"},
		{final("Second answer.") + meta("score", `{"accuracy": "high"}`), ""},
		{final("Third answer.") + meta("score", validScore), ""},
	}
	for i, tc := range turns {
		var out bytes.Buffer
		f := s.NewFilter(&out)
		for _, c := range []byte(tc.resp) { // one byte at a time
			f.Write([]byte{c})
		}
		f.Close()
		if out.String() != tc.streamed {
			t.Fatalf("turn %d streamed %q, want %q", i+1, out.String(), tc.streamed)
		}
		turn := s.Turn([]byte(tc.resp))
		if i > 0 && turn.Final != report.FinalKept {
			t.Fatalf("turn %d: Final = %s, want kept", i+1, turn.Final)
		}
		if i == 1 && (turn.Done || strings.Contains(turn.Feedback, oF) || !strings.Contains(turn.Feedback, "at /accuracy: got string, want integer")) {
			t.Fatalf("turn 2 feedback:\n%s", turn.Feedback)
		}
	}
	res, ok := s.Result()
	if !ok || res.FinalReport != "\nFirst answer.\n" {
		t.Fatalf("Result = %+v, %v; want the first final report", res, ok)
	}
	if string(res.Metas["support"]) != `{"language":"en","categories":["billing"]}` || string(res.Metas["score"]) != `{"accuracy":90}` {
		t.Fatalf("Result metas = %s", res.Metas)
	}
}

// TestFactoryFreshInstancePerSession checks that each
// session calls the factory and gets its own instance, so state does not
// leak between sessions.
func TestFactoryFreshInstancePerSession(t *testing.T) {
	t.Parallel()
	var made []*testPlugin
	factory := func() report.Plugin {
		p := scorePlugin()
		p.session = len(made) + 1
		made = append(made, p)
		return p
	}
	for i := range 2 {
		s, err := report.NewSession(&report.Config{Nonce: "abc123", Plugins: []report.Factory{factory}})
		if err != nil {
			t.Fatal(err)
		}
		s.Turn([]byte(final("x") + meta("score", fmt.Sprintf(`{"accuracy": %d}`, 10*(i+1)))))
		p, err := s.Complete(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		p.Wait()
	}
	if len(made) != 2 || made[0] == made[1] {
		t.Fatalf("factory made %d instances, want 2 distinct", len(made))
	}
	for i, p := range made {
		calls := p.completions()
		if len(calls) != 1 || string(calls[0].Meta) != fmt.Sprintf(`{"accuracy":%d}`, 10*(i+1)) {
			t.Errorf("instance %d saw %+v, want only its own session's metadata", i+1, calls)
		}
	}
}

func TestNewSessionRejectsBadPlugins(t *testing.T) {
	t.Parallel()
	valid := supportPlugin().req
	with := func(mod func(r *report.Requirements)) report.Requirements {
		r := valid
		mod(&r)
		return r
	}
	cases := []struct {
		name    string
		factory report.Factory
		want    string
	}{
		{"nil factory", nil, "factory is nil"},
		{"factory returns nil", func() report.Plugin { return nil }, "factory returned no plugin"},
		{"bad name", factoryOf(&testPlugin{name: "bad name", req: valid}), `plugin name "bad name"`},
		{"empty name", factoryOf(&testPlugin{name: "", req: valid}), `plugin name ""`},
		{"no schema", factoryOf(&testPlugin{name: "p", req: with(func(r *report.Requirements) { r.Schema = nil })}), "schema is required"},
		{"no instruction", factoryOf(&testPlugin{name: "p", req: with(func(r *report.Requirements) { r.Instruction = " " })}), "instruction (for the system prompt) is required"},
		{"no short instruction", factoryOf(&testPlugin{name: "p", req: with(func(r *report.Requirements) { r.ShortInstruction = "" })}), "short instruction"},
		{"schema not JSON", factoryOf(&testPlugin{name: "p", req: with(func(r *report.Requirements) { r.Schema = json.RawMessage(`{type: object}`) })}), "schema is not JSON"},
		{"schema invalid", factoryOf(&testPlugin{name: "p", req: with(func(r *report.Requirements) { r.Schema = json.RawMessage(`{"type": "objekt"}`) })}), "not a valid JSON Schema"},
		{"schema with external ref", factoryOf(&testPlugin{name: "p", req: with(func(r *report.Requirements) { r.Schema = json.RawMessage(`{"$ref": "other.json"}`) })}), "external references are not supported"},
		{"example fails schema", factoryOf(&testPlugin{name: "p", req: with(func(r *report.Requirements) { r.Example = json.RawMessage(`{"language": 1}`) })}), "example does not satisfy the schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := report.NewSession(&report.Config{Plugins: []report.Factory{tc.factory}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewSession error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("duplicate", func(t *testing.T) {
		t.Parallel()
		_, err := report.NewSession(&report.Config{Plugins: []report.Factory{factoryOf(supportPlugin()), factoryOf(supportPlugin())}})
		if err == nil || !strings.Contains(err.Error(), `plugin "support" is configured twice`) {
			t.Fatalf("error = %v", err)
		}
	})
}

// TestInstructionsOmnipresence checks that every text that shows
// the final report tag also shows every missing plugin's META tag, and the
// long instruction, schema and example reach the system prompt.
func TestInstructionsOmnipresence(t *testing.T) {
	t.Parallel()
	s := newSession(t, supportPlugin(), scorePlugin())
	texts := map[string]string{"instructions": s.Instructions(), "reminder": s.Reminder()}
	turn := s.Turn([]byte("thinking, no answer yet"))
	texts["feedback"] = turn.Feedback
	for name, text := range texts {
		checkPlainText(t, text)
		if !strings.Contains(text, oF) {
			t.Errorf("%s lacks the FINAL tag:\n%s", name, text)
		}
		for _, p := range []string{"support", "score"} {
			if !strings.Contains(text, oM(p)) {
				t.Errorf("%s mentions the final report without the META tag of %q:\n%s", name, p, text)
			}
		}
	}
	ins := texts["instructions"]
	for _, want := range []string{
		"Describe the request: its language and its categories.",
		"Rate the accuracy of your answer from 0 to 100.",
		`"required":["language","categories"]`,
		`{"language":"en","categories":["billing"]}`,
		"{the JSON object for score}",
		"## Example of a complete final answer",
	} {
		if !strings.Contains(ins, want) {
			t.Errorf("instructions lack %q:\n%s", want, ins)
		}
	}
	// Without plugins, the texts give the final report alone.
	bare := newSession(t)
	if strings.Contains(bare.Instructions(), "META") || !strings.Contains(bare.Reminder(), oF) {
		t.Errorf("no-plugin texts:\n%s\n%s", bare.Instructions(), bare.Reminder())
	}
}

func TestReminderFollowsState(t *testing.T) {
	t.Parallel()
	s := newSession(t, supportPlugin(), scorePlugin())
	s.Turn([]byte(final("x") + meta("support", validSupport)))
	r := s.Reminder()
	if !strings.Contains(r, "do not send it again") || strings.Contains(r, oF) || strings.Contains(r, oM("support")) || !strings.Contains(r, oM("score")) {
		t.Fatalf("reminder after the final report:\n%s", r)
	}
	s.Turn([]byte(meta("score", validScore)))
	if r := s.Reminder(); r != "" {
		t.Fatalf("reminder of a final session = %q, want empty", r)
	}
}

// logBuffer collects slog records as JSON lines, safely across goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestComplete(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	ok := supportPlugin()
	failing := scorePlugin()
	failing.onDone = func(context.Context, report.Completion) error { return errors.New("database unreachable") }
	panicking := &testPlugin{name: "panicky", req: failing.req, onDone: func(context.Context, report.Completion) error { panic("boom") }}
	slow := &testPlugin{name: "slow", req: failing.req, onDone: func(ctx context.Context, _ report.Completion) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	stuck := &testPlugin{name: "stuck", req: failing.req, onDone: func(context.Context, report.Completion) error {
		time.Sleep(time.Hour) // ignores its context
		return nil
	}}
	s, err := report.NewSession(&report.Config{
		Nonce: "abc123", SessionID: "sess-9",
		Plugins:         []report.Factory{factoryOf(ok), factoryOf(failing), factoryOf(panicking), factoryOf(slow), factoryOf(stuck)},
		Logger:          slog.New(slog.NewJSONHandler(&logs, nil)),
		CompleteTimeout: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(context.Background(), false); !errors.Is(err, report.ErrNotFinal) {
		t.Fatalf("Complete before final: %v, want ErrNotFinal", err)
	}
	resp := final("The answer.") + meta("support", validSupport)
	for _, p := range []string{"score", "panicky", "slow", "stuck"} {
		resp += meta(p, validScore)
	}
	if turn := s.Turn([]byte(resp)); !turn.Done {
		t.Fatalf("not done:\n%s", turn.Feedback)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pend, err := s.Complete(ctx, false)
	cancel() // fire-and-forget: the calls outlive the caller's context
	if err != nil {
		t.Fatal(err)
	}
	errs := pend.Wait()
	if len(errs) != 4 {
		t.Fatalf("Wait returned %d errors, want 4 (failing, panicking, slow, stuck): %v", len(errs), errs)
	}
	joined := fmt.Sprint(errs)
	for _, want := range []string{`plugin "score": database unreachable`, `plugin "panicky": on-complete panicked: boom`, `plugin "slow": on-complete did not finish within 50ms: context deadline exceeded`, `plugin "stuck": on-complete did not finish within 50ms and ignored its deadline`} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q: %s", want, joined)
		}
	}
	c := ok.completions()
	if len(c) != 1 {
		t.Fatalf("support plugin called %d times, want 1", len(c))
	}
	want := report.Completion{Plugin: "support", SessionID: "sess-9", FinalReport: "\nThe answer.\n", Meta: json.RawMessage(`{"language":"en","categories":["billing"]}`), FromCache: false}
	if fmt.Sprint(c[0]) != fmt.Sprint(want) {
		t.Errorf("completion = %+v, want %+v", c[0], want)
	}
	var warned int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["level"] != "WARN" || rec["from_cache"] != false || rec["plugin"] == "support" {
			t.Errorf("log record %v: want WARN with from_cache=false for a failing plugin", rec)
		}
		warned++
	}
	if warned != 4 {
		t.Errorf("%d warnings logged, want 4:\n%s", warned, logs.String())
	}
	if !s.Done() {
		t.Error("a failing on-complete made the session not final")
	}
}

// TestCacheHit covers the cache at this layer: a
// restored session calls OnComplete with FromCache, and an entry without the
// metadata (or with metadata the current schema rejects) is not usable.
func TestCacheHit(t *testing.T) {
	t.Parallel()
	first := newSession(t, supportPlugin(), scorePlugin())
	first.Turn([]byte(final("Cached answer.") + meta("support", validSupport) + meta("score", validScore)))
	res, ok := first.Result()
	if !ok {
		t.Fatal("first session not final")
	}
	blob, _ := json.Marshal(res)
	var cached report.Result
	if err := json.Unmarshal(blob, &cached); err != nil {
		t.Fatal(err)
	}

	sup, sc := supportPlugin(), scorePlugin()
	hit := newSession(t, sup, sc)
	if err := hit.Restore(cached); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if !hit.Done() {
		t.Fatal("restored session is not final")
	}
	pend, err := hit.Complete(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if errs := pend.Wait(); len(errs) != 0 {
		t.Fatal(errs)
	}
	for _, p := range []*testPlugin{sup, sc} {
		c := p.completions()
		if len(c) != 1 || !c[0].FromCache || c[0].FinalReport != "\nCached answer.\n" || len(c[0].Meta) == 0 {
			t.Errorf("plugin %s completions = %+v, want one with FromCache", p.name, c)
		}
	}
	if err := hit.Restore(cached); err == nil {
		t.Error("Restore on a started session succeeded")
	}

	old := report.Result{FinalReport: "Old answer.", Metas: map[string]json.RawMessage{"support": json.RawMessage(validSupport)}}
	miss := newSession(t, supportPlugin(), scorePlugin())
	err = miss.Restore(old)
	if err == nil || !strings.Contains(err.Error(), `metadata for plugin "score" is missing`) {
		t.Fatalf("Restore of an old entry = %v, want the missing plugin named", err)
	}
	if miss.Done() {
		t.Fatal("failed Restore changed the session")
	}
	if turn := miss.Turn([]byte(final("fresh") + meta("support", validSupport) + meta("score", validScore))); !turn.Done {
		t.Fatal("session unusable after a failed Restore")
	}

	changed := scorePlugin()
	changed.req.Schema = json.RawMessage(`{"type": "object", "required": ["accuracy", "reason"]}`)
	stale := newSession(t, supportPlugin(), changed)
	if err := stale.Restore(cached); err == nil || !strings.Contains(err.Error(), `missing property 'reason'`) {
		t.Fatalf("Restore against a changed schema = %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s := newSession(t, supportPlugin())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				s.Turn([]byte(final("x") + meta("support", validSupport)))
			} else {
				_ = s.Reminder()
				_ = s.Done()
				var out bytes.Buffer
				f := s.NewFilter(&out)
				f.Write([]byte(final("y")))
				f.Close()
			}
		}()
	}
	wg.Wait()
	if res, ok := s.Result(); !ok || res.FinalReport != "\nx\n" {
		t.Fatalf("Result = %+v, %v", res, ok)
	}
}

// TestCompleteOrigin: the session's origin (request, messages, agent,
// transcript) reaches every plugin's completion, each with its own copy,
// and the completion's JSON carries it under the documented names.
func TestCompleteOrigin(t *testing.T) {
	t.Parallel()
	a, b := supportPlugin(), scorePlugin()
	a.onDone = func(_ context.Context, c report.Completion) error {
		c.Messages[0].Text = "changed by a plugin"
		c.Agent.Role = "changed"
		return nil
	}
	origin := report.Origin{
		Request:         "Why does the printer jam?",
		Messages:        []report.Message{{Role: "user", Text: "Why does the printer jam?"}, {Role: "assistant", Text: "The tray."}},
		MessagesOmitted: 3,
		Agent:           &report.Agent{Host: "claude", Session: "p/a1", Parent: "p", Role: "support", Name: "a1", Depth: 1},
		Transcript:      "/tmp/t.jsonl",
	}
	s, err := report.NewSession(&report.Config{Nonce: "abc123", SessionID: "p/a1", Plugins: []report.Factory{factoryOf(a), factoryOf(b)}, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	if turn := s.Turn([]byte(final("The answer.") + meta("support", validSupport) + meta("score", validScore))); !turn.Done {
		t.Fatal(turn.Feedback)
	}
	pend, err := s.Complete(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if errs := pend.Wait(); len(errs) > 0 {
		t.Fatal(errs)
	}
	cb := b.completions()
	if len(cb) != 1 {
		t.Fatalf("score plugin called %d times", len(cb))
	}
	data, err := json.Marshal(cb[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"plugin":"score","session_id":"p/a1","final_report":"\nThe answer.\n","meta":{"accuracy":90},"from_cache":true,` +
		`"request":"Why does the printer jam?","messages":[{"role":"user","text":"Why does the printer jam?"},{"role":"assistant","text":"The tray."}],` +
		`"messages_omitted":3,"agent":{"host":"claude","session":"p/a1","parent":"p","role":"support","name":"a1","depth":1},"transcript":"/tmp/t.jsonl"}`
	if string(data) != want {
		t.Errorf("completion JSON:\n got %s\nwant %s", data, want)
	}
	if origin.Messages[0].Text != "Why does the printer jam?" || origin.Agent.Role != "support" {
		t.Errorf("a plugin changed the session's origin: %+v %+v", origin.Messages, origin.Agent)
	}
}
