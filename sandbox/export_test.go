package sandbox

// SetHostSockets replaces the list of host service sockets hidden from
// confined commands (the tests' own stand-ins).
func SetHostSockets(paths []string) { hostSockets = func(int) []string { return paths } }
