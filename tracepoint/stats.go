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
// tracepoint counts only the firings no attachment counted; see tally).
// An attachment of a session counts its records, drops and the firings
// whose first count they were in the session's per-ring slots (written by
// the ring's pinned writer, a plain add); matched counts the kept events
// that no ring of its session took or refused (another attachment of the
// session recorded them, or the attachment records nowhere), so that
// Matched is the sum of the three and a recorded event costs one add.
type counters struct {
	matched, errors atomic.Uint64
	session         *Session
	slot            int
}

// sums reads what c's slot counted in its session's rings.
func (c *counters) sums() (recorded, dropped, fired uint64) {
	if c.session == nil {
		return 0, 0, 0
	}
	return c.session.slotSums(c.slot)
}

func (c *counters) load() Stats {
	recorded, dropped, _ := c.sums()
	return c.stats(recorded, dropped)
}

func (c *counters) stats(recorded, dropped uint64) Stats {
	return Stats{
		Matched:  c.matched.Load() + recorded + dropped,
		Recorded: recorded,
		Dropped:  dropped,
		Errors:   c.errors.Load(),
	}
}

// loadAll is load with the firings counted in the slot (Fired), for the
// sums.
func (c *counters) loadAll() Stats {
	recorded, dropped, fired := c.sums()
	st := c.stats(recorded, dropped)
	st.Fired = fired
	return st
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

// fold moves c, whose attachment was collected, into the totals: st is
// what it counted.
func (t *tally) fold(c *counters, st Stats) {
	t.mu.Lock()
	if i := slices.Index(t.live, c); i >= 0 {
		last := len(t.live) - 1
		t.live[i] = t.live[last]
		t.live[last] = nil
		t.live = t.live[:last]
		t.folded.add(st)
	}
	t.mu.Unlock()
}

// load sums the counters; Fired sums only the firings that attachments
// counted with a record (counters.fired).
func (t *tally) load() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.folded
	for _, c := range t.live {
		st.add(c.loadAll())
	}
	return st
}

// tallies are the tallies an attachment counts into, for its cleanup.
type tallies struct {
	point *tally
	c     *counters
}

// foldTallies is the cleanup of a collected attachment: its counts move
// into the totals, and its slot is free for another.
func foldTallies(t tallies) {
	st := t.c.loadAll()
	t.point.fold(t.c, st)
	if s := t.c.session; s != nil {
		s.tally.fold(t.c, st)
		s.freeSlot(t.c.slot)
	}
}
