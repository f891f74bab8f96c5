package tracepoint

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/uebpf/uebpf/jit"
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

// TestFiredExact fires from 8 goroutines into every way a firing counts:
// in the tracepoint's own counter (no attachment keeps the event, or one
// only matches), with a record of a native filter's session, with a record
// of a session after an interpreted program kept it, and with a record
// that the full ring drops. Fired must be exact in every case, before and
// after the attachments are closed and collected.
func TestFiredExact(t *testing.T) {
	const goroutines, perGoroutine = 8, 3000
	for _, tc := range []struct {
		name   string
		attach func(t *testing.T, tp *Tracepoint[testEvent]) []Link
	}{
		{"native filter records", func(t *testing.T, tp *Tracepoint[testEvent]) []Link {
			s := newSession(t, 1<<26)
			return []Link{must(t)(s.Enable(tp, Filter("status >= 500")))}
		}},
		{"native filters match and record", func(t *testing.T, tp *Tracepoint[testEvent]) []Link {
			s := newSession(t, 1<<26)
			return []Link{must(t)(Attach(tp, Filter("status == 404"))), must(t)(s.Enable(tp, Filter("status >= 404")))}
		}},
		{"two sessions, one full", func(t *testing.T, tp *Tracepoint[testEvent]) []Link {
			full, roomy := newSession(t, 4096), newSession(t, 1<<26)
			return []Link{must(t)(full.Enable(tp)), must(t)(roomy.Enable(tp, Filter("status >= 500")))}
		}},
		{"interpreted and record", func(t *testing.T, tp *Tracepoint[testEvent]) []Link {
			s := newSession(t, 1<<26)
			return []Link{must(t)(Attach(tp, VMProgram(loadAsm(t, statusAtLeast500)))), must(t)(s.Enable(tp, Filter("$ctx.vpid > 0 && status == 404")))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := declare[testEvent](t)
			links := tc.attach(t, tp)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perGoroutine {
						tp.Fire(&testEvent{Seq: uint64(g*perGoroutine + i), Status: []uint16{200, 404, 503}[i%3]})
					}
				}()
			}
			wg.Wait()
			const want = goroutines * perGoroutine
			if st := tp.Stats(); st.Fired != want {
				t.Errorf("fired %d, want %d (%+v)", st.Fired, want, st)
			}
			for _, l := range links {
				l.Close()
			}
			links = nil
			for i := 0; i < 100 && liveCount(&tp.tally) > 0; i++ {
				runtime.GC()
				time.Sleep(time.Millisecond)
			}
			if st := tp.Stats(); st.Fired != want {
				t.Errorf("after collection: fired %d, want %d (%+v)", st.Fired, want, st)
			}
		})
	}
}

// must returns a function that fails t on an error and returns the
// attachment.
func must(t *testing.T) func(*Attachment, error) Link {
	return func(a *Attachment, err error) Link {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// TestLoneNativeAttachmentCounts covers fire's path for one native
// attachment, which has no loop: every outcome of the filter's run counts
// as the loop counts it.
func TestLoneNativeAttachmentCounts(t *testing.T) {
	const events = 300 // statuses 200, 404, 503 in turn
	oneP(t)
	fits := 4096 / recordBytes(declare[testEvent](t).Info())
	for _, tc := range []struct {
		name   string
		ring   int // 0: no session
		filter string
		want   Stats
	}{
		{"drops all", 0, "status > 600", Stats{Fired: events}},
		{"matches", 0, "status >= 500", Stats{Fired: events, Matched: events / 3}},
		{"records", 1 << 20, "status >= 404", Stats{Fired: events, Matched: 2 * events / 3, Recorded: 2 * events / 3}},
		{"ring full", 4096, "status >= 200", Stats{Fired: events, Matched: events, Recorded: uint64(fits), Dropped: events - uint64(fits)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := declare[testEvent](t)
			var a *Attachment
			var err error
			if tc.ring == 0 {
				a, err = Attach(tp, Filter(tc.filter))
			} else {
				a, err = newSession(t, tc.ring).Enable(tp, Filter(tc.filter))
			}
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if s := tp.active.Load(); jit.Supported && (!s.native || len(s.atts) != 1) {
				t.Fatalf("not a lone native attachment: %+v", s)
			}
			for i := range events {
				tp.Fire(&testEvent{Seq: uint64(i), Status: []uint16{200, 404, 503}[i%3]})
			}
			if st := tp.Stats(); st != tc.want {
				t.Errorf("tracepoint stats %+v, want %+v", st, tc.want)
			}
		})
	}
}
