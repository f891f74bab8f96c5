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
// is done or s is closed, then writes what s holds at that moment and
// closes the trace. Events the session dropped (its ring was full) are
// counted as discarded in the trace. Record reads s's records: nothing
// else should call s.Next meanwhile.
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
	dropped := s.Stats().Dropped // drops from before the trace began are not its
	var since time.Time          // when the packet got its first event since a flush
	for {
		done := ctx.Err() != nil
		if done {
			s.SetDeadline(time.Now()) // drain what is there, then stop
		} else {
			s.SetDeadline(time.Now().Add(pollInterval))
		}
		rec, err := s.Next()
		switch {
		case err == nil:
			if werr := w.Write(rec); werr != nil {
				return werr
			}
			if since.IsZero() {
				since = time.Now()
			}
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
		case errors.Is(err, os.ErrClosed):
			done = true
		default:
			return fmt.Errorf("ctf: trace %s: %w", dir, err)
		}
		if d := s.Stats().Dropped; d > dropped {
			w.AddDiscarded(d - dropped)
			dropped = d
		}
		if done {
			return nil
		}
		if iv := w.cfg.flushInterval; iv > 0 && !since.IsZero() && time.Since(since) >= iv {
			if err := w.Flush(); err != nil {
				return err
			}
			since = time.Time{}
		}
	}
}
