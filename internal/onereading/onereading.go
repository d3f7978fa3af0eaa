// Package onereading finds JSON that different readers may read
// differently (a key twice in one object, or two keys that differ only in
// case), for a front end that forwards JSON as it came.
package onereading

import (
	"encoding/json"
	"fmt"

	"github.com/warden-run/warden/internal/fold"
)

// Check reports JSON that different readers may read differently:
// an object with the same key twice, or with two keys that differ only in
// case ("name" and "Name"), at any depth. Which of the two a reader keeps
// is up to the reader: Go's encoding/json matches struct fields without
// regard to case and keeps the last, other decoders keep the first or
// match case exactly. warden's MCP proxy forwards a call's parameters as
// the client sent them, so warden must decide the call the server will
// run: it refuses such parameters rather than guess how the server reads
// them.
//
// It scans the bytes once and decodes only keys; it does not validate the
// JSON otherwise (the decoding that follows does). It runs on every call,
// so it allocates little: a key without escapes is compared in place.
func Check(data []byte) error {
	type frame struct {
		obj  bool
		keys [][2]string // folded, as written
		set  map[string]string
	}
	var stack []frame
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, frame{obj: true})
			expectKey = true
		case '[':
			stack = append(stack, frame{})
			expectKey = false
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].obj
		case ':':
			expectKey = false
		case '"':
			end, escaped := stringEnd(data, i)
			if end < 0 {
				return fmt.Errorf("a string is not closed")
			}
			if expectKey && len(stack) > 0 && stack[len(stack)-1].obj {
				key := string(data[i+1 : end])
				if escaped {
					if err := json.Unmarshal(data[i:end+1], &key); err != nil {
						return fmt.Errorf("the key %s cannot be read: %v", data[i:end+1], err)
					}
				}
				f := &stack[len(stack)-1]
				folded := fold.Key(key)
				prev, dup := "", false
				if f.set != nil {
					prev, dup = f.set[folded]
				} else {
					for _, k := range f.keys {
						if k[0] == folded {
							prev, dup = k[1], true
							break
						}
					}
				}
				if dup {
					if prev == key {
						return fmt.Errorf("the key %q appears twice in one object", key)
					}
					return fmt.Errorf("the keys %q and %q differ only in case", prev, key)
				}
				// Past a few keys, a map keeps the check linear.
				if f.set == nil && len(f.keys) >= 16 {
					f.set = make(map[string]string, 2*len(f.keys))
					for _, k := range f.keys {
						f.set[k[0]] = k[1]
					}
				}
				if f.set != nil {
					f.set[folded] = key
				} else {
					f.keys = append(f.keys, [2]string{folded, key})
				}
			}
			expectKey = false
			i = end
		}
	}
	return nil
}

// stringEnd returns the index of the quote that closes the string opening
// at data[start] (-1 if none), and whether the string has escapes.
func stringEnd(data []byte, start int) (int, bool) {
	escaped := false
	for j := start + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return -1, escaped
}
