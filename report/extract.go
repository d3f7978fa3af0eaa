package report

import "bytes"

// Block is one FINAL or META block of a response.
type Block struct {
	// Plugin is the plugin attribute of a META block; "" when it has none
	// (see HasPlugin) and for FINAL.
	Plugin    string
	HasPlugin bool
	// Content is the text between the block's tags, without the tags and
	// without any block nested in it.
	Content string
	// Closed reports whether the closing tag was found. A block without it
	// is truncated.
	Closed bool
	// Offset is the byte offset of the opening tag in the response, and Line
	// its 1-based line.
	Offset int
	Line   int
	// Quoted says where a Markdown reader puts the opening tag when that
	// is code or a comment ("inside a code fence", "in an indented code
	// block", "inside an HTML comment"); "" for a block in the text. A
	// quoted block was shown, not sent: the gate does not take it.
	Quoted string
}

// Response is what the completion phase finds in one complete response.
type Response struct {
	// Final is the first FINAL block, or nil when the response has none.
	Final *Block
	// IgnoredFinals counts later FINAL blocks, which are not the final
	// report.
	IgnoredFinals int
	// Metas holds every META block, in the order their opening tags appear.
	Metas []Block
}

// Extract is the completion phase of parsing: it finds the first FINAL block
// and every META block anywhere in a complete response, in any order and
// position (before, after, inside or around FINAL), and marks blocks whose
// closing tag is missing. Its FINAL content is exactly what a [Filter] writes
// for the same bytes. It is safe for concurrent use.
func Extract(response []byte, t Tags) *Response {
	e := &extractor{resp: &Response{}, src: response}
	m := newMachine(t)
	m.feed(response, e)
	m.end(e)
	r := e.resp
	var spans []span
	if len(e.blocks) > 0 {
		spans = quotedSpans(response)
	}
	for _, b := range e.blocks {
		blk := b.blk
		blk.Content = b.buf.String()
		blk.Line = 1 + bytes.Count(response[:blk.Offset], []byte{'\n'})
		blk.Quoted = quotedAt(spans, blk.Offset)
		switch {
		case b.kind == kindMeta:
			r.Metas = append(r.Metas, blk)
		case b.first:
			r.Final = &blk
		default:
			r.IgnoredFinals++
		}
	}
	return r
}

type extractBlock struct {
	kind  kind
	first bool
	blk   Block
	buf   bytes.Buffer
}

type extractor struct {
	resp   *Response
	src    []byte
	blocks []*extractBlock
}

func (e *extractor) text(f *frame, b []byte) {
	if f != nil {
		e.blocks[f.id].buf.Write(b)
	}
}

func (e *extractor) open(f *frame, attrs []byte, off int64) {
	b := &extractBlock{kind: f.kind, first: f.first}
	b.blk.Offset = int(off)
	if f.kind == kindMeta {
		b.blk.Plugin, b.blk.HasPlugin = pluginAttr(attrs)
	}
	e.blocks = append(e.blocks, b)
}

func (e *extractor) close(f *frame, closed bool) { e.blocks[f.id].blk.Closed = closed }

// Interface guard.
var _ handler = (*extractor)(nil)
