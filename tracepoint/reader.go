package tracepoint

import (
	"fmt"
	"os"
	"time"

	"github.com/uebpf/uebpf/internal/channel"
)

// ChannelReader reads the records of a session's channel: a session of
// another process, from the files its control socket handed over
// (MapChannel), or what a file-backed session's file holds after its
// process died (ParseChannel). It trusts nothing it reads: a record that
// does not match its layout is skipped and counted, never decoded. It is
// not safe for concurrent use.
type ChannelReader struct {
	r        *channel.Reader
	hdr      channel.Header
	dec      Decoder
	metaRead uint64
	ev       Event
}

// MapChannel maps the files of a session's channel (see
// control.Client.Channel): the data read-only, the consumer positions
// writable. Reading starts where the previous consumer stopped.
func MapChannel(data, positions *os.File) (*ChannelReader, error) {
	r, err := channel.Map(data, positions)
	if err != nil {
		return nil, fmt.Errorf("tracepoint: %w", err)
	}
	return newChannelReader(r)
}

// ParseChannel reads a copy of a file-backed session's file: the records
// each ring holds, from the oldest the producer kept to the newest it
// committed.
func ParseChannel(b []byte) (*ChannelReader, error) {
	r, err := channel.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("tracepoint: %w", err)
	}
	return newChannelReader(r)
}

func newChannelReader(r *channel.Reader) (*ChannelReader, error) {
	cr := &ChannelReader{r: r, hdr: r.Header()}
	if err := cr.refresh(); err != nil {
		r.Close()
		return nil, err
	}
	return cr, nil
}

// refresh reads the layouts the producer added since the last look.
func (cr *ChannelReader) refresh() error {
	b, err := cr.r.Meta(cr.metaRead)
	if err != nil {
		return fmt.Errorf("tracepoint: layouts: %w", err)
	}
	cr.metaRead += uint64(len(b))
	return cr.dec.AddLayouts(b)
}

// Meta returns the channel's metadata bytes from offset from: the layouts
// a Decoder reads (for a tool that hands records on to another process).
func (cr *ChannelReader) Meta(from uint64) ([]byte, error) {
	b, err := cr.r.Meta(from)
	if err != nil {
		return nil, fmt.Errorf("tracepoint: layouts: %w", err)
	}
	return b, nil
}

// Decoder decodes the records of one channel: its layouts, added as the
// channel's metadata grows, and each record's tag and body. A
// ChannelReader has one; a tool that receives a channel's records from
// elsewhere (a remote consumer) keeps its own. Nothing it is given is
// trusted.
type Decoder struct {
	layouts []*Info
	pending []byte // an entry not all there yet
	bad     uint64
}

// AddLayouts reads layout entries: the channel's metadata, in order, from
// where the last call stopped. An entry cut at the end of b waits for the
// rest.
func (d *Decoder) AddLayouts(b []byte) error {
	if len(d.pending) > 0 {
		b = append(d.pending, b...)
	}
	layouts, n, err := parseLayouts(b, d.layouts)
	d.layouts = layouts
	d.pending = append(d.pending[:0], b[n:]...)
	if err != nil {
		return fmt.Errorf("tracepoint: channel layouts: %w", err)
	}
	return nil
}

// Decode decodes a record; an error (ErrRecord) means it does not match
// its layout, and is counted (Bad).
func (d *Decoder) Decode(tag uint32, body []byte, ev *Event) error {
	if err := decodeRecord(d.layouts, tag, body, ev); err != nil {
		d.bad++
		return err
	}
	return nil
}

// Known reports whether a record's tag names a layout already added.
func (d *Decoder) Known(tag uint32) bool { return int(tag&(maxLayouts-1)) < len(d.layouts) }

// Layouts returns the layouts added so far, by index.
func (d *Decoder) Layouts() []*Info { return d.layouts }

// Bad counts the records Decode refused.
func (d *Decoder) Bad() uint64 { return d.bad }

