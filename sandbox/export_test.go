package sandbox

// SetHostSockets replaces the list of host service sockets hidden from
// confined commands (the tests' own stand-ins).
func SetHostSockets(paths []string) { hostSockets = func(int) []string { return paths } }

// DirReads is how many folders the walks of Specs and FromPolicy read.
func DirReads() int64 { return dirReads.Load() }

// DirStats is how many folders' stamps the walks of Specs checked.
func DirStats() int64 { return dirStats.Load() }
