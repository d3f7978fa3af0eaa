package onereading

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/warden-run/warden/internal/fold"
)

// readingByTokens is Check written plainly on encoding/json's tokens:
// the reference the fuzz test holds the byte scanner to.
func readingByTokens(data []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var open []map[string]bool // nil for an array
	expectKey := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				open = append(open, map[string]bool{})
				expectKey = true
				continue
			case '[':
				open = append(open, nil)
			case '}', ']':
				open = open[:len(open)-1]
			}
		case string:
			if expectKey {
				f := fold.Key(t)
				if open[len(open)-1][f] {
					return false, nil
				}
				open[len(open)-1][f] = true
				expectKey = false
				continue
			}
		}
		expectKey = len(open) > 0 && open[len(open)-1] != nil
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"name":"read_text_file","arguments":{"path":"docs/a.txt"}}`, true},
		{`{"name":"write_file","Name":"read_text_file"}`, false},
		{`{"name":"a","name":"b"}`, false},
		{`{"na\u006de":"a","name":"b"}`, false},
		{`{"\u004eame":"a","name":"b"}`, false},
		{`{"arguments":{},"argument\u017f":{}}`, false},
		{`{"k":1,"\u212a":2}`, false},
		{`{"a":{"path":"x"},"b":{"path":"y"},"c":[{"path":1},{"path":2}]}`, true},
		{`{"a":"{\"a\":1,\"a\":2}","b":"x\\","c":"\"name\""}`, true},
		{`{"o":{"a":1,"b":{"c":[1,{"d":1,"D":2}]}}}`, false},
		{`[{"a":1},{"a":1}]`, true},
		{`{"a":[1,2],"A":3}`, false},
		{`{"":1,"":2}`, false},
		{`{"ß":1,"SS":2}`, true}, // full case folding, which simple folding does not do
	} {
		err := Check([]byte(c.in))
		if (err == nil) != c.ok {
			t.Errorf("Check(%s) = %v, want ok=%v", c.in, err, c.ok)
		}
		if ref, rerr := readingByTokens([]byte(c.in)); rerr != nil || ref != c.ok {
			t.Errorf("reference(%s) = %v %v, want %v", c.in, ref, rerr, c.ok)
		}
	}
	// Many keys: the check stays linear (and still finds the duplicate).
	var b bytes.Buffer
	b.WriteString("{")
	for i := range 5000 {
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)) + `":1,`)
	}
	b.WriteString(`"KAAA":2}`)
	if err := Check(b.Bytes()); err == nil {
		t.Error("a duplicate after 5000 keys was not found")
	}
}

// FuzzCheck: on valid JSON, the byte scanner agrees with the reading
// by encoding/json's tokens.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `{"a":{"b":[{"c":1}]},"d":"\"e\""}`, `{"na\u006de":1}`, `[]`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			Check(data) // must not panic
			return
		}
		ref, err := readingByTokens(data)
		if err != nil {
			t.Skip()
		}
		if got := Check(data) == nil; got != ref {
			t.Errorf("Check(%q) ok=%v, reference ok=%v", data, got, ref)
		}
	})
}
