package ctf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// pollInterval is how long Record waits for a record before it looks at
// its context, the session's drops and the flush interval again.
const pollInterval = 50 * time.Millisecond

// FlushInterval makes Record flush the packet being filled when it holds
// events older than d, so that the trace on disk lags the session by
// about d at most (trimmed packets, smaller than PacketSize, are the
// cost). Without it packets are written as they fill and at the end.
func FlushInterval(d time.Duration) Option { return func(c *config) { c.flushInterval = d } }

// Record writes the events of session s into a new trace in dir until ctx
// is done or s is closed, then writes what s holds at that moment (for
// pollInterval at most, if events keep coming) and closes the trace.
// Events the session dropped (its ring was full), before Record too, are
// counted as discarded in the trace. Record reads s's records: nothing else should call s.Next
// meanwhile.
func Record(ctx context.Context, s *tracepoint.Session, dir string, opts ...Option) (err error) {
	w, err := Create(dir, opts...)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	defer s.SetDeadline(time.Time{})
	var (
		dropped uint64    // the session's drops the trace counts
		since   time.Time // when the packet got its first event since a flush
		drain   time.Time // when ctx was done: Record is draining s
	)
	// tick looks at what changes outside: the session's drops, ctx, the
	// flush interval. It reports whether Record is done.
	tick := func(timeout bool) (bool, error) {
		if d := s.Stats().Dropped; d > dropped {
			w.AddDiscarded(d - dropped)
			dropped = d
		}
		now := time.Now()
		switch {
		case !drain.IsZero():
			return timeout || now.Sub(drain) > pollInterval, nil
		case ctx.Err() != nil:
			drain = now
			s.SetDeadline(now) // read what is there, then stop
			return false, nil
		case timeout:
			s.SetDeadline(now.Add(pollInterval))
		}
		if iv := w.cfg.flushInterval; iv > 0 && !since.IsZero() && now.Sub(since) >= iv {
			since = time.Time{}
			return false, w.Flush()
		}
		return false, nil
	}
	if _, err := tick(true); err != nil {
		return err
	}
	for n := 1; ; n++ {
		rec, err := s.Next()
		switch {
		case err == nil:
			if err := w.Write(rec); err != nil {
				return err
			}
			if since.IsZero() {
				since = time.Now()
			}
			if n%1024 != 0 { // a busy session times out rarely
				continue
			}
		case errors.Is(err, os.ErrDeadlineExceeded):
		case errors.Is(err, os.ErrClosed):
			if _, err := tick(true); err != nil {
				return err
			}
			return nil
		default:
			return fmt.Errorf("ctf: trace %s: %w", dir, err)
		}
		done, err := tick(err != nil)
		if done || err != nil {
			return err
		}
	}
}
