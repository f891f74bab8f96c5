package tracepoint

import "sync/atomic"

// Stats are the counters of a tracepoint, an attachment or a session.
type Stats struct {
	// Fired counts firings while something was attached (firings with
	// nothing attached are not counted: that would cost more than the
	// firing).
	Fired uint64
	// Matched counts program runs that kept the event (returned non-zero).
	Matched uint64
	// Recorded counts kept events written to a session's ring buffer.
	Recorded uint64
	// Dropped counts kept events the ring buffer had no room for.
	Dropped uint64
	// Errors counts program runs that failed (a run error in checked mode,
	// the instruction budget).
	Errors uint64
}

// counters are Stats updated atomically by firing goroutines. matched
// counts the kept events that no session recorded or dropped: Matched is
// the sum of the three, so that a recorded event costs one add less.
type counters struct {
	fired, matched, recorded, dropped, errors atomic.Uint64
}

func (c *counters) load() Stats {
	recorded, dropped := c.recorded.Load(), c.dropped.Load()
	return Stats{
		Fired:    c.fired.Load(),
		Matched:  c.matched.Load() + recorded + dropped,
		Recorded: recorded,
		Dropped:  dropped,
		Errors:   c.errors.Load(),
	}
}
