package ctf

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/uebpf/uebpf/internal/clock"
	"github.com/uebpf/uebpf/internal/safefs"
	"github.com/uebpf/uebpf/tracepoint"
)

// File names in a trace directory.
const (
	MetadataFile = "metadata"
	StreamFile   = "stream_0"
)

// Option configures a Writer.
type Option func(*config)

type config struct {
	packetSize int
	hostname   string
	procname   string
	vpid       int64
	clockOff   int64
	// flushInterval is for Record.
	flushInterval time.Duration
}

// PacketSize sets the size of a packet in bytes (DefaultPacketSize unless
// set): the memory the writer holds, and the largest event it can write.
// It is rounded up to a multiple of 8, and is at least MinPacketSize.
func PacketSize(n int) Option { return func(c *config) { c.packetSize = n } }

// Hostname sets the trace's env.hostname (os.Hostname unless set).
func Hostname(h string) Option { return func(c *config) { c.hostname = h } }

// Procname sets the trace's env.procname (the process's name unless set).
func Procname(p string) Option { return func(c *config) { c.procname = p } }

// Vpid sets the trace's env.vpid (the process's pid unless set): a trace
// written by a tool for another process is that process's.
func Vpid(pid int) Option { return func(c *config) { c.vpid = int64(pid) } }

// ClockOffset sets the clock's offset: CLOCK_REALTIME minus
// CLOCK_MONOTONIC in nanoseconds on the machine whose events the trace
// holds (this machine's unless set), which readers add to show wall time.
func ClockOffset(ns int64) Option { return func(c *config) { c.clockOff = ns } }

// Writer writes tracepoint records into a CTF trace directory. It is not
// safe for concurrent use.
type Writer struct {
	dir string
	// out is the trace directory, open and checked: the files are made
	// in it (nil for tests that write in memory).
	out  *safefs.Dir
	cfg  config
	info traceInfo
	// stream is the stream file; meta replaces the metadata file (tests
	// write both in memory).
	stream io.WriteCloser
	meta   func([]byte) error
	packet []byte // the packet being filled, PacketSize bytes
	pos    int    // where the next event goes in packet
	events int    // in packet

	begin, end uint64 // timestamps of the packet's first and last event
	last       uint64 // timestamp of the last event written: never goes back
	seq        uint64
	discarded  uint64
	// flushedDiscarded is discarded as the last packet written says.
	flushedDiscarded uint64

	classes []*eventClass
	byPoint map[*tracepoint.Point]*eventClass
	byName  map[string]*eventClass // for WriteEvent

	err    error // sticky: a failed write leaves the stream unreadable past it
	closed bool
}

// ErrClosed reports a write to a closed Writer.
var ErrClosed = errors.New("ctf: writer closed")

// Create makes the trace directory dir (and its parents) and starts a
// trace in it: the metadata file and one stream file, which must not
// exist. An existing dir must be the caller's and writable by no one
// else, and not a symbolic link: a trace in a directory another user
// could write (as /tmp) would let them plant links the files are written
// through. The files are made through the directory's descriptor, held
// until Close, never by following a link.
func Create(dir string, opts ...Option) (*Writer, error) {
	w, err := newWriter(dir, opts)
	if err != nil {
		return nil, err
	}
	d, err := safefs.MakeDir(dir, 0o755)
	if err != nil {
		return nil, fmt.Errorf("ctf: trace %w", err)
	}
	f, err := d.Create(StreamFile, 0o644)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("ctf: trace %s: %w", dir, err)
	}
	w.out, w.stream = d, f
	w.meta = func(b []byte) error { return d.WriteFile(MetadataFile, b, 0o644) }
	if err := w.writeMetadata(); err != nil {
		f.Close()
		d.Close()
		return nil, err
	}
	return w, nil
}

// newWriter returns a writer for trace dir with nowhere to write yet.
func newWriter(dir string, opts []Option) (*Writer, error) {
	cfg := config{packetSize: DefaultPacketSize}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.packetSize < MinPacketSize {
		cfg.packetSize = MinPacketSize
	}
	cfg.packetSize = align(cfg.packetSize, 8)
	if cfg.hostname == "" {
		cfg.hostname, _ = os.Hostname()
	}
	if cfg.procname == "" {
		cfg.procname = processName()
	}
	if cfg.vpid == 0 {
		cfg.vpid = int64(os.Getpid())
	}
	if cfg.clockOff == 0 {
		cfg.clockOff = realtimeOffset()
	}
	w := &Writer{
		dir: dir,
		cfg: cfg,
		info: traceInfo{
			hostname:  cfg.hostname,
			procname:  cfg.procname,
			vpid:      cfg.vpid,
			clockOff:  cfg.clockOff,
			clockDesc: "Monotonic Clock",
		},
		packet:  make([]byte, cfg.packetSize),
		pos:     packetHeaderSize,
		byPoint: map[*tracepoint.Point]*eventClass{},
		byName:  map[string]*eventClass{},
	}
	if _, err := rand.Read(w.info.uuid[:]); err != nil {
		return nil, fmt.Errorf("ctf: trace %s: uuid: %w", dir, err)
	}
	w.info.uuid[6] = w.info.uuid[6]&0x0f | 0x40 // version 4, random
	w.info.uuid[8] = w.info.uuid[8]&0x3f | 0x80 // RFC 4122 variant
	return w, nil
}

