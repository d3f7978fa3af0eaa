package report

import "io"

// Filter is the streaming phase of parsing: an io.Writer that receives a
// model's response in chunks of any size and writes to the underlying writer
// only the content of the response's first FINAL block, as it arrives. Every
// tag, every META block and all text outside FINAL is dropped, even when a tag
// or a block is split across chunks. Its memory is bounded by one tag of
// look-ahead (256 bytes), whatever the length of the stream, and Write does
// not allocate.
//
// What a Filter writes equals the Content of the FINAL block that [Extract]
// finds in the same bytes. Call Close after the last chunk: a partial tag held
// back at the end of FINAL content is text after all and is written then.
//
// A Filter is not safe for concurrent use. It never retains the slices it is
// given, nor does it retain the slices it passes to the underlying writer.
type Filter struct {
	w      io.Writer
	mach   machine
	mute   bool
	err    error
	closed bool
}

// NewFilter returns a filter for one response that writes FINAL content to w.
// To filter a turn of a session, use [Session.NewFilter], which also mutes
// FINAL content once the session's final report is locked.
func NewFilter(w io.Writer, t Tags) *Filter {
	return &Filter{w: w, mach: newMachine(t)}
}

// Write filters the next chunk. It returns len(p) unless the underlying
// writer failed; the first such error is returned by every later call.
func (f *Filter) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.closed {
		return 0, errFilterClosed
	}
	f.mach.feed(p, f)
	if f.err != nil {
		return 0, f.err
	}
	return len(p), nil
}

// Close ends the response: it writes a partial tag held back inside FINAL
// content. It does not close the underlying writer. It returns the first
// error of the underlying writer.
func (f *Filter) Close() error {
	if f.closed {
		return f.err
	}
	f.closed = true
	if f.err == nil {
		f.mach.end(f)
	}
	return f.err
}

var errFilterClosed = &filterError{"report: write to a closed filter"}

type filterError struct{ s string }

func (e *filterError) Error() string { return e.s }

func (f *Filter) text(fr *frame, b []byte) {
	if f.err != nil || f.mute || fr == nil || fr.kind != kindFinal || !fr.first {
		return
	}
	if _, err := f.w.Write(b); err != nil {
		f.err = err
	}
}

func (f *Filter) open(*frame, []byte, int64) {}
func (f *Filter) close(*frame, bool)         {}

// Interface guards.
var (
	_ io.WriteCloser = (*Filter)(nil)
	_ handler        = (*Filter)(nil)
)
