// Package clock reads CLOCK_MONOTONIC cheaply, for event timestamps.
//
// Go's own monotonic clock (runtime.nanotime) calls the vDSO on the
// system stack: about 35 ns on a virtual machine whose time stamp counter
// reads in 13. A tracepoint that records at tens of nanoseconds cannot
// afford that, so where the kernel itself keeps time with the TSC (its
// clocksource is "tsc", which it picks only when the counter is invariant
// and synchronised across CPUs) Now scales the counter to nanoseconds,
// re-anchored on CLOCK_MONOTONIC every 50 ms. Elsewhere, and until the
// first calibration, Now is runtime.nanotime.
package clock