// Write adds the event rec to the trace, declaring its tracepoint in the
// metadata the first time. Events get rec.Context.TimestampNs, or the
// previous event's timestamp if that is later: a stream's events must be
// in time order, and firing goroutines can reach a session's ring in
// another order than they read the clock.
func (w *Writer) Write(rec tracepoint.Record) error {
	if rec.Tracepoint == nil {
		return fmt.Errorf("ctf: trace %s: record of no tracepoint", w.dir)
	}
	c, err := w.class(rec.Tracepoint)
	if err != nil {
		return err
	}
	if len(rec.Payload) < c.payloadSize {
		return fmt.Errorf("ctf: trace %s: event %s: %d-byte payload, want %d", w.dir, c.name, len(rec.Payload), c.payloadSize)
	}
	return w.write(c, &rec.Context, rec.Payload)
}

// WriteEvent adds an event of the tracepoint info describes, with context
// ctx and payload bytes laid out as info says: for a tool that writes the
// events of another process (which it knows by their description, not by
// a *tracepoint.Point), as Write does for this one's. The first event of
// a name declares it; later events of that name must have the same info.
func (w *Writer) WriteEvent(info tracepoint.Info, ctx *tracepoint.Context, payload []byte) error {
	c := w.byName[info.FullName()]
	if c == nil {
		if err := w.usable(); err != nil {
			return err
		}
		var err error
		if c, err = w.declare(info); err != nil {
			return err
		}
		w.byName[info.FullName()] = c
	}
	if len(payload) < c.payloadSize {
		return fmt.Errorf("ctf: trace %s: event %s: %d-byte payload, want %d", w.dir, c.name, len(payload), c.payloadSize)
	}
	return w.write(c, ctx, payload)
}

// class returns the event class of p, declaring it on first use.
func (w *Writer) class(p *tracepoint.Point) (*eventClass, error) {
	if c := w.byPoint[p]; c != nil {
		return c, nil
	}
	if err := w.usable(); err != nil {
		return nil, err
	}
	c, err := w.declare(p.Info())
	if err != nil {
		return nil, err
	}
	w.byPoint[p] = c
	return c, nil
}

// declare adds an event class for info and rewrites the metadata, so that
// packets written from now on, which may hold its events, are readable.
func (w *Writer) declare(info tracepoint.Info) (*eventClass, error) {
	c, err := newEventClass(uint32(len(w.classes)), info)
	if err != nil {
		return nil, fmt.Errorf("ctf: trace %s: %w", w.dir, err)
	}
	if c.size > len(w.packet)-packetHeaderSize {
		return nil, fmt.Errorf("ctf: trace %s: event %s: %d bytes do not fit in a %d-byte packet (see PacketSize): %w",
			w.dir, c.name, c.size, len(w.packet), ErrLayout)
	}
	w.classes = append(w.classes, c)
	if err := w.writeMetadata(); err != nil {
		w.classes = w.classes[:len(w.classes)-1]
		return nil, err
	}
	return c, nil
}

// write adds an event of class c to the packet, flushing it first when
// the event does not fit.
func (w *Writer) write(c *eventClass, ctx *tracepoint.Context, payload []byte) error {
	if err := w.usable(); err != nil {
		return err
	}
	at := align(w.pos, eventAlign)
	if at+c.size > len(w.packet) {
		if err := w.flush(true); err != nil {
			return err
		}
		at = w.pos
	}
	ts := max(ctx.TimestampNs, w.last)
	c.encode(w.packet[at:at+c.size], ts, ctx, payload)
	if w.events == 0 {
		w.begin = ts
	}
	w.end, w.last = ts, ts
	w.events++
	w.pos = at + c.size
	return nil
}

