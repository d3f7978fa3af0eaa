package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaCache holds schemas compiled for Go plugins, keyed by their text, so
// that a new session does not compile them again.
var schemaCache sync.Map // string -> *jsonschema.Schema

// noLoader refuses every external reference: a plugin schema stands alone.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema refers to %s: external references are not supported", url)
}

// compileSchema compiles a plugin's schema.
func compileSchema(name string, raw []byte) (*jsonschema.Schema, error) {
	if s, ok := schemaCache.Load(string(raw)); ok {
		return s.(*jsonschema.Schema), nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, ok := doc.(bool); !ok {
			return nil, errors.New("schema must be a JSON object")
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "https://warden.invalid/plugins/" + name + ".schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema: %s", schemaErrorText(err))
	}
	schemaCache.Store(string(raw), s)
	return s, nil
}

// schemaErrorText flattens a schema compilation error into one line.
func schemaErrorText(err error) string {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) && se.Err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(se.Err, &ve) {
			return "not a valid JSON Schema: " + strings.Join(validationDetails(ve), "; ")
		}
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// maxDetails bounds the schema failures reported for one META block.
const maxDetails = 10

// validationDetails lists the leaf failures of a validation error, one line
// each: "at /path: message".
func validationDetails(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if len(u.Errors) == 0 {
			if u.Error == nil || len(out) > maxDetails {
				return
			}
			loc := u.InstanceLocation
			if loc == "" {
				loc = "the top level"
			}
			out = append(out, "at "+loc+": "+u.Error.String())
			return
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.DetailedOutput())
	if len(out) > maxDetails {
		out = append(out[:maxDetails], "(more failures not shown)")
	}
	return out
}

// checkJSON parses a META block's content and validates it. It returns the
// compact value, or a status and the details of the failure.
func checkJSON(s *jsonschema.Schema, content string) (json.RawMessage, Status, []string) {
	text := stripFence(strings.TrimSpace(content))
	if text == "" {
		return nil, MetaNotJSON, []string{"the block is empty"}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, MetaNotJSON, []string{jsonErrorText(text, err)}
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, MetaSchemaInvalid, validationDetails(ve)
		}
		return nil, MetaSchemaInvalid, []string{err.Error()}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		return nil, MetaNotJSON, []string{jsonErrorText(text, err)}
	}
	return json.RawMessage(b.Bytes()), MetaValid, nil
}

// stripFence removes one markdown code fence around the JSON, which models
// add even when told not to.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return s
	}
	return strings.TrimSpace(s[nl+1 : len(s)-3])
}

// jsonErrorText describes a JSON syntax error with its line and column.
func jsonErrorText(text string, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(text, int(se.Offset)-1)
		return fmt.Sprintf("%s (line %d, column %d of the block)", se.Error(), line, col)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends before it is complete"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Error()
	}
	return err.Error()
}

// lineCol returns the 1-based line and column of the byte at index off.
func lineCol(s string, off int) (int, int) {
	off = max(0, min(off, len(s)))
	line := 1 + strings.Count(s[:off], "\n")
	col := off - strings.LastIndexByte(s[:off], '\n')
	return line, col
}
