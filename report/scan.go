package report

import "bytes"

// kind is the kind of a block.
type kind uint8

const (
	kindFinal kind = iota + 1
	kindMeta
)

// The four tag names a matcher looks for, as indexes into matcher.names.
const (
	nameOpenFinal = iota
	nameCloseFinal
	nameOpenMeta
	nameCloseMeta
	numNames
)

// frame is one open block.
type frame struct {
	kind  kind
	first bool  // FINAL only: the first FINAL block of the response
	id    int32 // handler's index for the block
}

// handler receives what a machine finds. Slices passed to it are valid only
// during the call.
type handler interface {
	// text is content of the innermost open block f, or of no block when f
	// is nil.
	text(f *frame, b []byte)
	// open reports a block just opened; for META, attrs is the raw
	// attribute text of its tag. off is the offset of the tag.
	open(f *frame, attrs []byte, off int64)
	// close reports a block closed by its tag (closed) or left open.
	close(f *frame, closed bool)
}

// matcher recognizes tags, one byte at a time, across chunk boundaries.
type matcher struct {
	names [numNames][]byte
	base  []byte // prefix-nonce-

	// The candidate tag: n bytes so far, the names it can still be (a bit
	// set), the matched name once its name is complete, and whether it is
	// now in its attributes.
	n     int
	alive uint8
	name  int8
	attrs bool
	start int64 // stream offset of the candidate's '<'

	pend [maxTagLen]byte // candidate bytes carried over from earlier chunks
	np   int
}

type stepResult uint8

const (
	stepMore stepResult = iota // byte taken, tag not complete
	stepDone                   // byte taken, tag complete
	stepFail                   // byte not taken: the candidate is text
)

func newMatcher(t Tags) matcher {
	b := t.base()
	var m matcher
	m.base = []byte(b)
	m.names[nameOpenFinal] = []byte("<" + b + "FINAL")
	m.names[nameCloseFinal] = []byte("</" + b + "FINAL")
	m.names[nameOpenMeta] = []byte("<" + b + "META")
	m.names[nameCloseMeta] = []byte("</" + b + "META")
	return m
}

// begin starts a candidate at a '<'.
func (m *matcher) begin(off int64) {
	m.n, m.alive, m.name, m.attrs, m.start, m.np = 1, 1<<numNames-1, -1, false, off, 0
}

func (m *matcher) reset() { m.n, m.np = 0, 0 }

// step feeds the next byte of the candidate.
func (m *matcher) step(c byte) stepResult {
	if m.name < 0 {
		i := m.n
		for k := 0; k < numNames; k++ {
			if m.alive&(1<<k) == 0 {
				continue
			}
			nm := m.names[k]
			switch {
			case i < len(nm) && nm[i] == c:
			case i == len(nm):
				// The name is complete; the tag name must end here.
				m.name = int8(k)
			default:
				m.alive &^= 1 << k
			}
		}
		if m.name < 0 {
			if m.alive == 0 {
				return stepFail
			}
			m.n++
			return stepMore
		}
	}
	// After a complete name: '>' ends the tag, whitespace starts attributes.
	switch {
	case c == '>':
		m.n++
		return stepDone
	case c == '<' || m.n+1 >= maxTagLen:
		return stepFail
	case m.attrs || isSpace(c):
		m.attrs = true
		m.n++
		return stepMore
	}
	return stepFail
}

// machine turns a stream of bytes into text and block events. It keeps at
// most one tag of look-ahead.
type machine struct {
	m      matcher
	stack  [3]frame
	depth  int
	sawFin bool  // a FINAL block was opened in this response
	off    int64 // stream offset of the next byte
	nextID int32
}

func newMachine(t Tags) machine { return machine{m: newMatcher(t)} }

func (x *machine) top() *frame {
	if x.depth == 0 {
		return nil
	}
	return &x.stack[x.depth-1]
}

// feed processes the next chunk.
func (x *machine) feed(p []byte, h handler) {
	base := x.off
	x.off += int64(len(p))
	i := 0
	if x.m.n > 0 {
		// Continue the candidate the previous chunk ended in.
		for i < len(p) {
			switch x.m.step(p[i]) {
			case stepMore:
				x.m.pend[x.m.np] = p[i]
				x.m.np++
				i++
				continue
			case stepDone:
				x.m.pend[x.m.np] = p[i]
				x.m.np++
				i++
				raw := x.m.pend[:x.m.np]
				x.m.reset()
				x.tag(raw, h)
			case stepFail:
				raw := x.m.pend[:x.m.np]
				x.m.reset()
				h.text(x.top(), raw)
			}
			break
		}
		if x.m.n > 0 {
			return
		}
	}
	start := i // start of the text run not yet handed to h
	for i < len(p) {
		k := bytes.IndexByte(p[i:], '<')
		if k < 0 {
			break
		}
		lt := i + k
		n, name, r := x.m.matchAt(p[lt:])
		if r == stepMore {
			// The chunk may end inside a tag: let the incremental matcher
			// decide, and keep what it holds for the next chunk.
			x.m.begin(base + int64(lt))
			n = 1
			for r = stepMore; r == stepMore && lt+n < len(p); n++ {
				r = x.m.step(p[lt+n])
			}
			if r == stepMore {
				if lt > start {
					h.text(x.top(), p[start:lt])
				}
				x.m.np = copy(x.m.pend[:], p[lt:])
				return
			}
			name = x.m.name
			x.m.reset()
		}
		if r == stepFail {
			// Not a tag: the '<' is text, and a tag can only start at a
			// later '<'.
			i = lt + 1
			continue
		}
		if lt > start {
			h.text(x.top(), p[start:lt])
		}
		x.m.name, x.m.start = name, base+int64(lt)
		x.tag(p[lt:lt+n], h)
		start, i = lt+n, lt+n
	}
	if start < len(p) {
		h.text(x.top(), p[start:])
	}
}

