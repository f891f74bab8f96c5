package tracepoint

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/uebpf/uebpf/maps"
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
// tracepoint counts only the firings no attachment recorded; see tally).
// matched counts the kept events that no session recorded or dropped:
// Matched is the sum of the three, so that a recorded event costs one add
// less.
type counters struct {
	// recorded is added to by the session's ring as it writes a record,
	// under its producer lock (count), so that a recorded event costs no
	// atomic add of its own: first, for 8-byte alignment everywhere; read
	// with atomic.LoadUint64.
	recorded uint64
	// fired counts the firings of the tracepoint whose first count was a
	// record of this attachment: counted with it, under the ring's lock,
	// where the tracepoint's atomic add would be one more locked
	// instruction per recorded event. It is part of the tracepoint's
	// Fired, not of the attachment's Stats.
	fired                    uint64
	matched, dropped, errors atomic.Uint64
}

// count counts a record that c's ring is writing, under the ring's lock
// that claim holds, and the firing it is the first count of, if firing.
// The firing comes first, and readers load recorded before fired
// (loadAll), so that they never see the record without its firing.
func (c *counters) count(claim maps.RingClaim, firing bool) {
	if firing {
		claim.Count(&c.fired)
	}
	claim.Count(&c.recorded)
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

// loadAll is load with the firings counted here (fired), for the sums:
// loaded after the rest, which they come before.
func (c *counters) loadAll() Stats {
	st := c.load()
	st.Fired = atomic.LoadUint64(&c.fired)
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

// fold moves c, whose attachment was collected, into the totals.
func (t *tally) fold(c *counters) {
	t.mu.Lock()
	if i := slices.Index(t.live, c); i >= 0 {
		last := len(t.live) - 1
		t.live[i] = t.live[last]
		t.live[last] = nil
		t.live = t.live[:last]
		t.folded.add(c.loadAll())
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
