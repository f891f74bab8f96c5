package ctf

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/uebpf/uebpf/internal/clock"
	"github.com/uebpf/uebpf/internal/safefs"
	"github.com/uebpf/uebpf/tracepoint"
)

// File names in a trace directory: the metadata, and one stream file per
// ring of the session the events come from, StreamFile for the first
// (the only one of a Writer given only Records).
const (
	MetadataFile = "metadata"
	StreamFile   = "stream_0"
	streamPrefix = "stream_"
)

// MaxStreams bounds the streams of a trace (one per ring of a session).
const MaxStreams = 1024

// Option configures a Writer.
type Option func(*config)

type config struct {
	packetSize int
	hostname   string
	procname   string
	vpid       int64
	clockOff   int64
	// flushInterval and the rotation are for Record.
	flushInterval time.Duration
	rotateSize    int64
	rotateEvery   time.Duration
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
	// create makes stream file i, meta replaces the metadata file (tests
	// write both in memory).
	create  func(i int) (io.WriteCloser, error)
	meta    func([]byte) error
	streams []*stream
	written int64 // bytes in the stream files

	classes []*eventClass
	byPoint map[*tracepoint.Point]*[4]*eventClass // for Write, by context fields
	byTag   []*eventClass                         // for WriteEvent, by layout index and context fields

	err    error // sticky: a failed write leaves the stream unreadable past it
	closed bool
}

// stream is one stream file and the packet being filled for it.
type stream struct {
	f      io.WriteCloser
	packet []byte // the packet being filled, PacketSize bytes
	pos    int    // where the next event goes in packet
	events int    // in packet

	begin, end uint64 // timestamps of the packet's first and last event
	last       uint64 // timestamp of the last event written: never goes back
	seq        uint64
	discarded  uint64
	// flushedDiscarded is discarded as the last packet written says.
	flushedDiscarded uint64
}

// ErrClosed reports a write to a closed Writer.
var ErrClosed = errors.New("ctf: writer closed")

// Create makes the trace directory dir (and its parents) and starts a
// trace in it: the metadata file and the first stream file, which must
// not exist; the stream files of other rings are made when their first
// event comes. An existing dir must be the caller's and writable by no
// one else, and not a symbolic link: a trace in a directory another user
// could write (as /tmp) would let them plant links the files are written
// through. The files are made through the directory's descriptor, held
// until Close, never by following a link.
func Create(dir string, opts ...Option) (*Writer, error) {
	d, err := safefs.MakeDir(dir, 0o755)
	if err != nil {
		return nil, fmt.Errorf("ctf: trace %w", err)
	}
	w, err := createIn(d, dir, opts)
	if err != nil {
		d.Close()
		return nil, err
	}
	return w, nil
}

// createIn starts a trace in the open directory d (at path dir).
func createIn(d *safefs.Dir, dir string, opts []Option) (*Writer, error) {
	w, err := newWriter(dir, opts)
	if err != nil {
		return nil, err
	}
	w.out = d
	w.create = func(i int) (io.WriteCloser, error) { return d.Create(streamPrefix+strconv.Itoa(i), 0o644) }
	w.meta = func(b []byte) error { return d.WriteFile(MetadataFile, b, 0o644) }
	if _, err := w.stream(0); err != nil {
		return nil, err
	}
	if err := w.writeMetadata(); err != nil {
		w.streams[0].f.Close()
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
		cfg.clockOff = clock.RealtimeOffset()
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
		byPoint: map[*tracepoint.Point]*[4]*eventClass{},
	}
	if _, err := rand.Read(w.info.uuid[:]); err != nil {
		return nil, fmt.Errorf("ctf: trace %s: uuid: %w", dir, err)
	}
	w.info.uuid[6] = w.info.uuid[6]&0x0f | 0x40 // version 4, random
	w.info.uuid[8] = w.info.uuid[8]&0x3f | 0x80 // RFC 4122 variant
	return w, nil
}

// stream returns stream i, making its file on first use.
func (w *Writer) stream(i int) (*stream, error) {
	if i < len(w.streams) && w.streams[i] != nil {
		return w.streams[i], nil
	}
	if i < 0 || i >= MaxStreams {
		return nil, fmt.Errorf("ctf: trace %s: stream %d (at most %d)", w.dir, i, MaxStreams)
	}
	f, err := w.create(i)
	if err != nil {
		return nil, fmt.Errorf("ctf: trace %s: %w", w.dir, err)
	}
	for len(w.streams) <= i {
		w.streams = append(w.streams, nil)
	}
	s := &stream{f: f, packet: make([]byte, w.cfg.packetSize), pos: packetHeaderSize}
	w.streams[i] = s
	return s, nil
}

