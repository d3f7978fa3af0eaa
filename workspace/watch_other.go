//go:build !linux

package workspace

// watcher is Linux's inotify (watch_linux.go); elsewhere a View stats
// every stamped path on each Refresh.
type watcher struct{}

type watchSet struct{}

func newWatchSet() *watchSet                    { return &watchSet{} }
func (ws *watchSet) empty() bool                { return true }
func theWatcher() *watcher                      { return nil }
func (w *watcher) changed(*watchSet) bool       { return true }
func (w *watcher) watch(*watchSet, string) bool { return false }
func (w *watcher) forget(*watchSet)             {}
