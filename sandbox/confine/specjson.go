package confine

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeSpec decodes a spec file's bytes as encoding/json does. The
// runner decodes one spec per confined command, and encoding/json's first
// decode of a type (building its decoder by reflection) costs some 150
// microseconds of a runner's start: decodeSpecFast reads what Encode
// writes without it, and whatever it does not read exactly (an escape in
// a string, an unknown key, a null where no list goes) goes to
// encoding/json. FuzzDecodeSpec holds the two to the same result.
func decodeSpec(data []byte, s *Spec) error {
	if f, ok := decodeSpecFast(data); ok {
		*s = f
		return nil
	}
	return json.Unmarshal(data, s)
}

// decodeSpecFast decodes data when it is a JSON object of the Spec's
// keys, written as json.Marshal writes them: strings without escapes,
// lists of such strings or null, booleans, lists of small unsigned
// integers. ok is false for anything else.
func decodeSpecFast(data []byte) (s Spec, ok bool) {
	d := specDecoder{b: data}
	if !d.byte('{') {
		return s, false
	}
	if d.byte('}') {
		return s, d.end()
	}
	for {
		key, ok := d.str()
		if !ok || !d.byte(':') {
			return s, false
		}
		switch key {
		case "root":
			s.Root, ok = d.str()
		case "writable":
			s.Writable, ok = d.strs()
		case "read_only":
			s.ReadOnly, ok = d.strs()
		case "hidden":
			s.Hidden, ok = d.strs()
		case "placeholders":
			s.Placeholders, ok = d.strs()
		case "network_deny":
			s.NetworkDeny, ok = d.boolean()
		case "ports":
			s.Ports, ok = d.ints()
		case "required":
			s.Required, ok = d.boolean()
		case "unset_env":
			s.UnsetEnv, ok = d.strs()
		case "test_disable":
			s.TestDisable, ok = d.str()
		case "policy_file":
			s.PolicyFile, ok = d.str()
		case "policy_sha256":
			s.PolicyDigest, ok = d.str()
		default:
			return s, false
		}
		if !ok {
			return s, false
		}
		if d.byte('}') {
			return s, d.end()
		}
		if !d.byte(',') {
			return s, false
		}
	}
}

type specDecoder struct {
	b []byte
	i int
}

func (d *specDecoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

// byte consumes c (after white space) when it comes next.
func (d *specDecoder) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *specDecoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

func (d *specDecoder) lit(w string) bool {
	d.space()
	if len(d.b)-d.i >= len(w) && string(d.b[d.i:d.i+len(w)]) == w {
		d.i += len(w)
		return true
	}
	return false
}

// str reads a string without escapes or control characters, in valid
// UTF-8 (what encoding/json decodes to the same bytes).
func (d *specDecoder) str() (string, bool) {
	if !d.byte('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			v := d.b[start:d.i]
			d.i++
			if !utf8.Valid(v) {
				return "", false
			}
			return string(v), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

// list reads a list of elements each read by elem, or null (a nil list).
func list[T any](d *specDecoder, elem func() (T, bool)) ([]T, bool) {
	if d.lit("null") {
		return nil, true
	}
	if !d.byte('[') {
		return nil, false
	}
	out := []T{}
	if d.byte(']') {
		return out, true
	}
	for {
		v, ok := elem()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if d.byte(']') {
			return out, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

// strs reads a list of strings, or null (a nil list).
func (d *specDecoder) strs() ([]string, bool) { return list(d, d.str) }

func (d *specDecoder) boolean() (bool, bool) {
	if d.lit("true") {
		return true, true
	}
	if d.lit("false") {
		return false, true
	}
	return false, false
}

// ints reads a list of unsigned integers of at most 9 digits without
// leading zeros, or null.
func (d *specDecoder) ints() ([]int, bool) { return list(d, d.uint) }

// uint reads an unsigned integer of at most 9 digits without leading
// zeros.
func (d *specDecoder) uint() (int, bool) {
	d.space()
	start, n := d.i, 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		n = n*10 + int(d.b[d.i]-'0')
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > 9 || digits > 1 && d.b[start] == '0' {
		return 0, false
	}
	// A number goes on to a fraction or an exponent: not ours.
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false
	}
	return n, true
}
