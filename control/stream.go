package control

import (
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
)

// Limits of one frame of events: a batch is sent when the ring has no
// more records ready or it reaches one of these.
const (
	maxBatchEvents = 4096
	maxBatchBytes  = 1 << 20
)

// stream sends the records of one session to one connection.
type stream struct {
	ss *session
	id uint64 // the stream request's
}

// startStream starts streaming a session's records to the connection, in
// frames carrying the request's id, until the client stops it, the session
// is disabled or the connection closes.
func (c *conn) startStream(req *Request) error {
	ss, err := c.s.session(req.Session)
	if err != nil {
		return err
	}
	st := &stream{ss: ss, id: req.ID}
	ss.mu.Lock()
	if ss.streaming != nil {
		ss.mu.Unlock()
		return fail(CodeBusy, "session %d is already being streamed", ss.id)
	}
	ss.streaming, ss.stopped = st, false
	ss.mu.Unlock()
	c.mu.Lock()
	c.streams[ss.id] = st
	c.swg.Add(1)
	c.mu.Unlock()
	// The reply goes before the first frame of events.
	s := stats(ss.ts.Stats())
	c.write(&Response{ID: req.ID, Stats: &s})
	go c.runStream(st)
	return nil
}

// stopStream stops the connection's stream of a session; the stream sends
// its last frame.
func (c *conn) stopStream(id uint64) error {
	c.mu.Lock()
	st := c.streams[id]
	c.mu.Unlock()
	if st == nil {
		return fail(CodeNotFound, "stop: no stream of session %d on this connection", id)
	}
	st.stop()
	return nil
}

// stopStreams stops all the connection's streams and waits for them.
func (c *conn) stopStreams() {
	c.mu.Lock()
	for _, st := range c.streams {
		st.stop()
	}
	c.mu.Unlock()
	c.swg.Wait()
}

// stop makes the stream's reads fail at once, for good. A stop that comes
// after the stream ended does not touch the session's next stream.
func (st *stream) stop() {
	ss := st.ss
	ss.mu.Lock()
	if ss.streaming == st {
		ss.stopped = true
		ss.ts.SetDeadline(time.Unix(1, 0))
	}
	ss.mu.Unlock()
}

func (c *conn) runStream(st *stream) {
	ss := st.ss
	defer c.swg.Done()
	reason := "stopped"
	defer func() {
		c.mu.Lock()
		delete(c.streams, ss.id)
		c.mu.Unlock()
		ss.mu.Lock()
		ss.streaming, ss.stopped = nil, false
		ss.ts.SetDeadline(time.Time{})
		ss.mu.Unlock()
		s := stats(ss.ts.Stats())
		c.write(&Response{ID: st.id, End: true, Reason: reason, Stats: &s})
	}()
	names := map[*tracepoint.Point]string{}
	fields := map[*tracepoint.Point][]tracepoint.Field{}
	var buf []byte
	for {
		// Block for the first record, then take those ready without
		// waiting: a frame per burst, not per event.
		ss.setDeadline(time.Time{})
		rec, err := ss.ts.Next()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				ss.mu.Lock()
				stopped := ss.stopped
				ss.mu.Unlock()
				if stopped {
					return
				}
				continue
			}
			if errors.Is(err, os.ErrClosed) {
				reason = "session disabled"
				return
			}
			reason = err.Error()
			return
		}
		buf = appendFrameHeader(buf[:0])
		buf = append(buf, `{"id":`...)
		buf = strconv.AppendUint(buf, st.id, 10)
		buf = append(buf, `,"events":[`...)
		n := 0
		ss.setDeadline(time.Unix(1, 0))
		for {
			p := rec.Tracepoint
			name, ok := names[p]
			if !ok {
				name, fields[p] = p.Name(), p.Info().Fields
				names[p] = name
			}
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = appendEvent(buf, &rec, name, fields[p])
			n++
			if n >= maxBatchEvents || len(buf) >= maxBatchBytes {
				break
			}
			if rec, err = ss.ts.Next(); err != nil {
				break
			}
		}
		s := ss.ts.Stats()
		buf = append(buf, `],"stats":{"fired":`...)
		buf = strconv.AppendUint(buf, s.Fired, 10)
		buf = append(buf, `,"matched":`...)
		buf = strconv.AppendUint(buf, s.Matched, 10)
		buf = append(buf, `,"recorded":`...)
		buf = strconv.AppendUint(buf, s.Recorded, 10)
		buf = append(buf, `,"dropped":`...)
		buf = strconv.AppendUint(buf, s.Dropped, 10)
		buf = append(buf, `,"errors":`...)
		buf = strconv.AppendUint(buf, s.Errors, 10)
		buf = append(buf, "}}"...)
		f, ferr := finishFrame(buf)
		if ferr != nil || !c.writeFrame(f) {
			reason = "connection closed"
			return
		}
		if cap(buf) > 4*maxBatchBytes {
			buf = nil
		}
	}
}
