package bench_test

import "syscall"

// threadCPU returns the CPU time the calling thread has used, in
// nanoseconds (getrusage RUSAGE_THREAD): unlike the wall time of ns/op,
// it leaves out the time other processes of a shared machine take the
// core away.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
