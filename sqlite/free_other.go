//go:build !unix

package sqlite

// freeBytes cannot tell on this system.
func freeBytes(string) int64 { return -1 }
