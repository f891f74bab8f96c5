package clock

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname
)

// anchor maps counter readings to CLOCK_MONOTONIC: ns + (tsc-t0)*mult/2^32
// for readings from t0 to end. Successive anchors meet: the next one
// starts (its t0) where this one ends, on this one's line, so the time
// read never goes back whichever anchor a reader happened to load.
type anchor struct {
	t0   uint64
	ns   int64
	mult uint64 // nanoseconds per tick, times 2^32
	// end is the first counter value this anchor does not cover: t0 plus
	// a span at first, moved back to the successor's t0 when there is one.
	end atomic.Uint64
	// prev covers the readings before t0 (a successor's t0 is a little in
	// the future when it is published): a copy of the anchor this one
	// follows, without its own prev.
	prev *anchor
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
	// switchAhead is how far in the future (in ns) a new anchor takes
	// over: readers that loaded the old one before it was cut short must
	// all have read the counter before the switch.
	switchAhead = 20_000
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
// of runtime.nanotime, and never going back unless the counter does (or
// the clock steps by more than maxSlew, which a slew cannot hide).
func Now() int64 {
	if a := current.Load(); a != nil {
		t := rdtsc() // after the load: t is at least a's publication
		if d := t - a.t0; d < a.end.Load()-a.t0 {
			hi, lo := bits.Mul64(d, a.mult)
			return a.ns + int64(hi<<32|lo>>32)
		}
		return slow(a, t)
	}
	if disabled.Load() {
		return nanotime()
	}
	return calibrate()
}

// slow is Now for a reading t that anchor a does not cover: before its
// t0 (its predecessor's), or past its end.
func slow(a *anchor, t uint64) int64 {
	if p := a.prev; t < a.t0 && p != nil && t >= p.t0 {
		return p.at(t)
	}
	if t < a.t0 {
		return a.ns // TSCs of two CPUs a few ticks apart
	}
	return calibrate()
}

// calibrate is Now when no anchor covers the present: when no other
// goroutine is at it, it measures the counter's rate against nanotime
// and publishes a new anchor; otherwise it reads the present on the
// anchor there is or, past its end, waits for the new one (nanotime could
// be behind readings on the line, and the old line ahead of the new).
func calibrate() int64 {
	if !mu.TryLock() {
		if a := current.Load(); a != nil {
			if t := rdtsc(); t-a.t0 < a.end.Load()-a.t0 {
				return a.at(t)
			}
		}
		mu.Lock() // rarely: a calibration late by more than switchAhead
		mu.Unlock()
		return Now()
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
	a := current.Load()
	if a != nil {
		// Another goroutine may have published an anchor since this one
		// missed.
		if t := rdtsc(); t-a.t0 < a.end.Load()-a.t0 {
			return a.at(t)
		}
	}
	t, now, ok := sample()
	if !ok {
		return onLine()
	}
	dns := now - lastNs
	if lastTSC == 0 || t <= lastTSC || dns <= 0 {
		// The first sample, or the counter went back: start over.
		current.Store(nil)
		lastTSC, lastNs = t, now
		return now
	}
	if dns < minCalibration {
		return onLine()
	}
	// The rate over the last interval, in ns per tick times 2^32.
	rate, _ := bits.Div64(uint64(dns)>>32, uint64(dns)<<32, t-lastTSC)
	lastTSC, lastNs = t, now
	if rate == 0 {
		return onLine()
	}
	span, _ := bits.Div64(anchorSpan>>32, anchorSpan<<32, rate)
	ahead, _ := bits.Div64(switchAhead>>32, switchAhead<<32, rate)
	if a == nil {
		next := &anchor{t0: t, ns: now, mult: rate}
		next.end.Store(t + span)
		current.Store(next)
		return now
	}
	// Continue a's line from a switch point a little ahead and slew
	// towards the true clock over the next span, so that readings never
	// jump back. a must end there for every reader: one that read a's end
	// before it moved read the counter before, which must be before the
	// switch, so a slow store (a preempted calibration) takes a later
	// switch point.
	var sw uint64
	for {
		sw = rdtsc() + ahead
		a.end.Store(sw)
		// Half the margin is for readers' counter reads, which the CPU
		// may perform after their load of end, and for CPUs' counters
		// being a few ticks apart.
		if rdtsc()+ahead/2 < sw {
			break
		}
	}
	prev := &anchor{t0: a.t0, ns: a.ns, mult: a.mult}
	prev.end.Store(sw)
	next := &anchor{t0: sw, ns: a.at(sw), mult: rate, prev: prev}
	next.end.Store(sw + span)
	trueNs := now + int64((uint64(sw-t)*rate)>>32) // where nanotime will be at sw, at this rate
	if e := trueNs - next.ns; e > -maxSlew && e < maxSlew {
		adj := (uint64(max(e, -e)) << 32) / span
		if e > 0 {
			next.mult += adj
		} else {
			next.mult -= min(adj, next.mult/2)
		}
	} else {
		// Too far to slew: step. Readings may go back by the error.
		next.ns = trueNs
	}
	current.Store(next)
	return onLine()
}

// onLine reads the present on the current anchor's line, extrapolated
// past its end (the next anchor will start from there), or nanotime
// without an anchor. The calibrating goroutine calls it.
func onLine() int64 {
	a := current.Load()
	if a == nil {
		return nanotime()
	}
	t := rdtsc()
	if t < a.t0 {
		if p := a.prev; p != nil && t >= p.t0 {
			return p.at(t)
		}
		return a.ns
	}
	return a.at(t)
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

// RealtimeOffset returns CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds:
// what turns Now's readings into wall time. It is read between two Now
// readings, the closest pair of a few tries.
func RealtimeOffset() int64 {
	var off int64
	best := int64(-1)
	for range 5 {
		m0 := Now()
		r := time.Now().UnixNano()
		m1 := Now()
		if d := m1 - m0; best < 0 || d < best {
			best, off = d, r-(m0+(m1-m0)/2)
		}
	}
	return off
}
