package report

import (
	"bytes"
	"strings"
	"unicode"
)

// A block whose opening tag a Markdown reader shows as code or hides is not
// sent: a model that shows the format before it starts work ("write your
// answer like this: ```<FINAL>...```"), or comments a block out, has not
// reported. These are the places (Block.Quoted):
const (
	quotedFence    = "inside a code fence"
	quotedIndented = "in an indented code block"
	quotedComment  = "inside an HTML comment"
)

// span is a range of a response, [start, end), and why it is quoted.
type span struct {
	start, end int
	why        string
}

// quotedSpans finds the code and comments of a response as CommonMark
// reads them, in order: fenced code blocks (``` or ~~~, three or more,
// indented by at most three spaces, closed by a fence of the same
// character at least as long, or open to the end), indented code blocks
// (lines indented by four spaces or a tab, which cannot interrupt a
// paragraph: the line before is blank or code too), and HTML comments
// (<!-- to -->, or to the end) outside code.
func quotedSpans(src []byte) []span {
	var out []span
	var fenceChar byte
	fenceLen, fenceStart := 0, 0
	prevBlank, prevCode := true, false
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		next := len(src)
		if end >= 0 {
			next = off + end + 1
		}
		line := src[off:next]
		body := bytes.TrimRight(line, "\r\n")
		ind, rest := indentOf(body)
		blank := len(bytes.TrimSpace(body)) == 0
		if fenceChar != 0 {
			if ind < 4 {
				if n := fenceRun(rest, fenceChar); n >= fenceLen && len(bytes.TrimSpace(rest[n:])) == 0 {
					out = append(out, span{fenceStart, next, quotedFence})
					fenceChar = 0
				}
			}
			off, prevBlank, prevCode = next, blank, false
			continue
		}
		if ind < 4 && len(rest) >= 3 && (rest[0] == '`' || rest[0] == '~') {
			if n := fenceRun(rest, rest[0]); n >= 3 && (rest[0] == '~' || !bytes.ContainsRune(rest[n:], '`')) {
				fenceChar, fenceLen, fenceStart = rest[0], n, off
				off, prevBlank, prevCode = next, false, false
				continue
			}
		}
		if ind >= 4 && !blank && (prevBlank || prevCode) {
			out = append(out, span{off, next, quotedIndented})
			off, prevBlank, prevCode = next, false, true
			continue
		}
		// Comments on this line (and past it, when one stays open).
		for i := 0; i < len(body); {
			j := bytes.Index(body[i:], []byte("<!--"))
			if j < 0 {
				break
			}
			start := off + i + j
			k := bytes.Index(src[start+4:], []byte("-->"))
			stop := len(src)
			if k >= 0 {
				stop = start + 4 + k + 3
			}
			out = append(out, span{start, stop, quotedComment})
			if stop >= next {
				// The comment ends on a later line: go on after it.
				next = stop
				break
			}
			i = stop - off
		}
		off, prevBlank, prevCode = next, blank, prevCode && blank
	}
	if fenceChar != 0 {
		out = append(out, span{fenceStart, len(src), quotedFence})
	}
	return out
}

// indentOf is the indentation of a line in columns (a tab counts as four)
// and the line after it.
func indentOf(b []byte) (int, []byte) {
	n := 0
	for i, c := range b {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n, b[i:]
		}
	}
	return n, nil
}

// fenceRun is the number of c at the start of b.
func fenceRun(b []byte, c byte) int {
	n := 0
	for n < len(b) && b[n] == c {
		n++
	}
	return n
}

// quotedAt says why the offset off of a response is quoted, or "".
func quotedAt(spans []span, off int) string {
	for _, s := range spans {
		if off >= s.start && off < s.end {
			return s.why
		}
	}
	return ""
}

// invisible reports whether s shows nothing: only white space, control
// and format characters (zero-width spaces and joiners, the byte order
// mark, direction marks) and the blank letters fonts draw as nothing.
func invisible(s string) bool {
	for _, r := range s {
		switch {
		case unicode.IsSpace(r), unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r):
		case r == '\u115F', r == '\u1160', r == '\u3164', r == '\uFFA0', r == '\u2800', r == '\u180E':
		default:
			return false
		}
	}
	return true
}

// placeholders are the stand-ins the instructions and the retry text
// write where the report goes.
var placeholders = []string{"your final report", "your complete final report"}

// placeholder reports whether a report is one of the instructions' own
// stand-ins (any case, any spacing): the instructions echoed back.
func placeholder(s string) bool {
	t := strings.ToLower(strings.Join(strings.Fields(s), " "))
	t = strings.TrimRight(t, ".")
	for _, p := range placeholders {
		if t == p {
			return true
		}
	}
	return false
}
