package control

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/uebpf/uebpf/tracepoint"
	"github.com/uebpf/uebpf/tracepoint/ctf"
)

// Channel is a session's channel as this client reads it: on the same
// machine, the channel's files mapped here (the data read-only, the
// consumer positions writable), handed over on the control socket; over
// a stdio transport (ssh), the records the far end reads from them and
// relays. It is a ctf.Source. A session has one consumer at a time; a
// snapshot (Client.Snapshot) reads beside it. Not safe for concurrent
// use.
type Channel struct {
	c        *Client
	session  uint64
	id       uint64 // the request that opened it
	info     ChannelInfo
	snapshot bool
	local    *tracepoint.ChannelReader
	remote   *remoteChannel
	closed   bool
}

// ErrNoChannel reports a channel that could not be opened here: the
// server's descriptors did not arrive (a transport that carries no
// descriptors, without a relay at its far end).
var ErrNoChannel = errors.New("no channel descriptors received")

// Channel opens the channel of a session as its consumer: reading takes
// its records, and the session's next consumer starts where Close left
// it. A session has one consumer at a time (ErrBusy).
func (c *Client) Channel(session uint64) (*Channel, error) { return c.openChannel(session, false) }

// Snapshot opens the channel of a session to read what its rings hold now
// (an overwrite-mode session's newest events: a flight recorder's
// snapshot), without taking its records from its consumer.
func (c *Client) Snapshot(session uint64) (*Channel, error) { return c.openChannel(session, true) }

