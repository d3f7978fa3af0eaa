package hookd

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The client's side of the wire: a Request as JSON and a Response from
// JSON, written by hand. They read and write exactly what encoding/json
// does with these types (hookd uses encoding/json), without reflection: on
// the path of every hook event, encoding/json's first use of a type costs
// the short-lived client more than the rest of its work.

// encodeRequest is json.Marshal(r), minus HTML escaping (which JSON does
// not need).
func encodeRequest(r *Request) []byte {
	b := make([]byte, 0, 256+len(r.Dir)+len(r.Home)+base64.StdEncoding.EncodedLen(len(r.Stdin)))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(r.V), 10)
	b = append(b, `,"op":`...)
	b = appendString(b, r.Op)
	if len(r.Args) > 0 {
		b = append(b, `,"args":[`...)
		for i, a := range r.Args {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a)
		}
		b = append(b, ']')
	}
	if r.Dir != "" {
		b = append(b, `,"dir":`...)
		b = appendString(b, r.Dir)
	}
	if len(r.Stdin) > 0 {
		b = append(b, `,"stdin":"`...)
		b = base64.StdEncoding.AppendEncode(b, r.Stdin)
		b = append(b, '"')
	}
	if r.Home != "" {
		b = append(b, `,"home":`...)
		b = appendString(b, r.Home)
	}
	if r.Interactive {
		b = append(b, `,"interactive":true`...)
	}
	if r.CallID != "" {
		b = append(b, `,"call_id":`...)
		b = appendString(b, r.CallID)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD,
// as with encoding/json.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

var errAnswer = errors.New("hookd's answer is not JSON")

// decodeResponse reads what hookd writes: json.Marshal of a Response, an
// object whose values are integers and strings (stdout and stderr in
// base64). Anything else is an error. A key it does not know is
// skipped when its value is a string or a number.
func decodeResponse(data []byte) (Response, error) {
	var resp Response
	d := decoder{data: data}
	d.space()
	if !d.eat('{') {
		return resp, errAnswer
	}
	d.space()
	if d.eat('}') {
		return resp, d.end()
	}
	for {
		d.space()
		key, ok := d.str()
		if !ok {
			return resp, errAnswer
		}
		d.space()
		if !d.eat(':') {
			return resp, errAnswer
		}
		d.space()
		var err error
		switch field(key) {
		case "v":
			resp.V, err = d.int()
		case "code":
			resp.Code, err = d.int()
		case "pid":
			resp.PID, err = d.int()
		case "stdout":
			resp.Stdout, err = d.bytes()
		case "stderr":
			resp.Stderr, err = d.bytes()
		case "refused":
			s, ok := d.str()
			if !ok {
				err = errAnswer
			}
			resp.Refused = s
		default:
			if d.i < len(d.data) && d.data[d.i] == '"' {
				if _, ok := d.str(); !ok {
					err = errAnswer
				}
			} else {
				_, err = d.int()
			}
		}
		if err != nil {
			return resp, err
		}
		d.space()
		if d.eat('}') {
			return resp, d.end()
		}
		if !d.eat(',') {
			return resp, errAnswer
		}
	}
}

// field is the Response field a key names: like encoding/json, it matches
// keys without regard to case.
func field(key string) string {
	for _, f := range [...]string{"v", "code", "pid", "stdout", "stderr", "refused"} {
		if strings.EqualFold(key, f) {
			return f
		}
	}
	return ""
}

type decoder struct {
	data []byte
	i    int
}

func (d *decoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) eat(c byte) bool {
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) end() error {
	d.space()
	if d.i != len(d.data) {
		return errAnswer
	}
	return nil
}

// int reads an integer (a JSON number without fraction or exponent).
func (d *decoder) int() (int, error) {
	start := d.i
	if d.i < len(d.data) && d.data[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
		d.i++
	}
	if d.i-digits > 1 && d.data[digits] == '0' {
		return 0, errAnswer // JSON has no leading zeros
	}
	n, err := strconv.Atoi(string(d.data[start:d.i]))
	if err != nil {
		return 0, errAnswer
	}
	return n, nil
}

// bytes reads a base64 string, or null, as encoding/json reads []byte.
func (d *decoder) bytes() ([]byte, error) {
	if d.i+4 <= len(d.data) && string(d.data[d.i:d.i+4]) == "null" {
		d.i += 4
		return nil, nil
	}
	s, ok := d.str()
	if !ok {
		return nil, errAnswer
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errAnswer
	}
	return b, nil
}

// str reads a JSON string.
func (d *decoder) str() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.data) {
		switch c := d.data[d.i]; {
		case c == '"':
			s := string(d.data[start:d.i])
			d.i++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		default:
			d.i++
		}
	}
	return "", false
}

// escaped reads the rest of a string that has escapes, from start.
func (d *decoder) escaped(start int) (string, bool) {
	out := append([]byte(nil), d.data[start:d.i]...)
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		d.i++
		if d.i >= len(d.data) {
			return "", false
		}
		e := d.data[d.i]
		d.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if r >= 0xD800 && r < 0xDC00 {
				// A surrogate pair, if the low half follows.
				save := d.i
				if d.i+2 <= len(d.data) && d.data[d.i] == '\\' && d.data[d.i+1] == 'u' {
					d.i += 2
					if lo, ok := d.hex4(); ok && lo >= 0xDC00 && lo < 0xE000 {
						out = utf8.AppendRune(out, (r-0xD800)<<10|(lo-0xDC00)+0x10000)
						continue
					}
				}
				d.i = save
				r = utf8.RuneError
			} else if r >= 0xDC00 && r < 0xE000 {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *decoder) hex4() (rune, bool) {
	if d.i+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.i : d.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}
