package tracepoint

import (
	"slices"
	"sync"
	"sync/atomic"
)

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

// counters are an attachment's Stats, updated by firing goroutines (a
// tracepoint counts only its firings; see tally). matched counts the kept
// events that no session recorded or dropped: Matched is the sum of the
// three, so that a recorded event costs one add less.
type counters struct {
	// recorded is added to by the session's ring as it writes a record,
	// under its producer lock (maps.RingBufMap.WriteCounted), so that a
	// recorded event costs no atomic add of its own: first, for 8-byte
	// alignment everywhere; read with atomic.LoadUint64.
	recorded                 uint64
	matched, dropped, errors atomic.Uint64
}

func (c *counters) load() Stats {
	recorded, dropped := atomic.LoadUint64(&c.recorded), c.dropped.Load()
	return Stats{
		Matched:  c.matched.Load() + recorded + dropped,
		Recorded: recorded,
		Dropped:  dropped,
		Errors:   c.errors.Load(),
	}
}

func (s *Stats) add(t Stats) {
	s.Fired += t.Fired
	s.Matched += t.Matched
	s.Recorded += t.Recorded
	s.Dropped += t.Dropped
	s.Errors += t.Errors
}

// tally sums the counters of attachments, for a tracepoint or a session:
// each kept event is counted once, by its attachment, and the tracepoint's
// and the session's figures are sums, where a second and a third atomic
// add per event cost more than a recorded event's ring write.
//
// An attachment's counters stay in live until the attachment is
// collected, and only then are folded into folded: a Fire that started
// before Close may still count into them, but no Fire can once nothing
// reaches the attachment. So every count is in exactly one of the two, at
// every moment.
type tally struct {
	mu sync.Mutex
	// live is a slice, not a set: most tracepoints have an attachment or
	// two, and a slice of one costs 8 bytes where a map costs hundreds.
	live   []*counters
	folded Stats
}

// add starts counting c, the counters of a new attachment.
func (t *tally) add(c *counters) {
	t.mu.Lock()
	t.live = append(t.live, c)
	t.mu.Unlock()
}

// fold moves c, whose attachment was collected, into the totals.
func (t *tally) fold(c *counters) {
	t.mu.Lock()
	if i := slices.Index(t.live, c); i >= 0 {
		last := len(t.live) - 1
		t.live[i] = t.live[last]
		t.live[last] = nil
		t.live = t.live[:last]
		t.folded.add(c.load())
	}
	t.mu.Unlock()
}

// load sums the counters (Fired is not counted per attachment).
func (t *tally) load() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.folded
	for _, c := range t.live {
		st.add(c.load())
	}
	return st
}

// tallies are the tallies an attachment counts into, for its cleanup.
type tallies struct {
	point, session *tally
	c              *counters
}

// foldTallies is the cleanup of a collected attachment.
func foldTallies(t tallies) {
	t.point.fold(t.c)
	if t.session != nil {
		t.session.fold(t.c)
	}
}