// matchAt matches a tag at the start of q, which begins with '<', within
// one chunk. It returns the tag's length and name when it is complete, fail
// when q cannot start a tag, and more when q ends too early to tell (or
// reaches the length limit; the incremental matcher then decides).
func (m *matcher) matchAt(q []byte) (int, int8, stepResult) {
	i := 1
	closing := false
	if i < len(q) && q[i] == '/' {
		closing = true
		i++
	}
	b := m.base
	k := min(len(b), len(q)-i)
	if string(q[i:i+k]) != string(b[:k]) {
		return 0, -1, stepFail
	}
	if k < len(b) {
		return 0, -1, stepMore
	}
	i += len(b)
	if i >= len(q) {
		return 0, -1, stepMore
	}
	var word string
	var name int8
	switch q[i] {
	case 'F':
		word, name = "FINAL", nameOpenFinal
	case 'M':
		word, name = "META", nameOpenMeta
	default:
		return 0, -1, stepFail
	}
	if closing {
		name++ // nameCloseFinal, nameCloseMeta
	}
	k = min(len(word), len(q)-i)
	if string(q[i:i+k]) != word[:k] {
		return 0, -1, stepFail
	}
	if k < len(word) {
		return 0, -1, stepMore
	}
	i += len(word)
	if i >= len(q) {
		return 0, -1, stepMore
	}
	switch c := q[i]; {
	case c == '>':
		return i + 1, name, stepDone
	case !isSpace(c):
		return 0, -1, stepFail
	}
	lim := min(len(q), maxTagLen-1)
	for j := i + 1; j < lim; j++ {
		switch q[j] {
		case '>':
			return j + 1, name, stepDone
		case '<':
			return 0, -1, stepFail
		}
	}
	return 0, -1, stepMore
}

// end finishes the response: a pending candidate is text, open blocks are
// truncated.
func (x *machine) end(h handler) {
	if x.m.n > 0 {
		raw := x.m.pend[:x.m.np]
		x.m.reset()
		h.text(x.top(), raw)
	}
	for x.depth > 0 {
		x.depth--
		h.close(&x.stack[x.depth], false)
	}
}

// tag applies a complete tag to the block stack. raw is the whole tag.
func (x *machine) tag(raw []byte, h handler) {
	switch x.m.name {
	case nameOpenFinal:
		if x.find(kindFinal) >= 0 {
			return // FINAL inside FINAL: dropped
		}
		x.push(frame{kind: kindFinal, first: !x.sawFin}, nil, h)
		x.sawFin = true
	case nameOpenMeta:
		if t := x.top(); t != nil && t.kind == kindMeta {
			x.depth--
			h.close(&x.stack[x.depth], false)
		}
		x.push(frame{kind: kindMeta}, raw[len(x.m.names[nameOpenMeta]):len(raw)-1], h)
	case nameCloseFinal:
		x.pop(kindFinal, h)
	case nameCloseMeta:
		x.pop(kindMeta, h)
	}
}

func (x *machine) push(f frame, attrs []byte, h handler) {
	// The rules keep the stack at most META, FINAL, META deep.
	f.id = x.nextID
	x.nextID++
	x.stack[x.depth] = f
	x.depth++
	h.open(&x.stack[x.depth-1], attrs, x.m.start)
}

func (x *machine) find(k kind) int {
	for i := x.depth - 1; i >= 0; i-- {
		if x.stack[i].kind == k {
			return i
		}
	}
	return -1
}

func (x *machine) pop(k kind, h handler) {
	i := x.find(k)
	if i < 0 {
		return // nothing of this kind is open: dropped
	}
	for x.depth > i+1 {
		x.depth--
		h.close(&x.stack[x.depth], false)
	}
	x.depth--
	h.close(&x.stack[x.depth], true)
}

// pluginAttr returns the value of the plugin attribute in a tag's raw
// attribute text, and whether it is there.
func pluginAttr(attrs []byte) (string, bool) {
	i := 0
	for i < len(attrs) {
		for i < len(attrs) && isSpace(attrs[i]) {
			i++
		}
		ns := i
		for i < len(attrs) && !isSpace(attrs[i]) && attrs[i] != '=' {
			i++
		}
		name := attrs[ns:i]
		for i < len(attrs) && isSpace(attrs[i]) {
			i++
		}
		var val []byte
		if i < len(attrs) && attrs[i] == '=' {
			i++
			for i < len(attrs) && isSpace(attrs[i]) {
				i++
			}
			if i < len(attrs) && (attrs[i] == '"' || attrs[i] == '\'') {
				q := attrs[i]
				i++
				vs := i
				for i < len(attrs) && attrs[i] != q {
					i++
				}
				val = attrs[vs:i]
				if i < len(attrs) {
					i++
				}
			} else {
				vs := i
				for i < len(attrs) && !isSpace(attrs[i]) {
					i++
				}
				val = attrs[vs:i]
			}
		}
		if string(name) == "plugin" {
			return string(bytes.TrimSpace(val)), true
		}
		if len(name) == 0 && i < len(attrs) {
			i++ // a stray '=': skip it
		}
	}
	return "", false
}
