package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// oneReading reports JSON that different readers may read differently:
// an object with the same key twice, or with two keys that differ only in
// case ("name" and "Name"), at any depth. Which of the two a reader keeps
// is up to the reader: Go's encoding/json matches struct fields without
// regard to case and keeps the last, other decoders keep the first or
// match case exactly. The proxy forwards a call's parameters as the client
// sent them, so warden must decide the call the server will run: it
// refuses such parameters rather than guess how the server reads them.
func oneReading(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	// One set of folded keys per open object; nil for an array.
	var open []map[string]string
	// expectKey: the next string token in the innermost object is a key.
	expectKey := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				open = append(open, map[string]string{})
				expectKey = true
				continue
			case '[':
				open = append(open, nil)
			case '}', ']':
				open = open[:len(open)-1]
			}
		case string:
			if expectKey {
				keys := open[len(open)-1]
				f := foldKey(t)
				if prev, ok := keys[f]; ok {
					if prev == t {
						return fmt.Errorf("the key %q appears twice in one object", t)
					}
					return fmt.Errorf("the keys %q and %q differ only in case", prev, t)
				}
				keys[f] = t
				expectKey = false
				continue
			}
		}
		// After a value, the innermost object (if that is what is open)
		// expects a key again.
		expectKey = len(open) > 0 && open[len(open)-1] != nil
	}
}

// foldKey maps s to one spelling per class of strings that are equal under
// Unicode simple case folding (as encoding/json compares field names: "K",
// "k" and the Kelvin sign are one class).
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}