// AddDiscarded counts n events lost before they reached the writer (a
// session's Stats().Dropped): readers report them between the packet
// written last and the one being filled.
func (w *Writer) AddDiscarded(n uint64) { w.discarded += n }

// Flush writes the packet being filled, if it holds events, trimmed to
// its content: the trace on disk then holds every event written so far.
// A writer flushes by itself as packets fill.
func (w *Writer) Flush() error {
	if err := w.usable(); err != nil {
		return err
	}
	return w.flush(false)
}

// flush writes the packet out: full-size (padded with zeros) when full,
// else trimmed to its content, and starts the next one.
func (w *Writer) flush(full bool) error {
	if w.events == 0 && w.discarded == w.flushedDiscarded {
		return nil
	}
	size := w.pos
	if full {
		size = len(w.packet)
	}
	h := packetHeader{
		Magic:          Magic,
		UUID:           w.info.uuid,
		StreamID:       w.info.streamID,
		TimestampBegin: w.begin,
		TimestampEnd:   w.end,
		ContentSize:    uint64(w.pos) * 8,
		PacketSize:     uint64(size) * 8,
		SeqNum:         w.seq,
		Discarded:      w.discarded,
	}
	if w.events == 0 { // a packet only to report discarded events
		h.TimestampBegin, h.TimestampEnd = w.last, w.last
	}
	if w.seq == 0 && w.discarded > 0 {
		// Readers count the events lost before a packet from the
		// previous packet's count: with none, they say only that
		// events may have been lost. An empty packet first, which lost
		// none, makes the count exact.
		var empty [packetHeaderSize]byte
		e := h
		e.TimestampEnd = e.TimestampBegin
		e.ContentSize, e.PacketSize, e.Discarded = packetHeaderSize*8, packetHeaderSize*8, 0
		e.put(empty[:])
		if err := w.writePacket(empty[:]); err != nil {
			return err
		}
		h.SeqNum = w.seq
	}
	h.put(w.packet)
	if err := w.writePacket(w.packet[:size]); err != nil {
		return err
	}
	w.flushedDiscarded = w.discarded
	clear(w.packet[:w.pos])
	w.pos, w.events = packetHeaderSize, 0
	return nil
}

// writePacket writes packet number w.seq to the stream file. A failed
// write leaves the file unreadable past it: the writer stops.
func (w *Writer) writePacket(b []byte) error {
	if _, err := w.stream.Write(b); err != nil {
		w.err = fmt.Errorf("ctf: trace %s: packet %d: %w", w.dir, w.seq, err)
		return w.err
	}
	w.seq++
	return nil
}

// usable returns the writer's error, if a write failed or it is closed.
func (w *Writer) usable() error {
	if w.closed {
		return fmt.Errorf("ctf: trace %s: %w", w.dir, ErrClosed)
	}
	return w.err
}

// Close writes the last packet, trimmed to its content, and the final
// metadata, and closes the stream file. The trace is then complete.
// Close is idempotent.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	err := w.err
	if err == nil {
		err = w.flush(false)
	}
	if err == nil {
		err = w.writeMetadata()
	}
	w.closed = true
	if cerr := w.stream.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("ctf: trace %s: %w", w.dir, cerr)
	}
	if w.out != nil {
		w.out.Close()
	}
	w.packet = nil
	return err
}

// Dir returns the trace's directory.
func (w *Writer) Dir() string { return w.dir }

// writeMetadata replaces the metadata with one describing every class
// declared so far.
func (w *Writer) writeMetadata() error {
	if err := w.meta(metadata(&w.info, w.classes)); err != nil {
		return fmt.Errorf("ctf: trace %s: metadata: %w", w.dir, err)
	}
	return nil
}

// realtimeOffset returns CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds,
// the clock's offset from the Unix epoch: read between two monotonic
// readings, the closest pair of a few tries.
func realtimeOffset() int64 {
	var off int64
	best := int64(-1)
	for range 5 {
		m0 := clock.Now()
		r := time.Now().UnixNano()
		m1 := clock.Now()
		if d := m1 - m0; best < 0 || d < best {
			best, off = d, r-(m0+(m1-m0)/2)
		}
	}
	return off
}

// processName is the name of the process, as in its records' context.
func processName() string {
	var ctx tracepoint.Context
	if b, err := os.ReadFile("/proc/self/comm"); err == nil {
		copy(ctx.Procname[:15], b)
	} else {
		copy(ctx.Procname[:15], filepath.Base(os.Args[0]))
	}
	n := 0
	for n < len(ctx.Procname) && ctx.Procname[n] != 0 && ctx.Procname[n] != '\n' {
		n++
	}
	return string(ctx.Procname[:n])
}