// Write adds the event rec to the trace's first stream, declaring its
// tracepoint in the metadata the first time. Events get
// rec.Context.TimestampNs, or the previous event's timestamp if that is
// later: a stream's events must be in time order, and firing goroutines
// can reach a session's ring in another order than they read the clock.
func (w *Writer) Write(rec tracepoint.Record) error {
	if rec.Tracepoint == nil {
		return fmt.Errorf("ctf: trace %s: record of no tracepoint", w.dir)
	}
	has := rec.Has & (tracepoint.HasVtid | tracepoint.HasGoid)
	cs := w.byPoint[rec.Tracepoint]
	if cs == nil || cs[has] == nil {
		c, err := w.declare(rec.Tracepoint.Info(), has)
		if err != nil {
			return err
		}
		if cs == nil {
			cs = new([4]*eventClass)
			w.byPoint[rec.Tracepoint] = cs
		}
		cs[has] = c
	}
	c := cs[has]
	if len(rec.Payload) < c.payloadSize {
		return fmt.Errorf("ctf: trace %s: event %s: %d-byte payload, want %d", w.dir, c.name, len(rec.Payload), c.payloadSize)
	}
	b, ts, err := w.room(0, c, rec.Context.TimestampNs)
	if err != nil {
		return err
	}
	c.encode(b, ts, rec.Context.Vtid, rec.Context.Goid, rec.Payload)
	return nil
}

// WriteEvent adds an event a ChannelReader decoded to the stream of its
// ring, declaring its layout the first time: for a tool that writes the
// records of another process's session, with payload bytes copied as
// they are. The events of one Writer must come from one channel (their
// layout indexes are that channel's).
func (w *Writer) WriteEvent(ev *tracepoint.Event) error {
	tag := int(ev.Index)<<2 | int(ev.Has&3)
	var c *eventClass
	if tag < len(w.byTag) {
		c = w.byTag[tag]
	}
	if c == nil || c.info != ev.Info {
		if ev.Info == nil {
			return fmt.Errorf("ctf: trace %s: event of no layout", w.dir)
		}
		var err error
		if c, err = w.declare(*ev.Info, ev.Has); err != nil {
			return err
		}
		c.info = ev.Info
		for len(w.byTag) <= tag {
			w.byTag = append(w.byTag, nil)
		}
		w.byTag[tag] = c
	}
	if len(ev.Body) != 8+c.ctx+c.payloadSize {
		return fmt.Errorf("ctf: trace %s: event %s: %d-byte record, want %d", w.dir, c.name, len(ev.Body), 8+c.ctx+c.payloadSize)
	}
	b, ts, err := w.room(ev.Shard, c, ev.TimestampNs)
	if err != nil {
		return err
	}
	c.encodeBody(b, ts, ev.Body)
	return nil
}

// declare adds an event class for info with context fields has and
// rewrites the metadata, so that packets written from now on, which may
// hold its events, are readable.
func (w *Writer) declare(info tracepoint.Info, has tracepoint.Collected) (*eventClass, error) {
	if err := w.usable(); err != nil {
		return nil, err
	}
	c, err := newEventClass(uint32(len(w.classes)), info, has)
	if err != nil {
		return nil, fmt.Errorf("ctf: trace %s: %w", w.dir, err)
	}
	if c.size > w.cfg.packetSize-packetHeaderSize {
		return nil, fmt.Errorf("ctf: trace %s: event %s: %d bytes do not fit in a %d-byte packet (see PacketSize): %w",
			w.dir, c.name, c.size, w.cfg.packetSize, ErrLayout)
	}
	w.classes = append(w.classes, c)
	if err := w.writeMetadata(); err != nil {
		w.classes = w.classes[:len(w.classes)-1]
		return nil, err
	}
	return c, nil
}

