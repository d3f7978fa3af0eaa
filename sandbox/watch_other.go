//go:build !linux

package sandbox

// dirWatch: no folder watch on this system (Specs checks each folder's
// stamp).
type dirWatch struct{}

func newDirWatch() *dirWatch                                 { return nil }
func (w *dirWatch) add(string) bool                          { return false }
func (w *dirWatch) remove(string)                            {}
func (w *dirWatch) drain() (dirty map[string]bool, all bool) { return nil, true }
func (w *dirWatch) close()                                   {}
