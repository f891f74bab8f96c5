package tracepoint

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestStatsAfterCollection checks that a tracepoint's and a session's
// figures, sums of their attachments' counters, keep what closed
// attachments counted, before and after the collector frees them, with
// firings racing with Close.
func TestStatsAfterCollection(t *testing.T) {
	tp := declare[testEvent](t)
	s := newSession(t, 1<<20)
	const rounds, perRound = 20, 60
	var sum, sumS Stats // the attachments' own counters
	var wg sync.WaitGroup
	for r := range rounds {
		rec, err := s.Enable(tp, Filter("status >= 500"))
		if err != nil {
			t.Fatal(err)
		}
		cnt, err := Attach(tp, Filter("status == 404"))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { // firings racing with the Closes below, every other round
			defer wg.Done()
			for i := range perRound {
				tp.Fire(&testEvent{Seq: uint64(i), Status: []uint16{200, 404, 503}[i%3]})
			}
		}()
		if r%2 == 0 {
			wg.Wait()
		}
		rec.Close()
		cnt.Close()
		wg.Wait()
		ra, ca := rec.Stats(), cnt.Stats()
		if r%2 == 0 && (ra != Stats{Matched: perRound / 3, Recorded: perRound / 3} || ca != Stats{Matched: perRound / 3}) {
			t.Errorf("round %d: attachment stats %+v and %+v", r, ra, ca)
		}
		sum.add(ra)
		sum.add(ca)
		sumS.add(ra)
	}
	sumS.Errors = 0
	n := uint64(len(drain(t, s)))
	check := func(when string) {
		t.Helper()
		st, ss := tp.Stats(), s.Stats()
		if st.Fired < rounds/2*perRound || st.Fired > rounds*perRound {
			t.Errorf("%s: fired %d", when, st.Fired)
		}
		st.Fired = 0
		if st != sum || ss != sumS || n != ss.Recorded {
			t.Errorf("%s: tracepoint %+v, session %+v, %d records; attachments %+v, %+v", when, st, ss, n, sum, sumS)
		}
	}
	check("before collection")
	for i := 0; i < 100 && (liveCount(&tp.tally) > 0 || liveCount(&s.tally) > 0); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := liveCount(&tp.tally); n != 0 {
		t.Errorf("%d attachments' counters not folded after collection", n)
	}
	check("after collection")
}

func liveCount(t *tally) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}
