package compile

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// answerSchema is the JSON Schema of one model answer: the warden rules
// compiled from one plain-language rule, each with its test cases. It is
// sent as the chat request's structured-output schema and checked again
// here, because not every OpenAI-compatible server enforces it. It keeps to
// the subset OpenAI's strict mode accepts (every property required, no
// additional properties, no minItems or patterns): "none" is an empty
// string or an empty list, and counts are checked in Go.
//
//go:embed schema.json
var answerSchema []byte

// Answer is the model's answer for one plain-language rule.
type Answer struct {
	Rules []AnswerRule `json:"rules"`
}

// AnswerRule is one warden rule as the model writes it; the fields are
// those of a policy rule (docs/policy.md), with args as a list of pairs.
type AnswerRule struct {
	ID         string     `json:"id"`
	Effect     string     `json:"effect"`
	Tool       []string   `json:"tool"`
	Command    []string   `json:"command"`
	Path       []string   `json:"path"`
	Args       []ArgGlob  `json:"args"`
	Intent     string     `json:"intent"`
	Roles      []string   `json:"roles"`
	Message    string     `json:"message"`
	Suggestion string     `json:"suggestion"`
	Tests      []TestCase `json:"tests"`
}

// ArgGlob is a glob on one top-level string argument.
type ArgGlob struct {
	Name string `json:"name"`
	Glob string `json:"glob"`
}

// TestCase is one generated test: a call the rule must catch, or a near
// miss it must not match.
type TestCase struct {
	Kind   string   `json:"kind"` // "catch" or "near_miss"
	Name   string   `json:"name"`
	Call   TestCall `json:"call"`
	Expect string   `json:"expect"`
}

// TestCall is a tool call with its arguments as name/value pairs.
type TestCall struct {
	Tool   string     `json:"tool"`
	Args   []ArgValue `json:"args"`
	Role   string     `json:"role"`
	Intent string     `json:"intent"`
}

// ArgValue is one string argument of a test call.
type ArgValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// compiledSchema compiles the answer schema at first use (not when the
// program starts: most runs of warden never validate an answer).
var compiledSchema = sync.OnceValue(func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(answerSchema))
	if err != nil {
		panic("compile: schema.json: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://warden.invalid/compile/answer.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		panic("compile: schema.json: " + err.Error())
	}
	s, err := c.Compile(url)
	if err != nil {
		panic("compile: schema.json: " + err.Error())
	}
	return s
})

// validateAnswer checks a model's answer against the schema and returns
// the failures, one line each, in terms the model can act on.
func validateAnswer(text string) []string {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return []string{"the answer is not valid JSON: " + err.Error()}
	}
	if err := compiledSchema().Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return []string{err.Error()}
		}
		var out []string
		var walk func(u *jsonschema.OutputUnit)
		walk = func(u *jsonschema.OutputUnit) {
			if len(u.Errors) == 0 {
				if u.Error != nil {
					loc := u.InstanceLocation
					if loc == "" {
						loc = "the top level"
					}
					out = append(out, fmt.Sprintf("at %s: %s", loc, u.Error))
				}
				return
			}
			for i := range u.Errors {
				walk(&u.Errors[i])
			}
		}
		walk(ve.DetailedOutput())
		sort.Strings(out)
		if len(out) > 10 {
			out = append(out[:10], "(more problems not shown)")
		}
		return out
	}
	return nil
}
