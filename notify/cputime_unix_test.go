//go:build unix

package notify_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used, so
// benchmarks can report the store's CPU per operation, which a busy machine
// distorts less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
