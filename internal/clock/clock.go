package clock

import (
	"math/bits"
	"sync"
	"sync/atomic"
	_ "unsafe" // go:linkname
)

// anchor maps counter readings to CLOCK_MONOTONIC: ns + (tsc-t0)*mult/2^32
// for readings less than span ticks after t0.
type anchor struct {
	t0   uint64
	ns   int64
	mult uint64 // nanoseconds per tick, times 2^32
	span uint64
}

func (a *anchor) at(t uint64) int64 {
	hi, lo := bits.Mul64(t-a.t0, a.mult)
	return a.ns + int64(hi<<32|lo>>32)
}

const (
	anchorSpan = 50_000_000 // ns between calibrations
	// minCalibration is the shortest interval a rate is measured over.
	minCalibration = 1_000_000 // ns
	// maxSlew is the largest error an anchor corrects by slewing over
	// its span; a larger one (a suspended machine, a migrated VM) steps.
	maxSlew = 1_000_000 // ns
)

var (
	current  atomic.Pointer[anchor] // nil: not calibrated (yet)
	disabled atomic.Bool            // the counter is not usable: nanotime

	mu      sync.Mutex // calibration
	checked bool       // tscUsable was asked
	lastTSC uint64     // the last calibration sample
	lastNs  int64
)

// Now returns CLOCK_MONOTONIC in nanoseconds, within a few microseconds
// of runtime.nanotime, and never going back unless the counter does.
func Now() int64 {
	if a := current.Load(); a != nil {
		t := rdtsc()
		if d := t - a.t0; d < a.span {
			hi, lo := bits.Mul64(d, a.mult)
			return a.ns + int64(hi<<32|lo>>32)
		}
		return calibrate(a, t)
	}
	if disabled.Load() {
		return nanotime()
	}
	return calibrate(nil, 0)
}

// calibrate is Now when anchor a (nil if none) does not cover counter
// reading t: when no other goroutine is at it, it measures the counter's
// rate against nanotime and publishes a new anchor.
func calibrate(a *anchor, t uint64) int64 {
	if !mu.TryLock() {
		// Another goroutine calibrates: extrapolating a little past the
		// span keeps the line that readings follow.
		if a != nil && t-a.t0 < 2*a.span {
			return a.at(t)
		}
		return nanotime()
	}
	defer mu.Unlock()
	if !checked {
		checked = true
		if !tscUsable() {
			disabled.Store(true)
		}
	}
	if disabled.Load() {
		return nanotime()
	}
	t, now, ok := sample()
	if !ok {
		return now
	}
	dns := now - lastNs
	if lastTSC == 0 || t <= lastTSC || dns <= 0 {
		// The first sample, or the counter went back: start over.
		current.Store(nil)
		lastTSC, lastNs = t, now
		return now
	}
	if dns < minCalibration {
		return now
	}
	// The rate over the last interval, in ns per tick times 2^32.
	rate, _ := bits.Div64(uint64(dns)>>32, uint64(dns)<<32, t-lastTSC)
	lastTSC, lastNs = t, now
	if rate == 0 {
		return now
	}
	next := &anchor{t0: t, ns: now, mult: rate}
	next.span, _ = bits.Div64(anchorSpan>>32, anchorSpan<<32, rate)
	if a := current.Load(); a != nil {
		// Continue the old line from here and slew towards the true
		// clock over the next span, so that readings never jump back.
		pred := a.at(t)
		if e := now - pred; e > -maxSlew && e < maxSlew {
			next.ns = pred
			adj := (uint64(max(e, -e)) << 32) / next.span
			if e > 0 {
				next.mult += adj
			} else {
				next.mult -= min(adj, next.mult/2)
			}
		}
	}
	current.Store(next)
	return next.ns
}

// sample reads the counter and nanotime together: the counter on both
// sides of the clock, so that a preemption in between shows (ok false).
func sample() (t uint64, now int64, ok bool) {
	for range 3 {
		t1 := rdtsc()
		now = nanotime()
		t2 := rdtsc()
		if t2 >= t1 && t2-t1 < 1<<16 {
			return t1 + (t2-t1)/2, now, true
		}
	}
	return 0, now, false
}

//go:linkname nanotime runtime.nanotime
func nanotime() int64