// room returns the zeroed bytes of the next event of class c in stream i,
// flushing the packet first when the event does not fit, and the
// timestamp it gets (ts, or the stream's last if that is later).
func (w *Writer) room(i int, c *eventClass, ts uint64) ([]byte, uint64, error) {
	if err := w.usable(); err != nil {
		return nil, 0, err
	}
	s, err := w.stream(i)
	if err != nil {
		return nil, 0, err
	}
	at := align(s.pos, eventAlign)
	if at+c.size > len(s.packet) {
		if err := w.flush(s, true); err != nil {
			return nil, 0, err
		}
		at = s.pos
	}
	ts = max(ts, s.last)
	if s.events == 0 {
		s.begin = ts
	}
	s.end, s.last = ts, ts
	s.events++
	s.pos = at + c.size
	return s.packet[at:s.pos], ts, nil
}

// SetDiscarded says that total events meant for stream i were lost before
// they reached the writer (a ring's drops): readers report them between
// the packet written last and the one being filled. Totals only grow.
func (w *Writer) SetDiscarded(i int, total uint64) error {
	s, err := w.stream(i)
	if err != nil {
		return err
	}
	s.discarded = max(s.discarded, total)
	return nil
}

// Written is the size of the stream files so far, in bytes.
func (w *Writer) Written() int64 { return w.written }

// Flush writes the packets being filled, if they hold events, trimmed to
// their content: the trace on disk then holds every event written so far.
// A writer flushes by itself as packets fill.
func (w *Writer) Flush() error {
	if err := w.usable(); err != nil {
		return err
	}
	for _, s := range w.streams {
		if s != nil {
			if err := w.flush(s, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush writes a stream's packet out: full-size (padded with zeros) when
// full, else trimmed to its content, and starts the next one.
func (w *Writer) flush(s *stream, full bool) error {
	if s.events == 0 && s.discarded == s.flushedDiscarded {
		return nil
	}
	size := s.pos
	if full {
		size = len(s.packet)
	}
	h := packetHeader{
		Magic:          Magic,
		UUID:           w.info.uuid,
		StreamID:       w.info.streamID,
		TimestampBegin: s.begin,
		TimestampEnd:   s.end,
		ContentSize:    uint64(s.pos) * 8,
		PacketSize:     uint64(size) * 8,
		SeqNum:         s.seq,
		Discarded:      s.discarded,
	}
	if s.events == 0 { // a packet only to report discarded events
		h.TimestampBegin, h.TimestampEnd = s.last, s.last
	}
	if s.seq == 0 && s.discarded > 0 {
		// Readers count the events lost before a packet from the
		// previous packet's count: with none, they say only that
		// events may have been lost. An empty packet first, which lost
		// none, makes the count exact.
		var empty [packetHeaderSize]byte
		e := h
		e.TimestampEnd = e.TimestampBegin
		e.ContentSize, e.PacketSize, e.Discarded = packetHeaderSize*8, packetHeaderSize*8, 0
		e.put(empty[:])
		if err := w.writePacket(s, empty[:]); err != nil {
			return err
		}
		h.SeqNum = s.seq
	}
	h.put(s.packet)
	if err := w.writePacket(s, s.packet[:size]); err != nil {
		return err
	}
	s.flushedDiscarded = s.discarded
	clear(s.packet[:s.pos])
	s.pos, s.events = packetHeaderSize, 0
	return nil
}

// writePacket writes packet number s.seq to the stream's file. A failed
// write leaves the file unreadable past it: the writer stops.
func (w *Writer) writePacket(s *stream, b []byte) error {
	if _, err := s.f.Write(b); err != nil {
		w.err = fmt.Errorf("ctf: trace %s: packet %d: %w", w.dir, s.seq, err)
		return w.err
	}
	s.seq++
	w.written += int64(len(b))
	return nil
}

// usable returns the writer's error, if a write failed or it is closed.
func (w *Writer) usable() error {
	if w.closed {
		return fmt.Errorf("ctf: trace %s: %w", w.dir, ErrClosed)
	}
	return w.err
}

// Close writes the last packets, trimmed to their content, and the final
// metadata, and closes the stream files. The trace is then complete.
// Close is idempotent.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	err := w.err
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = w.writeMetadata()
	}
	w.closed = true
	for _, s := range w.streams {
		if s == nil {
			continue
		}
		if cerr := s.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("ctf: trace %s: %w", w.dir, cerr)
		}
		s.packet = nil
	}
	if w.out != nil {
		w.out.Close()
	}
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
