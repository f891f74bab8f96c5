package control

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

// Lines writes the events of channels as lines, JSON or text, merged by
// time within what each round reads: what "uebpf trace stream" prints.
// The lines go to the output from a goroutine of its own, a few rounds
// behind at most, so that a slow output never holds up a stop: Round and
// Close give up when their context is done. Not safe for concurrent use.
type Lines struct {
	json, sessions bool
	srcs           []lineSource
	tc             textClock
	prev           uint64 // the timestamp of the last line written
	arena          []byte
	entries        []lineEntry
	read           uint64        // events read from the channels
	written        atomic.Uint64 // of those, written out

	out  chan chunk
	done chan error
}

// chunk is a round's lines, and how many events they hold.
type chunk struct {
	b []byte
	n int
}

type lineSource struct {
	src ctf.Source
	o   origin
}

// lineEntry is one event of a round: its timestamp and its line in the
// round's arena, head (the wall time) and tail (the rest) apart: the time
// since the previous line goes between once the round is in order.
type lineEntry struct {
	ts              uint64
	head, tail, end int
}

// NewLines returns a Lines writing to w: JSON lines if json is set, else
// text (as 'lttng view' prints), with the session of each event when
// sessions is set.
func NewLines(w io.Writer, json, sessions bool) *Lines {
	l := &Lines{json: json, sessions: sessions, out: make(chan chunk, 4), done: make(chan error, 1)}
	go func() {
		var err error
		for c := range l.out {
			if err == nil {
				if _, err = w.Write(c.b); err == nil {
					l.written.Add(uint64(c.n))
				}
			}
		}
		l.done <- err
	}()
	return l
}

// Add adds the channel of a session to what Round reads.
func (l *Lines) Add(src ctf.Source, session uint64) {
	pid, name, off := src.Process()
	l.srcs = append(l.srcs, lineSource{src: src, o: origin{session: session, pid: int64(pid), procname: name, clockOffset: off}})
}

// Round reads up to max records of every ring of every channel (0: no
// bound), puts them in time order and hands their lines to the output,
// unless ctx is done first (the output is slower than the events): then
// they are not written. It returns how many it read.
func (l *Lines) Round(ctx context.Context, max int) (int, error) {
	l.arena, l.entries = l.arena[:0], l.entries[:0]
	for i := range l.srcs {
		s := &l.srcs[i]
		for shard := range s.src.Shards() {
			if _, err := s.src.Read(shard, max, func(ev *tracepoint.Event) { l.add(&s.o, ev) }); err != nil {
				return 0, fmt.Errorf("control: session %d: %w", s.o.session, err)
			}
		}
	}
	if len(l.entries) == 0 {
		return 0, nil
	}
	l.read += uint64(len(l.entries))
	slices.SortStableFunc(l.entries, func(a, b lineEntry) int { return cmp.Compare(a.ts, b.ts) })
	out := make([]byte, 0, len(l.arena)+len(l.entries)*16)
	for _, e := range l.entries {
		out = append(out, l.arena[e.head:e.tail]...)
		if !l.json {
			out = appendDelta(out, e.ts, l.prev)
		}
		out = append(out, l.arena[e.tail:e.end]...)
		l.prev = e.ts
	}
	select {
	case l.out <- chunk{out, len(l.entries)}:
	case err := <-l.done:
		l.done <- err
		return 0, fmt.Errorf("control: writing events: %w", err)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return len(l.entries), nil
}

// add formats an event of the round into the arena.
func (l *Lines) add(o *origin, ev *tracepoint.Event) {
	e := lineEntry{ts: ev.TimestampNs, head: len(l.arena)}
	if l.json {
		e.tail = e.head
		l.arena = appendEventJSON(l.arena, o, ev, l.sessions)
	} else {
		l.arena = appendEventTime(l.arena, &l.tc, o, ev.TimestampNs)
		e.tail = len(l.arena)
		l.arena = appendEventText(l.arena, o, ev, l.sessions)
	}
	l.arena = append(l.arena, '\n')
	e.end = len(l.arena)
	l.entries = append(l.entries, e)
}

// appendDelta appends the time since the previous line, as 'lttng view'.
func appendDelta(b []byte, ts, prev uint64) []byte {
	if prev == 0 || ts < prev {
		return append(b, "(+?.?????????) "...)
	}
	d := ts - prev
	b = append(b, "(+"...)
	b = strconv.AppendUint(b, d/1e9, 10)
	b = append(b, '.')
	b = appendPadded(b, d%1e9, 9)
	return append(b, ") "...)
}

// Read is how many events Round read; Written how many of those the
// output took.
func (l *Lines) Read() uint64    { return l.read }
func (l *Lines) Written() uint64 { return l.written.Load() }

// Close waits until the output took every line handed to it, or ctx is
// done (an output too slow or stuck): then what is left is not written
// (Read - Written). The error is the output's.
func (l *Lines) Close(ctx context.Context) error {
	close(l.out)
	var err error
	select {
	case err = <-l.done:
	case <-ctx.Done():
		select {
		case err = <-l.done:
		default:
		}
	}
	if err != nil {
		return fmt.Errorf("control: writing events: %w", err)
	}
	return nil
}
