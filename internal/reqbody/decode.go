package reqbody

import (
	"bytes"
	"encoding/json"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/wire"
)

// decideBody is a /v1/decide body decoded in one pass: the call in place
// of its JSON.
type decideBody struct {
	Call        *warden.ToolCall `json:"call"`
	Wait        string           `json:"wait"`
	HostPrompts bool             `json:"host_prompts"`
	CallID      string           `json:"call_id"`
}

// The names of a body and of its call, as their types' tags spell them.
var (
	decideNames = []string{"call", "wait", "host_prompts", "call_id"}
	callNames   = warden.ToolCallFields()
)

// DecodeDecide decodes the body of POST /v1/decide in one pass: the
// request's fields and its call, as Decide (Strict, then Call, which is
// warden.ParseToolCall) takes them, decoding the call three times.
// It takes only a body whose names, the body's and its call's, are each
// one of the names above as spelled there (no escape in them), once; and
// whose call passes ParseToolCall's checks. With the names so, encoding/json
// decodes the call as ParseToolCall does, where a name in another case or
// twice would be decoded otherwise. ok is false for any other body, and
// the caller then decodes it the slow way, which takes or refuses it in
// its own words: the answer never depends on which way it went
// (FuzzDecodeDecide).
func DecodeDecide(data []byte) (req wire.DecideRequest, call warden.ToolCall, ok bool) {
	if !exactNames(data) {
		return req, call, false
	}
	var b decideBody
	if json.Unmarshal(data, &b) != nil {
		return req, call, false
	}
	c := b.Call
	// args must be there and an object ({} for none): a null leaves the
	// map nil, as does no args at all.
	if c == nil || c.Tool == "" || c.Args == nil || c.Depth < 0 {
		return req, call, false
	}
	return wire.DecideRequest{Wait: b.Wait, HostPrompts: b.HostPrompts, CallID: b.CallID}, *c, true
}

// exactNames reports whether data is an object whose names are each one
// of decideNames, at most once, and whose "call", when an object, has
// names each one of callNames, at most once; deeper names are not looked
// at. It reads the JSON's structure only, trusting the decoding after it
// to refuse what is not JSON.
func exactNames(data []byte) bool {
	s := scan{data: data}
	return s.object(decideNames, true)
}

// scan walks JSON text: i is the next byte.
type scan struct {
	data []byte
	i    int
}

func (s *scan) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next is the next byte after white space (0 at the end).
func (s *scan) next() byte {
	s.space()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// object reads an object whose names must be among names, each at most
// once; top says it is the body, whose "call" is read as an object of
// callNames.
func (s *scan) object(names []string, top bool) bool {
	if s.next() != '{' {
		return false
	}
	s.i++
	var seen uint16
	if s.next() == '}' {
		s.i++
		return true
	}
	for {
		name, ok := s.name()
		if !ok {
			return false
		}
		k := -1
		for j, n := range names {
			if string(name) == n {
				k = j
			}
		}
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		if s.next() != ':' {
			return false
		}
		s.i++
		if top && names[k] == "call" && s.next() == '{' {
			if !s.object(callNames, false) {
				return false
			}
		} else if !s.value() {
			return false
		}
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// name reads a string with no escape in it and returns its bytes.
func (s *scan) name() ([]byte, bool) {
	if s.next() != '"' {
		return nil, false
	}
	rest := s.data[s.i+1:]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return nil, false
	}
	s.i += end + 2
	return rest[:end], true
}

// value skips one value: a string, an object or array (with what is in
// it), or a literal or number (up to the next delimiter).
func (s *scan) value() bool {
	switch s.next() {
	case 0:
		return false
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case '"':
				if !s.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default:
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return true
			}
			s.i++
		}
		return true
	}
}

// str skips a string, its escapes included.
func (s *scan) str() bool {
	for s.i++; s.i < len(s.data); s.i++ {
		switch s.data[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return true
		}
	}
	return false
}