// Process describes the producing process as the channel says: its pid,
// name, and CLOCK_REALTIME - CLOCK_MONOTONIC there in ns (add it to a
// timestamp for wall time).
func (cr *ChannelReader) Process() (pid int, name string, clockOffset int64) {
	return int(cr.hdr.PID), cr.hdr.Procname, cr.hdr.ClockOffset
}

// Mode is the channel's mode.
func (cr *ChannelReader) Mode() Mode { return Mode(cr.hdr.Mode) }

// Shards returns the number of rings.
func (cr *ChannelReader) Shards() int { return cr.r.Shards() }

// Layouts returns the layouts of the tracepoints the channel's records
// come from, by index: an Event's Info is one of them.
func (cr *ChannelReader) Layouts() []*Info { return cr.dec.Layouts() }

// Read hands fn the records of ring shard, up to max (0: no bound), each
// decoded; the Event and its byte slices are valid only during the call.
// It returns how many it handed out.
func (cr *ChannelReader) Read(shard, max int, fn func(*Event)) (int, error) {
	n := 0
	refreshed := false
	var rerr error
	_, err := cr.r.Read(shard, max, func(tag uint32, body []byte) {
		if !cr.dec.Known(tag) && !refreshed {
			refreshed = true
			rerr = cr.refresh()
		}
		if cr.dec.Decode(tag, body, &cr.ev) != nil {
			return
		}
		cr.ev.Shard = shard
		fn(&cr.ev)
		n++
	})
	if err == nil {
		err = rerr
	}
	return n, err
}

// ReadAll reads every ring once: what each holds now, up to max records
// each (0: no bound).
func (cr *ChannelReader) ReadAll(max int, fn func(*Event)) (int, error) {
	total := 0
	for i := range cr.r.Shards() {
		n, err := cr.Read(i, max, fn)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Pending reports whether some ring holds records not read yet.
func (cr *ChannelReader) Pending() bool { return cr.r.Pending() }

// Closed reports whether the producer closed the channel (the session was
// closed): once nothing is pending, nothing more will come.
func (cr *ChannelReader) Closed() bool { return cr.r.Closed() }

// Wait waits up to d for records (it polls: the producer is in another
// process).
func (cr *ChannelReader) Wait(d time.Duration) { cr.r.Wait(d) }

// ChannelStats are a channel's counters: what the producer published,
// and what the reader could not read.
type ChannelStats struct {
	// Records were written into the rings; Dropped found no room
	// (discard and block modes); Overwritten made room for newer ones
	// (overwrite mode).
	Records, Dropped, Overwritten uint64
	// Lost counts bytes overwritten before the reader read them; Skipped
	// bytes of records that did not hold together, and Bad records whose
	// body did not match their layout.
	Lost, Skipped, Bad uint64
}

// Stats returns the channel's counters, summed over its rings.
func (cr *ChannelReader) Stats() ChannelStats {
	st := cr.r.Stats()
	rs := cr.r.ReaderStats()
	return ChannelStats{Records: st.Records, Dropped: st.Dropped, Overwritten: st.Overwritten, Lost: rs.Lost, Skipped: rs.Skipped, Bad: cr.dec.Bad()}
}

// ShardStats returns the counters ring i's producer published.
func (cr *ChannelReader) ShardStats(i int) ChannelStats {
	st := cr.r.ShardStats(i)
	return ChannelStats{Records: st.Records, Dropped: st.Dropped, Overwritten: st.Overwritten}
}

// Close releases the reader's mappings.
func (cr *ChannelReader) Close() error { return cr.r.Close() }

// Mode is what a session does with an event its channel has no room for,
// as LTTng's channels.
type Mode uint8

const (
	// Discard drops the new event and counts it (the default).
	Discard = Mode(channel.Discard)
	// Overwrite drops the oldest events to make room: a flight recorder,
	// whose newest events a snapshot writes out.
	Overwrite = Mode(channel.Overwrite)
	// Block makes the firing goroutine wait for the consumer, up to
	// SessionOptions.BlockTimeout, then drop.
	Block = Mode(channel.Block)
)

func (m Mode) String() string { return channel.Mode(m).String() }

// ParseMode reads a mode as String writes it.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Discard, Overwrite, Block} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("mode %q: want discard, overwrite or block", s)
}
