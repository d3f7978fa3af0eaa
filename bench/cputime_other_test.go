//go:build !linux

package bench_test

// threadCPU is not measured on this system.
func threadCPU() int64 { return 0 }