func (c *Client) openChannel(session uint64, snapshot bool) (*Channel, error) {
	op := OpChannel
	if snapshot {
		op = OpSnapshot
	}
	ch := &Channel{c: c, session: session, snapshot: snapshot}
	resp, fds, err := c.callFDs(&Request{Op: op, Session: session}, func(id uint64, remote bool) {
		ch.id = id
		if remote {
			ch.remote = c.addRemote(id)
		}
	})
	defer closeFiles(fds)
	if err != nil {
		if ch.remote != nil {
			c.dropRemote(ch.id)
		}
		return nil, err
	}
	if resp.Channel == nil {
		return nil, fmt.Errorf("control: %s: a reply without a channel", op)
	}
	ch.info = *resp.Channel
	if resp.Channel.Remote {
		if ch.remote == nil {
			return nil, fmt.Errorf("control: %s: a relayed channel nobody asked for", op)
		}
		return ch, nil
	}
	if ch.remote != nil {
		c.dropRemote(ch.id)
		ch.remote = nil
	}
	want := 2
	if snapshot {
		want = 1
	}
	if len(fds) != want {
		ch.release()
		return nil, fmt.Errorf("control: %s: session %d: %d descriptors, want %d: %w", op, session, len(fds), want, ErrNoChannel)
	}
	var pos *os.File
	if !snapshot {
		pos = fds[1]
	}
	if ch.local, err = tracepoint.MapChannel(fds[0], pos); err != nil {
		ch.release()
		return nil, fmt.Errorf("control: %s: session %d: %w", op, session, err)
	}
	return ch, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// Session returns the id of the channel's session.
func (ch *Channel) Session() uint64 { return ch.session }

// Info describes the channel as the server did.
func (ch *Channel) Info() ChannelInfo { return ch.info }

// Process is the application's pid, name and clock offset
// (CLOCK_REALTIME - CLOCK_MONOTONIC there, in ns).
func (ch *Channel) Process() (pid int, name string, clockOffset int64) {
	if ch.remote != nil {
		return ch.remote.pid, ch.remote.name, ch.remote.clockOffset
	}
	return ch.local.Process()
}

// Shards returns the number of rings.
func (ch *Channel) Shards() int {
	if ch.remote != nil {
		return ch.remote.shards
	}
	return ch.local.Shards()
}

// Read hands fn up to max records of ring shard (0: no bound), decoded;
// the Event is valid only during the call.
func (ch *Channel) Read(shard, max int, fn func(*tracepoint.Event)) (int, error) {
	if ch.closed {
		return 0, fmt.Errorf("control: channel of session %d: %w", ch.session, os.ErrClosed)
	}
	if ch.remote != nil {
		return ch.remote.read(shard, max, fn)
	}
	return ch.local.Read(shard, max, fn)
}

// ShardStats returns ring shard's counters.
func (ch *Channel) ShardStats(shard int) tracepoint.ChannelStats {
	if ch.remote != nil {
		return ch.remote.shardStats(shard)
	}
	return ch.local.ShardStats(shard)
}

// Stats returns the channel's counters.
func (ch *Channel) Stats() tracepoint.ChannelStats {
	if ch.remote != nil {
		return ch.remote.stats()
	}
	return ch.local.Stats()
}

// Pending reports records not read yet.
func (ch *Channel) Pending() bool {
	if ch.remote != nil {
		return ch.remote.pending()
	}
	return ch.local.Pending()
}

// Closed reports a channel that will get no more records: its session was
// closed, or (relayed) the far end has sent all it had.
func (ch *Channel) Closed() bool {
	if ch.remote != nil {
		return ch.remote.ended()
	}
	return ch.local.Closed()
}

// Wait waits up to d for records.
func (ch *Channel) Wait(d time.Duration) {
	if ch.remote != nil {
		ch.remote.wait(d)
		return
	}
	ch.local.Wait(d)
}

// Close gives the channel back: the session keeps recording, and its
// next consumer starts after the records this one read.
func (ch *Channel) Close() error {
	if ch.closed {
		return nil
	}
	ch.closed = true
	if ch.local != nil {
		ch.local.Close()
	}
	if ch.remote != nil {
		ch.remote.stop()
	}
	return ch.release()
}

// release tells the server (or the relay) that the channel is given back.
func (ch *Channel) release() error {
	if ch.snapshot && ch.remote == nil {
		return nil // a snapshot holds nothing in the server
	}
	_, err := ch.c.call(&Request{Op: OpRelease, Session: ch.session})
	if ch.remote != nil {
		ch.c.dropRemote(ch.id)
	}
	if errors.Is(err, ErrClientClosed) || errors.Is(err, ErrNotFound) {
		return nil // the application or the session is gone: nothing held
	}
	return err
}

var _ ctf.Source = (*Channel)(nil)

// Record writes a session's records into a new CTF trace in dir (package
// tracepoint/ctf, which babeltrace2 and Trace Compass read), as "uebpf
// trace record" does: one stream per ring, the payloads as the
// application wrote them. It reads until ctx is done (then for
// ctf.StopBudget at most), the session is disabled, or the application
// is gone: then it reads everything the channel still holds, exits or
// crash alike, and closes the trace.
func (c *Client) Record(ctx context.Context, session uint64, dir string, opts ...ctf.Option) (ctf.RecordStats, error) {
	ch, err := c.Channel(session)
	if err != nil {
		return ctf.RecordStats{}, err
	}
	defer ch.Close()
	ctx, cancel := c.untilGone(ctx)
	defer cancel()
	return ctf.RecordChannel(ctx, ch, dir, opts...)
}

// SnapshotTrace writes what a session's rings hold now into a new CTF
// trace in dir (LTTng's "snapshot record"): for an overwrite-mode
// session, its newest events.
func (c *Client) SnapshotTrace(session uint64, dir string, opts ...ctf.Option) (ctf.RecordStats, error) {
	ch, err := c.Snapshot(session)
	if err != nil {
		return ctf.RecordStats{}, err
	}
	defer ch.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ctf.ErrGone) // read all there is now, then stop
	return ctf.RecordChannel(ctx, ch, dir, opts...)
}

