package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/warden-run/warden/report"
)

// A plugin written in Go: it requires a language code and keeps per-session
// state, which is safe because each session gets its own instance.
type language struct{ seen int }

func (*language) Name() string { return "lang" }

func (*language) Requirements() report.Requirements {
	return report.Requirements{
		Schema:           json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[a-z]{2}$"}},"required":["code"]}`),
		Instruction:      "Give the ISO 639-1 code of the language the user writes in.",
		ShortInstruction: `JSON object with code, such as {"code": "en"}.`,
	}
}

func (l *language) OnComplete(_ context.Context, c report.Completion) error {
	l.seen++
	fmt.Printf("on-complete: %s from_cache=%v\n", c.Meta, c.FromCache)
	return nil
}

// Example drives a session through two turns the way a runtime does: stream
// each turn through the session's filter, then hand the whole response to
// Turn. The second turn is a retry for the metadata only.
func Example() {
	s, err := report.NewSession(&report.Config{
		Nonce:   "5eed",
		Plugins: []report.Factory{func() report.Plugin { return &language{} }},
	})
	if err != nil {
		panic(err)
	}
	turns := []string{
		"<warden-5eed-FINAL>Bonjour !</warden-5eed-FINAL>\n<warden-5eed-META plugin=\"lang\">{\"code\": \"french\"}</warden-5eed-META>",
		"<warden-5eed-META plugin=\"lang\">{\"code\": \"fr\"}</warden-5eed-META>",
	}
	for _, resp := range turns {
		f := s.NewFilter(os.Stdout)
		f.Write([]byte(resp))
		f.Close()
		fmt.Println()
		t := s.Turn([]byte(resp))
		fmt.Printf("turn %d: final %s, lang %s, done %v\n", t.Number, t.Final, t.Metas[0].Status, t.Done)
		if !t.Done {
			fmt.Print(t.Feedback)
		}
	}
	pending, _ := s.Complete(context.Background(), false)
	pending.Wait()
	// Output:
	// Bonjour !
	// turn 1: final accepted, lang schema_invalid, done false
	// ## Final answer not accepted yet
	//
	// A final answer is accepted only with a final report and valid metadata for every required plugin ("lang"). This is what is wrong:
	//
	// - Metadata for plugin "lang" failed schema validation:
	//   - at /code: 'french' does not match pattern '^[a-z]{2}$'
	//
	// Your final report was received and is kept. Do not send it again.
	// The schema for plugin "lang" is:
	// {"type":"object","properties":{"code":{"type":"string","pattern":"^[a-z]{2}$"}},"required":["code"]}
	//
	// Send exactly this now, with your own content in place of the placeholders and example values:
	//
	// Metadata for plugin "lang": JSON object with code, such as {"code": "en"}.
	// <warden-5eed-META plugin="lang">
	// {the JSON object for lang}
	// </warden-5eed-META>
	//
	// turn 2: final kept, lang valid, done true
	// on-complete: {"code":"fr"} from_cache=false
}

// ExampleFilter streams a response in small chunks: only the FINAL content
// comes out, without the META block inside it.
func ExampleFilter() {
	tags, _ := report.ParseTags("", "42")
	var out bytes.Buffer
	f := report.NewFilter(&out, tags)
	resp := `Let me think. <warden-42-FINAL>The build <warden-42-META plugin="ci">{"ok": true}</warden-42-META>passed.</warden-42-FINAL>`
	for i := 0; i < len(resp); i += 5 {
		f.Write([]byte(resp[i:min(i+5, len(resp))]))
	}
	f.Close()
	fmt.Println(out.String())
	// Output:
	// The build passed.
}

// ExampleExtract finds the blocks of a response whatever their order; here
// the model put its metadata after the closing FINAL tag.
func ExampleExtract() {
	tags, _ := report.ParseTags("", "42")
	r := report.Extract([]byte("<warden-42-FINAL>Done.</warden-42-FINAL>\n<warden-42-META plugin=\"ci\">{\"ok\": true}</warden-42-META>"), tags)
	fmt.Printf("final %q\n", r.Final.Content)
	for _, m := range r.Metas {
		fmt.Printf("meta %s %s closed=%v line=%d\n", m.Plugin, m.Content, m.Closed, m.Line)
	}
	// Output:
	// final "Done."
	// meta ci {"ok": true} closed=true line=2
}

// ExampleSession_Instructions prints the system-prompt text of a session
// with one plugin.
func ExampleSession_Instructions() {
	s, _ := report.NewSession(&report.Config{Nonce: "5eed", Plugins: []report.Factory{func() report.Plugin { return &language{} }}})
	fmt.Print(s.Instructions())
	// Output:
	// ## Final report
	//
	// When your work is done, give your final answer inside a final report block, exactly once:
	//
	// <warden-5eed-FINAL>
	// your final report
	// </warden-5eed-FINAL>
	//
	// Text outside this block is not shown to the user.
	//
	// ## Required metadata
	//
	// Your final answer is accepted only together with one metadata block for each of these plugins: "lang". Each block holds one JSON object that satisfies the plugin's schema. Put the blocks after the final report block (before it also works). The metadata is not shown to the user.
	//
	// ### Plugin "lang"
	//
	// Give the ISO 639-1 code of the language the user writes in.
	//
	// Metadata for plugin "lang": JSON object with code, such as {"code": "en"}.
	// <warden-5eed-META plugin="lang">
	// {the JSON object for lang}
	// </warden-5eed-META>
	//
	// Schema:
	// {"type":"object","properties":{"code":{"type":"string","pattern":"^[a-z]{2}$"}},"required":["code"]}
	//
	// ## Example of a complete final answer
	//
	// <warden-5eed-FINAL>
	// your final report
	// </warden-5eed-FINAL>
	// <warden-5eed-META plugin="lang">
	// {the JSON object for lang}
	// </warden-5eed-META>
}
