package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// jsonPoll is how long WriteJSON waits for a record before it flushes
// what it wrote and looks at its context again.
const jsonPoll = 50 * time.Millisecond

// WriteJSON writes the records of session s to w as JSON lines, one Event
// per line in the protocol's encoding (what "uebpf trace stream --json"
// prints), until ctx is done or s is closed; then it writes what s holds
// at that moment and returns. It is the in-process export for an
// application that logs its own events (to stdout or a file); w is
// flushed whenever the session has nothing ready. WriteJSON reads s's
// records: nothing else should call s.Next meanwhile.
func WriteJSON(ctx context.Context, s *tracepoint.Session, w io.Writer) error {
	bw := bufio.NewWriter(w)
	defer s.SetDeadline(time.Time{})
	var (
		buf    []byte
		fields = map[*tracepoint.Point][]tracepoint.Field{}
		drain  bool
	)
	s.SetDeadline(time.Now().Add(jsonPoll))
	for {
		rec, err := s.Next()
		switch {
		case err == nil:
			p := rec.Tracepoint
			fs, ok := fields[p]
			if !ok {
				fs = p.Info().Fields
				fields[p] = fs
			}
			buf = append(appendEvent(buf[:0], &rec, p.Name(), fs), '\n')
			if _, err := bw.Write(buf); err != nil {
				return fmt.Errorf("control: json lines: %w", err)
			}
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
		case errors.Is(err, os.ErrClosed):
			drain = true
		default:
			return fmt.Errorf("control: json lines: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("control: json lines: %w", err)
		}
		switch {
		case drain:
			return nil
		case ctx.Err() != nil:
			drain = true
			s.SetDeadline(time.Now()) // what is there, then stop
		default:
			s.SetDeadline(time.Now().Add(jsonPoll))
		}
	}
}