// untilGone returns ctx, canceled with cause ctf.ErrGone when the
// connection to the application ends first.
func (c *Client) untilGone(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(ctx, func() {})
	go func() {
		select {
		case <-c.done:
			cancel(ctf.ErrGone)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// Event is a recorded event, decoded, as Stream returns it and "uebpf
// trace stream --json" prints it.
type Event struct {
	// Session is the session that recorded it.
	Session    uint64
	Tracepoint string
	// TimestampNs is CLOCK_MONOTONIC on the application's machine when it
	// was recorded; Time is the wall time there, in ns since the Unix
	// epoch (JSON "ts").
	TimestampNs uint64
	Time        int64
	Vpid        int64
	Procname    string
	// Has says which of Vtid and Goid were collected: the others are
	// absent (and 0 here).
	Has  tracepoint.Collected
	Vtid int64
	Goid uint64
	// Fields are the payload's, in declaration order.
	Fields Fields
}

// MarshalJSON writes the event as "trace stream --json" does: the context
// fields not collected are absent.
func (e Event) MarshalJSON() ([]byte, error) {
	b := []byte(`{"session":`)
	b = fmt.Appendf(b, "%d", e.Session)
	b = append(b, `,"tp":`...)
	b = appendString(b, e.Tracepoint)
	b = fmt.Appendf(b, `,"ts":%d,"vpid":%d,"procname":`, e.Time, e.Vpid)
	b = appendString(b, e.Procname)
	if e.Has&tracepoint.HasVtid != 0 {
		b = fmt.Appendf(b, `,"vtid":%d`, e.Vtid)
	}
	if e.Has&tracepoint.HasGoid != 0 {
		b = fmt.Appendf(b, `,"goid":%d`, e.Goid)
	}
	fs, err := e.Fields.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(append(b, `,"fields":`...), fs...)
	return append(b, '}'), nil
}

// UnmarshalJSON reads an event as MarshalJSON writes it (a line of "trace
// stream --json"). TimestampNs is not in JSON: it stays 0.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j struct {
		Session    uint64  `json:"session"`
		Tracepoint string  `json:"tp"`
		Time       int64   `json:"ts"`
		Vpid       int64   `json:"vpid"`
		Procname   string  `json:"procname"`
		Vtid       *int64  `json:"vtid"`
		Goid       *uint64 `json:"goid"`
		Fields     Fields  `json:"fields"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Event{Session: j.Session, Tracepoint: j.Tracepoint, Time: j.Time, Vpid: j.Vpid, Procname: j.Procname, Fields: j.Fields}
	if j.Vtid != nil {
		e.Has, e.Vtid = e.Has|tracepoint.HasVtid, *j.Vtid
	}
	if j.Goid != nil {
		e.Has, e.Goid = e.Has|tracepoint.HasGoid, *j.Goid
	}
	return nil
}

// newEvent decodes ev of the channel's origin o into an Event.
func newEvent(o *origin, ev *tracepoint.Event) Event {
	e := Event{
		Session: o.session, Tracepoint: ev.Info.FullName(), TimestampNs: ev.TimestampNs,
		Time: int64(ev.TimestampNs) + o.clockOffset, Vpid: o.pid, Procname: o.procname,
		Has: ev.Has, Vtid: ev.Vtid, Goid: ev.Goid, Fields: make(Fields, len(ev.Info.Fields)),
	}
	for i, f := range ev.Info.Fields {
		e.Fields[i] = FieldValue{Name: f.Name, Value: tracepoint.Value(f, ev.Payload)}
	}
	return e
}

// Stream reads a session's events one at a time, decoded: a channel's
// consumer for Go code that wants values, not bytes.
type Stream struct {
	ch    *Channel
	o     origin
	batch []Event
	cut   context.Context
	stop  context.CancelFunc
}

// Stream opens a session's channel (Client.Channel) and returns its
// events one at a time.
func (c *Client) Stream(session uint64) (*Stream, error) {
	ch, err := c.Channel(session)
	if err != nil {
		return nil, err
	}
	pid, name, off := ch.Process()
	s := &Stream{ch: ch, o: origin{session: session, pid: int64(pid), procname: name, clockOffset: off}}
	s.cut, s.stop = c.untilGone(context.Background())
	return s, nil
}

// Next returns the next event, in time order within what the rings held
// when it last looked. After the session is disabled, the application is
// gone or Stop, it returns what is left, then io.EOF.
func (s *Stream) Next(ctx context.Context) (Event, error) {
	for pause := time.Millisecond; len(s.batch) == 0; {
		if s.ch.closed {
			return Event{}, io.EOF
		}
		if _, err := s.fill(); err != nil {
			return Event{}, err
		}
		if len(s.batch) > 0 {
			break
		}
		if (s.ch.Closed() || s.cut.Err() != nil) && !s.ch.Pending() {
			return Event{}, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return Event{}, fmt.Errorf("control: stream: %w", err)
		}
		s.ch.Wait(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
	e := s.batch[0]
	s.batch = s.batch[1:]
	return e, nil
}

// fill reads what the rings hold, up to a batch from each, in time order.
func (s *Stream) fill() (int, error) {
	s.batch = s.batch[:0]
	for i := range s.ch.Shards() {
		if _, err := s.ch.Read(i, 1024, func(ev *tracepoint.Event) { s.batch = append(s.batch, newEvent(&s.o, ev)) }); err != nil {
			return 0, err
		}
	}
	slices.SortStableFunc(s.batch, func(a, b Event) int { return cmp.Compare(a.TimestampNs, b.TimestampNs) })
	return len(s.batch), nil
}

// Stats are the channel's counters.
func (s *Stream) Stats() tracepoint.ChannelStats { return s.ch.Stats() }

// Stop gives the channel back; Next returns io.EOF from now on. The
// session keeps recording.
func (s *Stream) Stop() error {
	s.stop()
	return s.ch.Close()
}
