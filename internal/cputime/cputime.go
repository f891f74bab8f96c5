// Package cputime measures the CPU time of the calling thread, for
// benchmarks on shared machines: wall time there includes the time other
// processes ran instead of the benchmark, thread CPU time does not.
package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread returns the CPU time the calling OS thread has used so far, or 0
// where the clock is not available. Lock the goroutine to its thread
// (runtime.LockOSThread) around the measured code.
func Thread() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
