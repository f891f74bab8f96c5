package control

import (
	"context"
	"io"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

// WriteJSON writes the records of session s to w as JSON lines, one Event
// per line in the protocol's encoding (what "uebpf trace stream --json"
// prints, without the session), until ctx is done or s is closed; then it
// writes what s holds at that moment (for ctf.StopBudget at most) and
// returns. It is the in-process export for an application that logs its
// own events (to stdout or a file). WriteJSON is s's consumer: nothing
// else should read s meanwhile.
func WriteJSON(ctx context.Context, s *tracepoint.Session, w io.Writer) error {
	r, err := s.Reader()
	if err != nil {
		return err
	}
	l := NewLines(w, true, false)
	l.Add(r, 0)
	if err := drainLines(ctx, l, r); err != nil {
		l.Close(context.Background())
		return err
	}
	return l.Close(context.Background())
}

// drainLines runs l's rounds over src until src is closed and read, or ctx
// is done: then for ctf.StopBudget at most.
func drainLines(ctx context.Context, l *Lines, src ctf.Source) error {
	var stopped time.Time
	pause := 50 * time.Microsecond
	for {
		n, err := l.Round(context.Background(), 4096)
		if err != nil {
			return err
		}
		if stopped.IsZero() && ctx.Err() != nil {
			stopped = time.Now()
		}
		switch {
		case !stopped.IsZero() && time.Since(stopped) >= ctf.StopBudget:
			return nil
		case n > 0:
			pause = 50 * time.Microsecond
			continue
		case !stopped.IsZero() || src.Closed():
			if !src.Pending() {
				return nil
			}
			continue
		}
		src.Wait(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}
